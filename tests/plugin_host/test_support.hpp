// Helpers shared by the plugin host tests.
#pragma once

#include <ampx/plugins/plugin_host.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "scoped_env.hpp"

namespace ampx::plugins::test {

namespace fs = std::filesystem;

inline fs::path broken_dir() {
  return AMPX_BROKEN_PLUGIN_DIR;
}

// libampx_backend_<name>.so in the test plugin directory.
inline fs::path test_plugin(const std::string& name) {
  return broken_dir() / ("libampx_backend_" + name + ".so");
}

// Is this library mapped in the process right now? (RTLD_NOLOAD never loads.)
inline bool is_loaded(const fs::path& file) {
  void* handle = dlopen(fs::absolute(file).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

using ampx::test::ScopedEnv;  // scoped_env.hpp

// A fresh directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ampx_plugin_host_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  // Copies a test plugin in, under `as` (default: its own file name).
  fs::path add(const std::string& plugin, const std::string& as = "") const {
    const fs::path target = path_ / (as.empty() ? test_plugin(plugin).filename().string() : as);
    fs::copy_file(test_plugin(plugin), target);
    return target;
  }

 private:
  fs::path path_;
};

// Hermetic tests: no plugin path or exclusions from the caller's environment.
class PluginHostTest : public ::testing::Test {
 protected:
  ScopedEnv plugin_path_{"AMPX_PLUGIN_PATH", std::nullopt};
  ScopedEnv disable_{"AMPX_DISABLE_PLUGINS", std::nullopt};
};

// Options that search exactly `dirs`.
inline PluginHostOptions only(std::vector<fs::path> dirs) {
  PluginHostOptions options;
  options.extra_dirs = std::move(dirs);
  options.use_env_path = false;
  options.use_default_dirs = false;
  return options;
}

// A one-input, one-output node with f32 tensors of `dims`.
struct TestNode {
  explicit TestNode(const char* op, std::vector<int64_t> shape = {2, 3}) : dims(std::move(shape)) {
    tensor.struct_size = sizeof(tensor);
    tensor.dtype = AMPX_DTYPE_F32;
    tensor.rank = static_cast<int32_t>(dims.size());
    tensor.dims = dims.data();
    node.struct_size = sizeof(node);
    node.op_type = op;
    node.name = "node1";
    node.num_inputs = 1;
    node.inputs = &tensor;
    node.num_outputs = 1;
    node.outputs = &tensor;
  }
  TestNode(const TestNode&) = delete;
  TestNode& operator=(const TestNode&) = delete;

  std::vector<int64_t> dims;
  ampx_tensor_desc tensor{};
  ampx_node_desc node{};
};

}  // namespace ampx::plugins::test
