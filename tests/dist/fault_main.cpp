// ampx_dist_fault: training-like traffic on every rank until one rank, the
// victim, stops answering (issue 41's faults; fault_test.sh drives it under
// mpirun). Each step does what the trainer's will: non-blocking f32 and f16
// bucket sums with test() between pieces of local work, wait(), then small
// blocking sum, max, all_true and all_equal. At step 20 the victim raises
// SIGKILL (a crash, kill -9) or SIGSTOP (a stall) on itself, after writing
// its pid to DIR/victim.pid (the driver kills a stopped one at the end).
//
// A survivor's communicator must throw RankLost or CommTimeout within the
// bound; it prints that one line to stderr, checks that a further call
// rethrows at once (the communicator stays unusable), writes its exit code
// to DIR/rank<R>.exit (mpirun --enable-recovery exits 0 whatever the ranks
// return), with the time it caught the error (DIR/rank<R>.ms, against the
// victim's DIR/victim.ms), and exits 3. A run that ends without a fault
// exits 0.
//
//   ampx_dist_fault --victim R --signal kill|stop --timeout-ms T --dir DIR
#include <ampx/dist/communicator.hpp>
#include <ampx/dist/dist_error.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/half.hpp>

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace ampx::dist;

struct Args {
  int victim = 1;
  int signal = SIGKILL;
  std::chrono::milliseconds timeout{60000};
  std::string dir = ".";
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "ampx_dist_fault: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: ampx_dist_fault --victim R --signal kill|stop --timeout-ms T --dir DIR\n");
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage(key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--victim") {
      a.victim = std::atoi(value.c_str());
    } else if (key == "--signal") {
      if (value != "kill" && value != "stop") usage("--signal: kill or stop, not " + value);
      a.signal = value == "kill" ? SIGKILL : SIGSTOP;
    } else if (key == "--timeout-ms") {
      a.timeout = std::chrono::milliseconds(std::atol(value.c_str()));
    } else if (key == "--dir") {
      a.dir = value;
    } else {
      usage("unknown argument " + key);
    }
  }
  return a;
}

void write_file(const std::string& path, long long value) {
  std::ofstream(path) << value << "\n";
}

// Wall-clock milliseconds, comparable between the ranks of one machine: the
// driver reports how long after the victim's signal each survivor stopped.
long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One training-like step: two buckets in flight over local work, then the
// small blocking collectives of the update.
void step(Communicator& comm, std::vector<float>& grads, std::vector<uint16_t>& half_grads) {
  PendingAllreduce f32 = comm.start_allreduce_sum(grads);
  PendingAllreduce f16 = comm.start_allreduce_sum(half_grads, ampx::DType::kF16);
  double local = 0.0;
  for (int piece = 0; piece < 8; ++piece) {
    for (int i = 0; i < 2000; ++i) local += static_cast<double>(i) * 1e-9;
    f32.test();
    f16.test();
  }
  f32.wait();
  f16.wait();
  std::vector<float> norm{static_cast<float>(local)};
  comm.allreduce_sum(norm);
  std::vector<float> amax{1.0f, 2.0f};
  comm.allreduce_max(amax);
  comm.all_true(true);
  comm.all_equal(42);
}

}  // namespace

// After the first RankLost or CommTimeout, a further call must rethrow the
// same line at once (the communicator is unusable, nothing waits again).
bool rethrows_at_once(Communicator& comm, const std::string& first) {
  const auto start = std::chrono::steady_clock::now();
  try {
    comm.barrier();
  } catch (const DistError& e) {
    const auto took = std::chrono::steady_clock::now() - start;
    return e.what() == first && took < std::chrono::milliseconds(100);
  }
  return false;
}

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  MpiRuntime runtime;
  std::optional<Communicator> comm;
  int code = 0;
  long long caught = 0;
  try {
    comm.emplace(runtime, CommunicatorOptions{.timeout = args.timeout});
    std::vector<float> grads(1 << 16, 1.0f);
    std::vector<uint16_t> half_grads(1 << 16, ampx::float_to_f16_bits(1.0f));
    for (int s = 0; s < 200; ++s) {
      if (comm->rank() == args.victim && s == 20) {
        write_file(args.dir + "/victim.pid", static_cast<long long>(getpid()));
        write_file(args.dir + "/victim.ms", now_ms());
        std::raise(args.signal);
      }
      step(*comm, grads, half_grads);
    }
  } catch (const DistError& e) {
    caught = now_ms();
    std::fprintf(stderr, "%s\n", e.what());
    std::fflush(stderr);
    code = 3;
    if (comm && !rethrows_at_once(*comm, e.what())) {
      std::fprintf(stderr,
                   "ampx_dist_fault: a call after the failure did not rethrow it at once\n");
      code = 4;
    }
  }
  if (comm) {
    const std::string rank = std::to_string(comm->rank());
    if (code != 0) write_file(args.dir + "/rank" + rank + ".ms", caught);
    write_file(args.dir + "/rank" + rank + ".exit", code);
  }
  return code;
}
