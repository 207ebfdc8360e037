// docs/OPS.md ("Determinism") promises that a node's bits do not depend on
// the thread count. oneDNN promises no such thing: a primitive may split a
// reduction across threads (the im2col GEMM weight gradient below AVX2, the
// AVX-512 jit one, a GEMM splitting K) and add the per-thread parts, so its
// bits change with the count. Which implementations do depends on the
// oneDNN version, the ISA and the shapes, so the plugin does not keep a list:
// it decides per kernel, at prepare, by construction.
//
// A primitive created and run on one thread cannot depend on the thread
// count: it is the reference. A kernel that would run on more threads is
// also built on one, both are run on the same seeded inputs of the node's
// shapes (floats in [0.5, 1.5), so that every op is defined there; constant
// inputs as the node carries them), and their output bits compared. Equal:
// the threaded kernel is kept. Different: the one-thread kernel is, never
// the reference loop, whose bits differ from the primitive's, so that every
// thread count gives the one-thread primitive's bits.
//
// Not checked, because they cannot differ: one-thread kernels, and the
// data-movement ops (opset::is_data_movement: they copy bytes and compute
// nothing). Pinned unchecked: a node with a non-float input the check would
// have to invent (an LSTM's sequence_lens known only at run time picks the
// kernel's path), as the drawn values would not run the node's path.
//
// The check runs each kernel once on its node's shapes: about a launch at one
// thread and one at the kernel's count, once per prepared kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "ampx/reference/kernels.hpp"
#include "context.hpp"

namespace ampx::onednn {

// Builds the node's kernel to run with `threads` (creating its primitives
// under that count).
using KernelMaker = std::function<std::unique_ptr<reference::CpuKernel>(int threads)>;

// make(threads), or make(1) where that is what keeps the promise above
// (Determinism::kThreadCountFree; with kFastest always make(threads)). Each
// check is counted (Context::count_thread_check); a pinned node is logged
// at info level.
//
// `fill` (optional) gives a non-float input whose values do not change the
// kernel's path a stand-in (Attention's bool mask and nonpad_kv_seqlen:
// attention_kernel.hpp); false, or no `fill`: the node is pinned unchecked.
using InputFill = std::function<bool(size_t slot, void* p)>;
std::unique_ptr<reference::CpuKernel> make_thread_count_free(Context& ctx,
                                                             const plugin_support::NodeView& v,
                                                             int threads, const KernelMaker& make,
                                                             const InputFill& fill = {});

// The check's parts, for a kernel that builds its threaded and one-thread
// versions itself (train_kernels.cpp: a variant per producer layout).
//
// Fills n elements of a float dtype with the check's draws for input
// `slot`, in [0.5, 1.5); false for other dtypes.
bool fill_drawn(ampx_dtype dtype, uint64_t n, uint64_t slot, void* p);
// The first output whose bits differ between the two runs (`many`, `one`:
// each output's buffer, `bytes` its size), or -1; selfcheck_perturb=1
// flips a bit of `many`'s first output first. Counts the check
// (Context::count_thread_check).
int first_differing_output(Context& ctx, std::span<void* const> many, std::span<void* const> one,
                           std::span<const uint64_t> bytes);

}  // namespace ampx::onednn
