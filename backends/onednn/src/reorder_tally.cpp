#include "reorder_tally.hpp"

#include <chrono>

namespace ampx::onednn {

namespace {
thread_local host_plugin::ConversionTotals tls_totals;
}  // namespace

const host_plugin::ConversionTotals& thread_reorder_totals() noexcept {
  return tls_totals;
}

void execute_reorder(dnnl::reorder& r, dnnl::stream& s, dnnl::memory from, dnnl::memory to) {
  const auto t0 = std::chrono::steady_clock::now();
  r.execute(s, from, to);
  s.wait();  // a CPU stream runs it now; the wait keeps the clock honest anyway
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  tls_totals.reorders += 1;
  tls_totals.reorder_us += us;
  if (from.get_desc().data_type() != to.get_desc().data_type()) {
    tls_totals.casts += 1;
    tls_totals.cast_us += us;
  }
}

}  // namespace ampx::onednn
