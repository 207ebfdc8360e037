// Shared by the device tests: a profiled run (Executor::run with a
// RunProfile) computes exactly what a plain run did, has one step per
// kernel, and every kernel was timed by the expected method.
#pragma once

#include <ampx/exec/executor.hpp>

#include <gtest/gtest.h>

#include <span>
#include <vector>

namespace ampx::test {

inline void expect_profiled_run_matches(Executor& exec, std::span<const HostTensor> inputs,
                                        const std::vector<HostTensor>& plain,
                                        plugins::Kernel::TimingMethod method) {
  RunProfile profile;
  const auto out = exec.run(inputs, profile);
  ASSERT_EQ(out.size(), plain.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].data, plain[i].data) << "output " << i;
  ASSERT_EQ(profile.steps.size(), static_cast<size_t>(exec.stats().kernels));
  for (const StepTiming& s : profile.steps) {
    EXPECT_EQ(s.method, method) << s.name;
    EXPECT_GE(s.us, 0.0) << s.name;
    EXPECT_LE(s.us, profile.total_us) << s.name;
  }
}

}  // namespace ampx::test
