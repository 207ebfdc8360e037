// A plugin dlopen()ed and created through the C ABI exactly as a host would,
// with gtest helpers for statuses. Shared by the plugin tests.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ampx/backend_api.h"
#include "node_builder.hpp"

namespace ampx::test {

// dlopen()s a plugin, creates an instance; everything released at the end.
class Plugin {
 public:
  explicit Plugin(const std::string& path, const char* options = nullptr) {
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto entry = reinterpret_cast<ampx_plugin_entry_fn>(dlsym(lib_, AMPX_PLUGIN_ENTRY_SYMBOL));
    if (!entry) throw std::runtime_error("no entry symbol");
    api = entry();
    ampx_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.log_level = 6;
    args.options = options;
    ok(api->plugin_create(&args, &plugin));
  }
  ~Plugin() {
    if (plugin) api->plugin_destroy(plugin);
    if (lib_) dlclose(lib_);
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // Fails the test on a non-NULL status (and releases it).
  void ok(ampx_status* s) const {
    if (s) {
      ADD_FAILURE() << "status " << api->status_code(s) << ": " << api->status_message(s);
      api->status_destroy(s);
    }
  }
  // Expects a non-NULL status of `code` whose message contains `part`.
  void fails(ampx_status* s, ampx_status_code code, const std::string& part = "") const {
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(api->status_code(s), code);
    const std::string msg = api->status_message(s);
    EXPECT_FALSE(msg.empty());
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    api->status_destroy(s);
  }

  ampx_capability capability(NodeBuilder& b) const {
    ampx_capability cap{};
    cap.struct_size = sizeof cap;
    ok(api->query_capability(plugin, 0, &b.desc(), &cap));
    return cap;
  }

  const ampx_plugin_api* api = nullptr;
  ampx_plugin* plugin = nullptr;

 private:
  void* lib_ = nullptr;
};

}  // namespace ampx::test
