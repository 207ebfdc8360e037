// ampx_dist_wire_bench: the time of one gradient bucket's all-reduce by each
// path of the communicator (docs/DISTRIBUTED.md quotes it). Not a test: run
// it by hand under mpirun, rank 0 prints.
//
//   mpirun -np 2 ampx_dist_wire_bench [elements, default 6553600 = 25 MiB of f32]
#include <ampx/dist/communicator.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/half.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

using namespace ampx::dist;

// The median of `repeats` timed calls of `f`, in microseconds, after one
// untimed call (first-touch of the buffers, MPI's connection set-up). A
// barrier before each keeps the ranks' calls aligned.
double median_us(Communicator& comm, int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> us;
  for (int i = 0; i < repeats; ++i) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : size_t{6553600};
  MpiRuntime runtime;
  Communicator comm(runtime);
  std::vector<float> f32(n, 1.0f);
  std::vector<uint16_t> f16(n, ampx::float_to_f16_bits(1.0f));
  const int repeats = 11;
  struct Row {
    const char* what;
    int wire_bytes;
    double us;
  };
  const Row rows[] = {
      {"MPI_Allreduce(f32) on WORLD: MPI's own wait, the reference", 4,
       median_us(comm, repeats,
                 [&] {
                   MPI_Allreduce(MPI_IN_PLACE, f32.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                                 MPI_COMM_WORLD);
                 })},
      {"MPI_Iallreduce(f32) + MPI_Wait on WORLD: the same, non-blocking", 4,
       median_us(comm, repeats,
                 [&] {
                   MPI_Request r = MPI_REQUEST_NULL;
                   MPI_Iallreduce(MPI_IN_PLACE, f32.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                                  MPI_COMM_WORLD, &r);
                   MPI_Wait(&r, MPI_STATUS_IGNORE);
                 })},
      {"allreduce_sum(f32), blocking", 4,
       median_us(comm, repeats, [&] { comm.allreduce_sum(f32); })},
      {"start_allreduce_sum(f32) + wait", 4,
       median_us(comm, repeats, [&] { comm.start_allreduce_sum(f32).wait(); })},
      {"allreduce_sum(u16, f16), blocking: f32 on the wire", 4,
       median_us(comm, repeats, [&] { comm.allreduce_sum(f16, ampx::DType::kF16); })},
      {"start_allreduce_sum(u16, f16) + wait: f16 on the wire", 2,
       median_us(comm, repeats, [&] { comm.start_allreduce_sum(f16, ampx::DType::kF16).wait(); })},
      {"start_allreduce_sum(u16, bf16) + wait: bf16 on the wire", 2,
       median_us(comm, repeats, [&] { comm.start_allreduce_sum(f16, ampx::DType::kBF16).wait(); })},
  };
  if (comm.rank() == 0) {
    std::printf("%zu elements, %d ranks, median of %d\n", n, comm.size(), repeats);
    for (const Row& r : rows) {
      std::printf("  %-66s %d B/element %10.1f us\n", r.what, r.wire_bytes, r.us);
    }
  }
  return 0;
}
