// Sets (or unsets) an environment variable for its lifetime, restoring the
// old value after: the plugins read their options (AMPX_VULKAN_*,
// AMPX_TEST_*, AMPX_PLUGIN_PATH, ...) when they are created.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace ampx::test {

class ScopedEnv {
 public:
  // nullopt unsets it.
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      setenv(name_.c_str(), value->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  // nullptr unsets it.
  ScopedEnv(std::string name, const char* value)
      : ScopedEnv(std::move(name), value ? std::optional<std::string>(value) : std::nullopt) {}
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace ampx::test
