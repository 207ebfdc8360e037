// main() of the tests that run under mpirun: one MPI runtime over every
// test, GoogleTest's usual output from rank 0, and from the other ranks only
// their failures and a last line, each prefixed with the rank, so that the
// ranks' outputs do not interleave line by line.
#include <ampx/dist/communicator.hpp>
#include <ampx/dist/mpi_runtime.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  // The name is kept here: UnitTest::current_test_info() would take the
  // lock GoogleTest holds while it reports a failure (a self-deadlock).
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d: %s\n", rank_, test_.c_str(),
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    std::fprintf(stderr, "[rank %d] %d tests, %d failed\n", rank_, unit.test_to_run_count(),
                 unit.failed_test_count());
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // MPI is initialised once per process and finalized after the last
  // communicator is gone.
  ampx::dist::MpiRuntime runtime;
  const int rank = ampx::dist::Communicator(runtime).rank();
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    std::unique_ptr<::testing::TestEventListener>(
        listeners.Release(listeners.default_result_printer()));
    listeners.Append(new RankFailurePrinter(rank));  // GoogleTest owns it
  }
  return RUN_ALL_TESTS();
}
