// The pre-flight (ampx/plugins/preflight.hpp): plugins that crash, hang or
// exit() in loading, creation, enumeration or a capability query are skipped
// with the reason, and the host goes on with the others; verdicts are cached
// per file (and redone when the file changes); `preflight = false` trusts.
#include "test_support.hpp"

#include <gmock/gmock.h>

#include <chrono>
#include <fstream>

namespace ampx::plugins::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

fs::path hostile_dir() {
  return AMPX_HOSTILE_PLUGIN_DIR;
}

const SkippedPlugin* skipped(const PluginHost& host, const std::string& name) {
  for (const SkippedPlugin& s : host.skipped())
    if (s.file.filename() == "libampx_backend_" + name + ".so") return &s;
  return nullptr;
}

struct Expected {
  const char* plugin;
  const char* what;   // what happened
  const char* where;  // in which stage
};

// Each hostile plugin's expected verdict. An exit's status is not checked:
// under the sanitizers, exit() runs LeakSanitizer's check first, which may
// change it.
constexpr Expected kZoo[] = {
    {"hostile_crash_entry", "crashed (SIGSEGV)", "in loading the library"},
    {"hostile_exit_entry", "exited (status", "in loading the library"},
    {"hostile_exit_create", "exited (status", "in plugin_create"},
    {"hostile_abort_create", "crashed (SIGABRT)", "in plugin_create"},
    {"hostile_crash_devices", "crashed (SIGSEGV)", "in plugin_create or device enumeration"},
    {"hostile_crash_query", "crashed (SIGSEGV)", "in capability queries"},
    {"hostile_hang_query", "hung", "in capability queries"},
    // The smoke launch: kernels that would crash, hang or corrupt the host
    // in-process. 16 MiB past the end crashes, or shows in the guard bytes.
    {"hostile_launch_crash", "crashed (SIGSEGV)", "in a smoke launch (Relu f32 on device 0)"},
    {"hostile_launch_hang", "hung", "in a smoke launch (Relu f32 on device 0)"},
    {"hostile_launch_oob_256", "failed a smoke launch: Relu f32 on device 0",
     "wrote outside its output (byte 1 after it changed)"},
    {"hostile_launch_oob_16m", "smoke launch", "Relu f32 on device 0"},
    // A lie (a native Relu off by one) is caught there too.
    {"liar", "failed a smoke launch: Relu f32 on device 0", "wrong results"},
    // C++ exceptions across the C ABI: named, with the call.
    {"hostile_throw_devices", "threw a C++ exception across the C ABI", "device_props(0)"},
    {"hostile_throw_query", "threw a C++ exception across the C ABI", "query_capability"},
};

class PreflightTest : public PluginHostTest {
 protected:
  PluginHostOptions options() const {
    PluginHostOptions o = only({hostile_dir(), broken_dir()});
    o.preflight_cache = cache_.path() / "preflight.json";
    o.preflight_timeout_s = 2;
    return o;
  }
  TempDir cache_;
};

TEST_F(PreflightTest, HostileZooIsSkippedWithTheReasonAndTheRestLoads) {
  const auto start = std::chrono::steady_clock::now();
  const PluginHost host(options());
  const double first_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const Expected& e : kZoo) {
    const SkippedPlugin* s = skipped(host, e.plugin);
    ASSERT_NE(s, nullptr) << e.plugin;
    EXPECT_THAT(s->reason, HasSubstr(e.what)) << e.plugin;
    EXPECT_THAT(s->reason, HasSubstr(e.where)) << e.plugin;
    EXPECT_THAT(s->reason, HasSubstr("(pre-flight; not loaded)")) << e.plugin;
    EXPECT_FALSE(is_loaded(hostile_dir() / ("libampx_backend_" + std::string(e.plugin) + ".so")))
        << e.plugin << " must never be loaded in the host";
  }
  // The good plugins of the other directory still load.
  bool c_relu = false;
  for (const PluginRecord& p : host.plugins()) c_relu = c_relu || p.name == "c_relu";
  EXPECT_TRUE(c_relu);

  // Second time: the verdicts come from the cache, without a child (the
  // hang's timeout is not waited for again).
  const auto again = std::chrono::steady_clock::now();
  const PluginHost cached(options());
  const double second_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
  for (const Expected& e : kZoo) {
    const SkippedPlugin* s = skipped(cached, e.plugin);
    ASSERT_NE(s, nullptr) << e.plugin;
    EXPECT_THAT(s->reason, HasSubstr(e.what)) << e.plugin;
    EXPECT_THAT(s->reason, HasSubstr("cached verdict")) << e.plugin;
  }
  EXPECT_GE(first_s, 2.0);  // the hang waited for its timeout once
  EXPECT_LT(second_s, 2.0) << "cached verdicts must not wait for the timeout";
}

// Without the pre-flight, a plugin whose device query throws a C++
// exception is skipped in-process with its name and the call; the others
// load.
TEST_F(PreflightTest, ATrustedPluginThatThrowsIsSkippedByName) {
  TempDir dir;
  fs::copy_file(hostile_dir() / "libampx_backend_hostile_throw_devices.so",
                dir.path() / "libampx_backend_hostile_throw_devices.so");
  fs::copy_file(test_plugin("c_relu"), dir.path() / "libampx_backend_c_relu.so");
  PluginHostOptions o = only({dir.path()});
  o.preflight = false;
  const PluginHost h(o);
  ASSERT_EQ(h.plugins().size(), 1u);
  EXPECT_EQ(h.plugins()[0].name, "c_relu");
  ASSERT_EQ(h.skipped().size(), 1u);
  EXPECT_EQ(h.skipped()[0].name_hint, "hostile_throw_devices");
  EXPECT_THAT(h.skipped()[0].reason,
              HasSubstr("hostile_throw_devices: device_props(0): threw a C++ exception across the "
                        "C ABI (device_props is not implemented)"));
}

// A trusted plugin whose capability query throws: the query is a
// PluginError naming the plugin, never an exception the host does not know.
TEST_F(PreflightTest, ATrustedQueryThatThrowsIsAPluginError) {
  TempDir dir;
  fs::copy_file(hostile_dir() / "libampx_backend_hostile_throw_query.so",
                dir.path() / "libampx_backend_hostile_throw_query.so");
  PluginHostOptions o = only({dir.path()});
  o.preflight = false;
  const PluginHost h(o);
  ASSERT_EQ(h.devices().size(), 1u);
  const int64_t dims[] = {2, 8};
  const ampx_tensor_desc t{sizeof(ampx_tensor_desc), AMPX_DTYPE_F32, 2, dims, nullptr};
  const ampx_node_desc relu{sizeof(ampx_node_desc), "Relu", "r", 1, &t, 1, &t, 0, nullptr};
  try {
    (void)h.devices()[0].query(relu);
    FAIL() << "no error";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("hostile_throw_query: query_capability(Relu 'r', device 0): "
                                    "threw a C++ exception across the C ABI"));
  }
}

// A device of a plugin the pre-flight skipped: asking for it says why.
TEST_F(PreflightTest, ASkippedPluginsDeviceSaysWhy) {
  TempDir dir;
  fs::copy_file(hostile_dir() / "libampx_backend_hostile_launch_crash.so",
                dir.path() / "libampx_backend_hostile_launch_crash.so");
  PluginHostOptions o = only({dir.path()});
  o.preflight_cache = cache_.path() / "preflight.json";
  const PluginHost h(o);
  try {
    (void)h.device("hostile_launch_crash:0");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown device 'hostile_launch_crash:0': plugin "
                                    "hostile_launch_crash was skipped: "));
    EXPECT_THAT(e.what(), HasSubstr("crashed (SIGSEGV) in a smoke launch"));
  }
}

TEST_F(PreflightTest, AChangedFileIsCheckedAgain) {
  TempDir dir;
  const fs::path file = dir.path() / "libampx_backend_c_relu.so";
  fs::copy_file(test_plugin("c_relu"), file);
  PluginHostOptions o = only({dir.path()});
  o.preflight_cache = cache_.path() / "preflight.json";
  {
    const PluginHost h(o);
    ASSERT_EQ(h.plugins().size(), 1u);
  }
  // The same path, now a crashing plugin: the cached `ok` does not apply.
  fs::remove(file);
  fs::copy_file(hostile_dir() / "libampx_backend_hostile_crash_query.so", file);
  const PluginHost h(o);
  EXPECT_TRUE(h.plugins().empty());
  ASSERT_EQ(h.skipped().size(), 1u);
  EXPECT_THAT(h.skipped()[0].reason, HasSubstr("crashed (SIGSEGV) in capability queries"));
  EXPECT_THAT(h.skipped()[0].reason, Not(HasSubstr("cached")));
}

TEST_F(PreflightTest, AnUnreadableCacheIsReplaced) {
  const fs::path cache = cache_.path() / "preflight.json";
  std::ofstream(cache) << "{ not json";
  PluginHostOptions o = only({broken_dir()});
  o.preflight_cache = cache;
  const PluginHost h(o);
  EXPECT_FALSE(h.plugins().empty());
  std::ifstream in(cache);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("ampx.preflight/1"));
}

TEST_F(PreflightTest, TrustedPluginsSkipThePreflight) {
  // A plugin that crashes only in a capability query loads when trusted
  // (the host does not query at load): proof that no child ran.
  TempDir dir;
  fs::copy_file(hostile_dir() / "libampx_backend_hostile_crash_query.so",
                dir.path() / "libampx_backend_hostile_crash_query.so");
  PluginHostOptions o = only({dir.path()});
  o.preflight = false;
  const PluginHost h(o);
  ASSERT_EQ(h.plugins().size(), 1u);
  EXPECT_EQ(h.plugins()[0].name, "hostile_crash_query");
}

}  // namespace
}  // namespace ampx::plugins::test
