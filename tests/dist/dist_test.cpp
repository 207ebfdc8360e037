// frontend/dist under MPI: every test runs on every rank, in the same order,
// and calls each collective on every rank (a rank that skipped one would
// hang the others until ctest's timeout). Expected values are written for
// any number of ranks N: ctest runs the binary under `mpirun -np 2`
// (Dist.TwoRanks) and alone as an MPI singleton (Dist.OneRank, where every
// reduction is the identity). AMPX_DIST_EXPECT_RANKS says how many ranks
// ctest launched: a binary that mpirun started as N singletons (an MPI
// other than the one it was linked with) would pass everything else.
#include <ampx/dist/communicator.hpp>
#include <ampx/dist/dist_error.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/half.hpp>

// White box: the one formatter of the library's error lines and the
// reduction operators (src/).
#include "mpi_call.hpp"
#include "rank_watch.hpp"
#include "reduce_ops.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace ampx::dist {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// FNV-1a over a buffer's bytes: one number per rank to compare with
// all_equal().
uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

class Dist : public ::testing::Test {
 protected:
  Communicator comm;
  int rank = comm.rank();
  int n = comm.size();
};

TEST_F(Dist, RanksAsLaunched) {
  const char* expected = std::getenv("AMPX_DIST_EXPECT_RANKS");
  ASSERT_NE(expected, nullptr) << "ctest sets AMPX_DIST_EXPECT_RANKS";
  EXPECT_EQ(n, std::atoi(expected));
  EXPECT_GE(rank, 0);
  EXPECT_LT(rank, n);
}

TEST_F(Dist, RuntimeIsSharedAndFunneled) {
  MpiRuntime second;  // main() holds the first: this one shares it
  EXPECT_TRUE(second.initialised_here());
  EXPECT_GE(second.thread_level(), 1);
  EXPECT_TRUE(second.on_main_thread());
}

TEST_F(Dist, SumOfRankDependentBuffers) {
  // Rank r holds (r + 1) * (i + 1): the sum is (i + 1) * N (N + 1) / 2, exact.
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((rank + 1) * (i + 1));
  comm.allreduce_sum(v);
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], static_cast<float>((i + 1) * n * (n + 1) / 2)) << "element " << i;
  }
}

TEST_F(Dist, AverageOfRankDependentBuffers) {
  // The average of (r + 1) * (i + 1) over r is (i + 1) (N + 1) / 2: exact for N = 1, 2.
  std::vector<float> v(257);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((rank + 1) * (i + 1));
  comm.allreduce_average(v);
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], static_cast<float>(i + 1) * static_cast<float>(n + 1) / 2.0f)
        << "element " << i;
  }
}

TEST_F(Dist, EveryRankGetsBitIdenticalSums) {
  // Values whose sums round: each rank must still hold the same bits.
  std::vector<float> v(4099);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = std::sin(static_cast<float>(i) * 0.37f + static_cast<float>(rank)) * 1e3f / 3.0f;
  }
  comm.allreduce_sum(v);
  EXPECT_TRUE(comm.all_equal(fnv1a(v.data(), v.size() * sizeof(float))));
}

TEST_F(Dist, EmptyBuffersAreNoOps) {
  std::vector<float> none;
  comm.allreduce_sum(none);
  comm.allreduce_average(none);
  std::vector<uint16_t> none16;
  comm.allreduce_sum(none16, DType::kF16);
  PendingAllreduce p = comm.start_allreduce_sum(none);
  EXPECT_FALSE(p.pending());
  p.wait();
}

TEST_F(Dist, F16SumRoundsOnceFromF32) {
  // Rank r holds 1 + (r + 1) * 2^-10 (each exact in f16): the f32 sum is
  // exact, and its one rounding to f16 is the expected bits.
  std::vector<uint16_t> v(64);
  float sum = 0.0f;
  for (int r = 0; r < n; ++r) sum += 1.0f + static_cast<float>(r + 1) * 0x1p-10f;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = float_to_f16_bits(1.0f + static_cast<float>(rank + 1) * 0x1p-10f);
  }
  comm.allreduce_sum(v, DType::kF16);
  for (uint16_t bits : v) ASSERT_EQ(bits, float_to_f16_bits(sum));
}

TEST_F(Dist, F16SumBeyondItsRangeIsInfinite) {
  // 60000 per rank: infinity in f16 from two ranks on (the finite check's
  // cue), the value itself on one.
  std::vector<uint16_t> v(3, float_to_f16_bits(60000.0f));
  comm.allreduce_sum(v, DType::kF16);
  const float got = f16_bits_to_float(v[0]);
  if (n == 1) {
    EXPECT_EQ(got, 60000.0f);
  } else {
    EXPECT_TRUE(std::isinf(got)) << got;
  }
}

TEST_F(Dist, Bf16AverageDividesInF32) {
  // Rank r holds 3 (r + 1) (exact in bf16); the average 3 (N + 1) / 2 is
  // rounded to bf16 once.
  std::vector<uint16_t> v(17, float_to_bf16_bits(3.0f * static_cast<float>(rank + 1)));
  comm.allreduce_average(v, DType::kBF16);
  const float expected = 3.0f * static_cast<float>(n + 1) / 2.0f;
  for (uint16_t bits : v) ASSERT_EQ(bits, float_to_bf16_bits(expected));
}

TEST_F(Dist, MaxTakesTheLargestOfEveryRank) {
  // Rank r holds (r + 1) * (i - 500) (negatives included): the maximum is
  // N * (i - 500) for i >= 500, (i - 500) below.
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((rank + 1) * (static_cast<int>(i) - 500));
  }
  comm.allreduce_max(v);
  for (size_t i = 0; i < v.size(); ++i) {
    const int d = static_cast<int>(i) - 500;
    ASSERT_EQ(v[i], static_cast<float>(d >= 0 ? n * d : d)) << "element " << i;
  }
}

TEST_F(Dist, MaxLetsANanOfAnyRankWin) {
  // The last rank holds NaN at 0 and infinity at 1, the others 1e30 and 5:
  // NaN and infinity everywhere (amax must see a non-finite value).
  std::vector<float> v{1e30f, 5.0f, static_cast<float>(rank)};
  if (rank == n - 1) {
    v[0] = std::nanf("");
    v[1] = INFINITY;
  }
  comm.allreduce_max(v);
  EXPECT_TRUE(std::isnan(v[0])) << v[0];
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], static_cast<float>(n - 1));
  std::vector<float> none;
  comm.allreduce_max(none);
}

TEST_F(Dist, SixteenBitOnTheWireSums) {
  // Rank r holds 1 + (r + 1) * 2^-10 in f16 and 3 (r + 1) in bf16: with N <=
  // 2 there is at most one hop, so each sum is rounded once, as from f32.
  std::vector<uint16_t> h(4097, float_to_f16_bits(1.0f + static_cast<float>(rank + 1) * 0x1p-10f));
  std::vector<uint16_t> b(33, float_to_bf16_bits(3.0f * static_cast<float>(rank + 1)));
  PendingAllreduce ph = comm.start_allreduce_sum(h, DType::kF16);
  PendingAllreduce pb = comm.start_allreduce_sum(b, DType::kBF16);
  EXPECT_TRUE(ph.pending() || n == 1);
  ph.test();
  ph.wait();
  pb.wait();
  float hsum = 0.0f;
  float bsum = 0.0f;
  for (int r = 0; r < n; ++r) {
    hsum += 1.0f + static_cast<float>(r + 1) * 0x1p-10f;
    bsum += 3.0f * static_cast<float>(r + 1);
  }
  for (uint16_t bits : h) ASSERT_EQ(bits, float_to_f16_bits(hsum));
  for (uint16_t bits : b) ASSERT_EQ(bits, float_to_bf16_bits(bsum));
  EXPECT_TRUE(comm.all_equal(fnv1a(h.data(), h.size() * sizeof(uint16_t))));
}

TEST_F(Dist, SixteenBitOnTheWireOverflowsToInfinity) {
  std::vector<uint16_t> v(5, float_to_f16_bits(60000.0f));
  comm.start_allreduce_sum(v, DType::kF16).wait();
  const float got = f16_bits_to_float(v[0]);
  if (n == 1) {
    EXPECT_EQ(got, 60000.0f);
  } else {
    EXPECT_TRUE(std::isinf(got)) << got;
  }
  std::vector<uint16_t> none;
  EXPECT_FALSE(comm.start_allreduce_sum(none, DType::kBF16).pending());
  EXPECT_THROW(comm.start_allreduce_sum(v, DType::kF32), std::invalid_argument);
}

// The operators alone (MPI_Reduce_local: no other rank), one hop at a time.
TEST(DistReduceOps, SixteenBitSumRoundsAtEachHop) {
  detail::ReduceOps ops;
  auto hop = [](MPI_Op op, uint16_t in, uint16_t inout) {
    EXPECT_EQ(MPI_Reduce_local(&in, &inout, 1, MPI_UINT16_T, op), MPI_SUCCESS);
    return inout;
  };
  // f16 holds only even integers from 2048 to 4096: 2048 + 1 is a tie,
  // rounded to the even 2048 at each hop, so 2048 + 1 + 1 adds up to 2048
  // on the wire where the f32 sum (the blocking call) would give 2050.
  const uint16_t one = float_to_f16_bits(1.0f);
  uint16_t acc = hop(ops.f16_sum(), one, float_to_f16_bits(2048.0f));
  EXPECT_EQ(f16_bits_to_float(acc), 2048.0f);
  acc = hop(ops.f16_sum(), one, acc);
  EXPECT_EQ(f16_bits_to_float(acc), 2048.0f);
  EXPECT_EQ(
      f16_bits_to_float(hop(ops.f16_sum(), float_to_f16_bits(3.0f), float_to_f16_bits(2048.0f))),
      2052.0f);  // 2051: a tie, to the even 2052
  EXPECT_TRUE(std::isinf(f16_bits_to_float(
      hop(ops.f16_sum(), float_to_f16_bits(60000.0f), float_to_f16_bits(60000.0f)))));
  // bf16 (8 significant bits) holds only even integers from 256 to 512.
  EXPECT_EQ(
      bf16_bits_to_float(hop(ops.bf16_sum(), float_to_bf16_bits(1.0f), float_to_bf16_bits(256.0f))),
      256.0f);
  EXPECT_EQ(
      bf16_bits_to_float(hop(ops.bf16_sum(), float_to_bf16_bits(3.0f), float_to_bf16_bits(256.0f))),
      260.0f);
}

// The operators' vector paths (F16C, AVX2 where the CPU has them) against
// the scalar definition, over pseudo-random bit patterns (subnormals,
// infinities, NaNs and overflow among them), some exact zeros, and a length
// that leaves a scalar tail.
void expect_scalar_rounding(MPI_Op op, float (*widen)(uint16_t), uint16_t (*narrow)(float)) {
  const int n = 100003;
  std::vector<uint16_t> a(n);
  std::vector<uint16_t> b(n);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<uint16_t>(state >> 16);
  };
  for (int i = 0; i < n; ++i) {
    a[i] = next();
    b[i] = i % 7 == 0 ? static_cast<uint16_t>(a[i] ^ 0x8000u) : next();
  }
  std::vector<uint16_t> got = b;
  ASSERT_EQ(MPI_Reduce_local(a.data(), got.data(), n, MPI_UINT16_T, op), MPI_SUCCESS);
  for (int i = 0; i < n; ++i) {
    const float sum = widen(a[i]) + widen(b[i]);
    if (std::isnan(sum)) {
      ASSERT_TRUE(std::isnan(widen(got[i]))) << "element " << i;
    } else {
      ASSERT_EQ(got[i], narrow(sum)) << "element " << i << ": " << a[i] << " + " << b[i];
    }
  }
}

TEST(DistReduceOps, SixteenBitSumsAreTheScalarRoundingOnEveryPattern) {
  detail::ReduceOps ops;
  expect_scalar_rounding(ops.f16_sum(), &f16_bits_to_float, &float_to_f16_bits);
  expect_scalar_rounding(ops.bf16_sum(), &bf16_bits_to_float, &float_to_bf16_bits);
}

TEST(DistReduceOps, MaxKeepsANanInEitherOperand) {
  detail::ReduceOps ops;
  auto hop = [&](float in, float inout) {
    EXPECT_EQ(MPI_Reduce_local(&in, &inout, 1, MPI_FLOAT, ops.max_nan()), MPI_SUCCESS);
    return inout;
  };
  EXPECT_TRUE(std::isnan(hop(std::nanf(""), 1.0f)));
  EXPECT_TRUE(std::isnan(hop(1.0f, std::nanf(""))));
  EXPECT_EQ(hop(-3.0f, -7.0f), -3.0f);
  EXPECT_EQ(hop(-INFINITY, 2.0f), 2.0f);
  EXPECT_EQ(hop(INFINITY, 2.0f), INFINITY);
}

TEST_F(Dist, LauncherSeesNoRankLost) {
  // Every rank is running: the process-table query (where PMIx is active:
  // under mpirun, built with PMIx) finds none gone. A barrier first, so
  // that no rank has finished the test binary yet.
  comm.barrier();
  detail::RankWatch watch;
  const auto start = std::chrono::steady_clock::now();
  const auto lost = watch.find_lost();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(lost.has_value()) << "rank " << lost->rank << ": " << lost->state;
  if (std::getenv("AMPX_DIST_PRINT_QUERY_TIME") != nullptr) {
    std::printf("[rank %d] watch active %d, query %.1f us\n", rank, watch.active() ? 1 : 0,
                std::chrono::duration<double, std::micro>(took).count());
  }
  comm.barrier();
}

TEST(DistOptions, TimeoutMustBePositive) {
  EXPECT_THROW(Communicator(MpiRuntime(), {.timeout = std::chrono::milliseconds(0)}),
               std::invalid_argument);
  EXPECT_THROW(Communicator(MpiRuntime(), {.timeout = std::chrono::milliseconds(-5)}),
               std::invalid_argument);
}

TEST_F(Dist, SixteenBitReductionRefusesOtherDtypes) {
  std::vector<uint16_t> v(2);
  EXPECT_THROW(comm.allreduce_sum(v, DType::kF32), std::invalid_argument);
  EXPECT_THROW(comm.allreduce_average(v, DType::kU16), std::invalid_argument);
}

TEST_F(Dist, AllTrueIsLogicalAnd) {
  EXPECT_TRUE(comm.all_true(true));
  EXPECT_FALSE(comm.all_true(false));
  // The last rank alone says false (with one rank, that is rank 0 itself).
  EXPECT_FALSE(comm.all_true(rank != n - 1));
  EXPECT_EQ(comm.all_true(rank == 0), n == 1);
}

TEST_F(Dist, AllEqualComparesEveryRank) {
  EXPECT_TRUE(comm.all_equal(42));
  EXPECT_TRUE(comm.all_equal(~uint64_t{0}));
  EXPECT_EQ(comm.all_equal(static_cast<uint64_t>(rank)), n == 1);
}

TEST_F(Dist, BroadcastCopiesTheRootsBytes) {
  const int root = n - 1;
  std::vector<std::byte> bytes(1001, std::byte{0});
  if (rank == root) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7 + 3);
  }
  comm.broadcast(bytes, root);
  for (size_t i = 0; i < bytes.size(); ++i) {
    ASSERT_EQ(bytes[i], static_cast<std::byte>(i * 7 + 3)) << "byte " << i;
  }
  std::vector<std::byte> none;
  comm.broadcast(none, 0);
}

TEST_F(Dist, BroadcastRefusesBadRootAndUnequalLengths) {
  std::vector<std::byte> bytes(8);
  EXPECT_THROW(comm.broadcast(bytes, n), std::invalid_argument);
  EXPECT_THROW(comm.broadcast(bytes, -1), std::invalid_argument);
  // Rank 0 passes 4 bytes, the others 8: every rank refuses, none hangs.
  std::span<std::byte> mine(bytes.data(), rank == 0 ? 4 : 8);
  if (n == 1) {
    EXPECT_NO_THROW(comm.broadcast(mine, 0));
  } else {
    try {
      comm.broadcast(mine, 0);
      ADD_FAILURE() << "no DistError";
    } catch (const DistError& e) {
      EXPECT_THAT(e.what(), StartsWith("broadcast failed on rank " + std::to_string(rank)));
      EXPECT_THAT(e.what(), HasSubstr("differ in length"));
    }
  }
}

TEST_F(Dist, BarrierReturns) {
  comm.barrier();
}

TEST_F(Dist, NonBlockingSumOverlapsLocalWork) {
  // 4 MiB in flight while this rank computes something of its own, letting
  // MPI progress between pieces of it (as between backward nodes).
  std::vector<float> grads(size_t{1} << 20);
  for (size_t i = 0; i < grads.size(); ++i) {
    grads[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 1000));
  }
  PendingAllreduce pending = comm.start_allreduce_sum(grads);
  EXPECT_TRUE(pending.pending() || n == 1);
  double local = 0.0;
  for (int piece = 0; piece < 64; ++piece) {
    for (int i = 0; i < 20000; ++i) local += std::sqrt(static_cast<double>(piece * 20000 + i));
    pending.test();
  }
  pending.wait();
  EXPECT_FALSE(pending.pending());
  EXPECT_GT(local, 0.0);
  for (size_t i = 0; i < grads.size(); ++i) {
    ASSERT_EQ(grads[i], static_cast<float>(static_cast<int>(i % 1000) * n * (n + 1) / 2))
        << "element " << i;
  }
}

TEST_F(Dist, DestroyedRequestWaits) {
  std::vector<float> v(5000, static_cast<float>(rank + 1));
  { PendingAllreduce pending = comm.start_allreduce_sum(v); }  // no wait(): the destructor's
  for (float x : v) ASSERT_EQ(x, static_cast<float>(n * (n + 1) / 2));
}

TEST_F(Dist, MoveAssignmentWaitsForTheOldRequest) {
  std::vector<float> a(300, 1.0f);
  std::vector<float> b(300, 2.0f);
  PendingAllreduce pending = comm.start_allreduce_sum(a);
  pending = comm.start_allreduce_sum(b);  // a's reduction completes here
  for (float x : a) ASSERT_EQ(x, static_cast<float>(n));
  pending.wait();
  for (float x : b) ASSERT_EQ(x, 2.0f * static_cast<float>(n));
}

TEST_F(Dist, MovedCommunicatorStillReduces) {
  Communicator other(std::move(comm));
  std::vector<float> v(10, 1.0f);
  other.allreduce_sum(v);
  EXPECT_EQ(v[0], static_cast<float>(n));
  EXPECT_EQ(other.rank(), rank);
}

TEST(DistError, RankLostNamesTheRank) {
  const RankLost e("rank 1 of 3 was lost during MPI_Iallreduce on rank 0 (proc aborted by signal)",
                   1);
  EXPECT_EQ(e.lost_rank(), 1);
  const DistError& base = e;  // caught as any DistError too
  EXPECT_THAT(base.what(), StartsWith("rank 1 of 3 was lost"));
}

TEST(DistError, OneLineNamingTheCallAndTheRank) {
  try {
    detail::throw_mpi_error(MPI_ERR_TRUNCATE, "MPI_Allreduce", 1, 2);
    FAIL() << "no exception";
  } catch (const DistError& e) {
    EXPECT_THAT(e.what(), StartsWith("MPI_Allreduce failed on rank 1 of 2: "));
    EXPECT_THAT(e.what(), HasSubstr("TRUNCATE"));  // MPI's own text follows
    EXPECT_THAT(e.what(), Not(HasSubstr("\n")));
  }
}

}  // namespace
}  // namespace ampx::dist
