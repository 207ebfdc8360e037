// Hot loops written once and compiled twice: for the baseline ISA and, on
// x86-64, for AVX2, chosen at run time. The AVX2 copy performs the same IEEE
// operations in wider lanes and never FMA (the target adds no FMA), so both
// give the same bits. At the baseline (SSE2) the f32 -> f64 conversions of
// UpdateGuard's sum of squares and TensorStats' signed 32-bit maximum (no
// pmaxsd before SSE4.1) made those loops compute-bound, at half the speed.
#pragma once

#include "ampx/reference/kernels.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMPX_REFERENCE_HAVE_AVX2_CLONES 1
// The body of a dispatched loop: inlined into both copies.
#define AMPX_LOOP_BODY [[gnu::always_inline]] inline
#define AMPX_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define AMPX_LOOP_BODY inline
#define AMPX_TARGET_AVX2
#endif

namespace ampx::reference::detail {

// True when the CPU has AVX2, AMPX_CPU_REF_ISA is not "baseline" and
// allow_avx2(false) was not called.
bool use_avx2() noexcept;

}  // namespace ampx::reference::detail
