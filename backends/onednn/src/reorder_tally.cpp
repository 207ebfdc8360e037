#include "reorder_tally.hpp"

#include <chrono>

namespace ampx::onednn {

void execute_reorder(host_plugin::ConversionTotals& totals, dnnl::reorder& r, dnnl::stream& s,
                     dnnl::memory from, dnnl::memory to) {
  const auto t0 = std::chrono::steady_clock::now();
  r.execute(s, from, to);
  s.wait();  // a CPU stream runs it now; the wait keeps the clock honest anyway
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  totals.reorders += 1;
  totals.reorder_us += us;
  if (from.get_desc().data_type() != to.get_desc().data_type()) {
    totals.casts += 1;
    totals.cast_us += us;
  }
}

}  // namespace ampx::onednn
