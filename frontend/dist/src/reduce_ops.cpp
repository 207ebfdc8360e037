#include "reduce_ops.hpp"

#include "mpi_call.hpp"

#include <ampx/half.hpp>

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define AMPX_DIST_X86 1
#endif

namespace ampx::dist::detail {
namespace {

#if AMPX_DIST_X86
// x86's F16C converts 8 halves at a time, with the same nearest-even
// rounding, overflow to infinity and subnormals as float_to_f16_bits (only
// a NaN's payload may differ): the scalar conversions would cost the 16-bit
// path more time than its halved bytes save. Returns how many elements it
// did (a multiple of 8).
__attribute__((target("avx,f16c"))) int add_f16_f16c(const uint16_t* a, uint16_t* b, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

// bf16 with AVX2, 8 at a time: widening is a shift, the sum is rounded as
// float_to_bf16_bits does (nearest even by adding 0x7fff plus the kept
// lowest bit; a NaN quieted instead), so the bits are the scalar path's.
__attribute__((target("avx2"))) int add_bf16_avx2(const uint16_t* a, uint16_t* b, int n) {
  const __m256i bias = _mm256_set1_epi32(0x7fff);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  const __m256i infinity = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x00400000);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i xa = _mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))), 16);
    const __m256i xb = _mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i))), 16);
    const __m256i x =
        _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(xa), _mm256_castsi256_ps(xb)));
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(x, 16), one);
    const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(x, bias), lowest_kept);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, magnitude), infinity);
    const __m256i bits =
        _mm256_srli_epi32(_mm256_blendv_epi8(rounded, _mm256_or_si256(x, quiet), nan), 16);
    // 32 -> 16 bits: packus works within 128-bit lanes; the permute joins
    // the two lanes' halves.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i), _mm256_castsi256_si128(packed));
  }
  return i;
}

bool have_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
  }();
  return yes;
}

// Asked on first use, not by a static initialiser. From CPUID itself:
// clang 14 (the fuzz preset's compiler) does not know "f16c" in
// __builtin_cpu_supports. F16C's VEX encoding needs the OS to save the AVX
// state as well (OSXSAVE, and XCR0's SSE and AVX bits).
bool have_f16c() {
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const bool osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1, f16c = (ecx >> 29) & 1;
    if (!osxsave || !avx || !f16c) return false;
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    return (xcr0_lo & 0x6) == 0x6;
  }();
  return yes;
}
#endif

// MPI's user function: inout[i] = in[i] op inout[i]. The datatype is
// MPI_UINT16_T (or MPI_FLOAT for the max); MPI never hands another to an
// operator it was not started with.
void add_f16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  int i = 0;
#if AMPX_DIST_X86
  if (have_f16c()) i = add_f16_f16c(a, b, *len);
#endif
  for (; i < *len; ++i) {
    b[i] = float_to_f16_bits(f16_bits_to_float(a[i]) + f16_bits_to_float(b[i]));
  }
}

void add_bf16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  int i = 0;
#if AMPX_DIST_X86
  if (have_avx2()) i = add_bf16_avx2(a, b, *len);
#endif
  for (; i < *len; ++i) {
    b[i] = float_to_bf16_bits(bf16_bits_to_float(a[i]) + bf16_bits_to_float(b[i]));
  }
}

void max_or_nan(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const float*>(in);
  auto* b = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (std::isnan(a[i]) || a[i] > b[i]) b[i] = a[i];
  }
}

}  // namespace

ReduceOps::ReduceOps() {
  // Commutative: a + b and b + a round alike, as do max(a, b) and max(b, a)
  // (NaN wins either way), so MPI may pick any order.
  try {
    check_mpi(MPI_Op_create(&add_f16, 1, &f16_sum_), "MPI_Op_create", -1, 0);
    check_mpi(MPI_Op_create(&add_bf16, 1, &bf16_sum_), "MPI_Op_create", -1, 0);
    check_mpi(MPI_Op_create(&max_or_nan, 1, &max_nan_), "MPI_Op_create", -1, 0);
  } catch (...) {
    free_all();  // no destructor runs for a constructor that throws
    throw;
  }
}

ReduceOps::~ReduceOps() {
  free_all();
}

void ReduceOps::free_all() {
  for (MPI_Op* op : {&f16_sum_, &bf16_sum_, &max_nan_}) {
    if (*op != MPI_OP_NULL) MPI_Op_free(op);
  }
}

}  // namespace ampx::dist::detail
