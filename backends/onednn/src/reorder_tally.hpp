// The reorders the plugin runs around its kernels (layout changes of
// activations, dtype conversions of staged arguments, write-backs of stale
// plain bytes), counted and timed on the calling thread, for the kernel
// reports of profiled runs (ABI 1.4, backend_api.h "Kernel reports").
//
// Running totals per plugin instance (Context::reorder_totals) rather than
// per kernel: a write-back happens in the glue's before_read hook of
// whichever launch reads the value first, not in the kernel that made the
// shadow, and it belongs to that launch's node. The glue takes the
// difference of the totals around each launch
// (host_plugin::CapabilityPolicy::conversions), and a plugin instance is
// used from one host thread at a time, so the difference is that launch's.
// Not thread_local: the plugin is dlopen()ed, so its TLS would be dynamic
// TLS, which LeakSanitizer's tracer faults on at exit (tests/onednn's
// CMakeLists.txt).
// The clock costs two steady_clock reads per reorder: always on.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "ampx/host_plugin.hpp"

namespace ampx::onednn {

// Executes `r` from `from` to `to` (handles, copied as oneDNN takes them
// non-const) on `s`, waits for it, and adds it to `totals` (a cast too
// when the two dtypes differ).
void execute_reorder(host_plugin::ConversionTotals& totals, dnnl::reorder& r, dnnl::stream& s,
                     dnnl::memory from, dnnl::memory to);

}  // namespace ampx::onednn
