// main() of the oneDNN tests. The suite is registered twice
// (tests/onednn/CMakeLists.txt): as it is, and with names ending in `.avx2`
// under ONEDNN_MAX_CPU_ISA=AVX2, so the AVX2 code paths stay covered on CPUs
// with AVX-512 or AMX. The variable can only lower the ISA: on a CPU without
// AVX-512 the capped run would repeat the default one exactly, so it exits
// with kSkipped, which ctest reports as skipped (SKIP_RETURN_CODE).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kSkipped = 77;

// Newer than AVX2 as far as oneDNN 2.6 is concerned: AVX-512 (every
// avx512_core* ISA, AMX included, has avx512f) or AVX-VNNI (avx2_vnni).
bool cpu_newer_than_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") || __builtin_cpu_supports("avxvnni");
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* cap = std::getenv("AMPX_TEST_ONEDNN_ISA_CAP");
  if (cap != nullptr && !::testing::GTEST_FLAG(list_tests) && !cpu_newer_than_avx2()) {
    std::printf(
        "skipped: this CPU has no AVX-512 or AVX-VNNI, so ONEDNN_MAX_CPU_ISA=%s changes "
        "nothing and the default run already covers this path\n",
        cap);
    return kSkipped;
  }
  return RUN_ALL_TESTS();
}
