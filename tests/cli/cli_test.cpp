// The ampx binary as a user runs it: outputs, JSON fields, and the one-line
// errors and exit codes for bad arguments.
#include <ampx/plugin_check/op_cases.hpp>
#include <tolerances.hpp>

#include "cli_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

namespace ampx_cli_test {
namespace {

TEST(Cli, DevicesListsCpuRef) {
  const auto r = ampx("devices");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cpu_ref:0"));
  const auto j = json::parse(ampx("devices --format json").out);
  EXPECT_EQ(j["schema"], "ampx.devices/1");
  bool found = false;
  for (const auto& d : j["devices"]) found = found || d["id"] == "cpu_ref:0";
  EXPECT_TRUE(found);
  EXPECT_FALSE(j["devices"][0]["fingerprint"].get<std::string>().empty());
  // Every in-tree plugin documents its options (the ABI 1.2 options
  // extension, filled by the SDK's glue from the plugin's list).
  for (const auto& p : j["plugins"]) {
    std::string keys;
    for (const auto& o : p["options"]) keys += o["key"].get<std::string>() + ",";
    const std::map<std::string, std::string> want{
        {"cpu_ref", "threads,"},
        {"vulkan", "threads,replicas,"},
        {"onednn", "threads,blocked_activations,debug_counters,deterministic,selfcheck_perturb,"},
        {"cuda", "cudnn,threads,"}};
    if (const auto it = want.find(p["name"].get<std::string>()); it != want.end()) {
      EXPECT_EQ(keys, it->second) << p.dump();
    }
  }
  EXPECT_THAT(ampx("devices").out, HasSubstr("option threads=1..4096: "));
}

// --determinism fastest reaches the CPU plugins (deterministic=0, which
// onednn's note names); the default keeps the promise and says nothing.
TEST(Cli, DeterminismFastestReachesThePlugins) {
  const auto plain = ampx("devices");
  ASSERT_EQ(plain.code, 0) << plain.err;
  if (plain.out.find("onednn:0") == std::string::npos) GTEST_SKIP() << "no onednn plugin";
  EXPECT_THAT(plain.out, Not(HasSubstr("determinism off")));
  const auto fast = ampx("--determinism fastest --threads 3 devices");
  ASSERT_EQ(fast.code, 0) << fast.err;
  EXPECT_THAT(fast.out, HasSubstr("3 threads, blocked activations, determinism off"));
  expect_one_line_error(ampx("--determinism sometimes devices"), 2, "--determinism");
}

TEST(Cli, DevicesShowsSkippedPluginsWithReasons) {
  const auto r =
      ampx(std::string("--plugin-dir ") + AMPX_BROKEN_PLUGIN_DIR + " devices --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  std::string reasons;
  for (const auto& s : j["skipped"]) reasons += s["reason"].get<std::string>() + "\n";
  EXPECT_THAT(reasons, HasSubstr("simulated init failure"));
  EXPECT_THAT(reasons, HasSubstr("2.0"));
  bool cpu_ref = false;
  for (const auto& d : j["devices"]) cpu_ref = cpu_ref || d["id"] == "cpu_ref:0";
  EXPECT_TRUE(cpu_ref) << "broken plugins never take the host down";
}

// Plugins that crash, call exit() or hang while loading, enumerating or
// answering a capability query: `ampx devices` lists them as skipped with the
// reason and goes on (the pre-flight child; the hangs are excluded here only
// for time: their 20 s timeout is tested in the plugin host tests).
TEST(Cli, DevicesSurvivesPluginsThatCrashOrExit) {
  const std::string cache = (std::filesystem::temp_directory_path() /
                             ("ampx_cli_preflight_" + std::to_string(getpid()) + ".json"))
                                .string();
  const auto r = ampx(std::string("--plugin-dir ") + AMPX_HOSTILE_PLUGIN_DIR +
                          " --exclude-plugin hostile_hang_query --exclude-plugin "
                          "hostile_launch_hang devices --format json",
                      "AMPX_PREFLIGHT_CACHE='" + cache + "'");
  std::filesystem::remove(cache);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  std::set<std::string> skipped;
  for (const auto& s : j["skipped"])
    if (s["reason"].get<std::string>().find("pre-flight") != std::string::npos)
      skipped.insert(s["name"].get<std::string>());
  for (const char* p : {"hostile_crash_entry", "hostile_exit_entry", "hostile_exit_create",
                        "hostile_abort_create", "hostile_crash_devices", "hostile_crash_query",
                        "hostile_launch_crash", "hostile_launch_oob_256", "hostile_launch_oob_16m",
                        "hostile_throw_devices", "hostile_throw_query"})
    EXPECT_TRUE(skipped.count(p)) << p << "\n" << r.out;
  bool cpu_ref = false;
  for (const auto& d : j["devices"]) cpu_ref = cpu_ref || d["id"] == "cpu_ref:0";
  EXPECT_TRUE(cpu_ref);
}

// `ampx plugin-check` on every in-tree plugin: the ABI and error-path
// checks pass, and every case the plugin answers matches cpu_ref (CUDA
// without a GPU: no devices, no cases, still a pass).
TEST(PluginCheck, InTreePluginsPass) {
  for (const char* name : {"cpu_ref", "onednn", "vulkan", "cuda"}) {
    const std::filesystem::path file = std::filesystem::path(AMPX_PLUGIN_BUILD_DIR) /
                                       (std::string("libampx_backend_") + name + ".so");
    if (!std::filesystem::exists(file)) continue;  // not built here
    // LeakSanitizer's tracer faults on libgomp workers' TLS at exit
    // (tests/onnx/CMakeLists.txt): onednn's run leaves OpenMP workers.
    const auto r = ampx("plugin-check " + file.string() + " --format json", kOnednnLsanEnv);
    ASSERT_EQ(r.code, 0) << name << "\n" << r.out << r.err;
    const auto j = json::parse(r.out);
    EXPECT_EQ(j["schema"], "ampx.plugin_check/1");
    EXPECT_TRUE(j["ok"].get<bool>()) << name;
    for (const auto& c : j["checks"]) {
      EXPECT_TRUE(c["ok"].get<bool>()) << name << " " << c.dump();
    }
    if (j["devices"].get<int>() > 0) {
      EXPECT_FALSE(j["cases"].empty()) << name;
    }
  }
}

// A plugin that answers `native` and returns wrong Relu results: each such
// case is a lie, the rest pass, and the exit status says it failed.
TEST(PluginCheck, ANativeAnswerWithWrongResultsIsALie) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_liar.so --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_FALSE(j["ok"].get<bool>());
  int lies = 0, passed = 0;
  for (const auto& c : j["cases"]) {
    if (c["op"] == "Relu") {
      EXPECT_EQ(c["result"], "LIE") << c.dump();
      ++lies;
    } else if (c["result"] == "pass") {
      ++passed;
    }
  }
  // Every Relu case of the catalogue (the rank edge cases included), in
  // f32, f16 and bf16.
  int relu_cases = 0;
  for (const auto& [name, make] : ampx::check::op_cases::cases()) {
    ampx::check::Rng rng(1);
    ampx::check::op_cases::Case c;
    make(rng, AMPX_DTYPE_F32, c);
    relu_cases += c.nb.op_type() == "Relu" ? 1 : 0;
  }
  EXPECT_GE(relu_cases, 3);
  EXPECT_EQ(lies, 3 * relu_cases);
  EXPECT_GT(passed, 100);
  const auto text = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                         "/libampx_backend_liar.so --op Relu --dtype f32");
  EXPECT_EQ(text.code, 1);
  EXPECT_THAT(text.out, HasSubstr("LIE"));
  EXPECT_THAT(text.out, HasSubstr(std::to_string(relu_cases) + " lies"));
}

// A kernel that writes past its output: the guard bytes after each output
// catch it, with or without AddressSanitizer (which sees no overflow: the
// write lands in the guard, inside the buffer).
TEST(PluginCheck, AnOutOfBoundsKernelIsCaught) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_oob_writer.so --op Relu --dtype f32");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote past the end of output 0 (byte "));
}

#ifdef AMPX_SANITIZE_BUILD

// Kernels that keep memory past kernel_destroy: plugin-check's child unloads
// the plugin after its last step and asks LeakSanitizer what is left.
TEST(PluginCheck, AKernelThatLeaksIsCaughtUnderAsan) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_leaker.so --op Relu --dtype f32");
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("detected memory leaks"));
  EXPECT_THAT(r.err, HasSubstr("Direct leak of"));
}
#endif

// The pure-C c_relu follows every rule plugin-check tests; c_relu_careless
// (no NULL-kernel check, input views read at offset 0, kernels freed
// without a live-handle table) gets failed checks for all three, and the
// checker survives the crashes.
TEST(PluginCheck, NullHandlesAndViewOffsetsAreChecked) {
  const auto good = ampx(std::string("plugin-check ") + AMPX_BROKEN_PLUGIN_DIR +
                         "/libampx_backend_c_relu.so --format json");
  ASSERT_EQ(good.code, 0) << good.out << good.err;
  // c_relu survives NULL and repeated destroys (its live-handle table), and
  // declares f16 accumulation in its numerics extension.
  const auto g = json::parse(good.out);
  std::set<std::string> checks;
  for (const auto& c : g["checks"]) checks.insert(c["check"].get<std::string>());
  EXPECT_TRUE(checks.count("buffer_free of a buffer freed before")) << good.out;
  EXPECT_TRUE(checks.count("kernel_destroy of a kernel destroyed before")) << good.out;
  EXPECT_TRUE(checks.count("status_destroy of a status destroyed before")) << good.out;
  EXPECT_EQ(g["compute_mode"], "f16-accumulate");
  EXPECT_EQ(g["compute_mode_source"], "plugin");
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_c_relu_careless.so --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  const auto j = json::parse(r.out);
  std::map<std::string, std::string> failed;
  for (const auto& c : j["checks"])
    if (!c["ok"].get<bool>()) failed[c["check"]] = c["detail"];
  // SIGSEGV; SIGABRT or an exit status under a sanitizer, which sees it first.
  EXPECT_THAT(failed["kernel_launch of a NULL kernel"], HasSubstr("crashed (")) << r.out;
  EXPECT_TRUE(
      failed.count("Relu reading a view at offset 64, writing one at offset 128, guards kept"))
      << r.out;
  // glibc's double-free abort, or AddressSanitizer's report.
  EXPECT_THAT(failed["kernel_destroy of a kernel destroyed before"], HasSubstr("crashed ("))
      << r.out;
  EXPECT_EQ(failed.size(), 3u) << r.out;
}

// A plugin that crashes while it loads or answers gets a report (the
// checker pre-flights it in a child), not a dead checker.
TEST(PluginCheck, ACrashingPluginGetsAReport) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_hostile_crash_query.so");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("crashed (SIGSEGV) in capability queries"));
  EXPECT_THAT(r.out, HasSubstr("FAIL"));
}

// A directory holding copies of some hostile plugins, and a pre-flight
// cache of its own; both removed at the end.
class HostileDir {
 public:
  explicit HostileDir(std::initializer_list<const char*> plugins)
      : dir_(std::filesystem::temp_directory_path() /
             ("ampx_cli_hostile_" + std::to_string(getpid()) + "_" + std::to_string(++count_))) {
    std::filesystem::create_directories(dir_);
    for (const char* p : plugins) {
      const std::string file = std::string("libampx_backend_") + p + ".so";
      std::filesystem::copy_file(std::filesystem::path(AMPX_HOSTILE_PLUGIN_DIR) / file,
                                 dir_ / file);
    }
  }
  ~HostileDir() { std::filesystem::remove_all(dir_); }
  std::string plugin_dir() const { return "--plugin-dir " + dir_.string() + " "; }
  std::string env() const {
    return "AMPX_PREFLIGHT_CACHE='" + (dir_ / "cache.json").string() + "'";
  }
  std::string file(const char* plugin) const {
    return (dir_ / (std::string("libampx_backend_") + plugin + ".so")).string();
  }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
};

// Kernels that crash, write out of bounds or hang: plugin-check finishes its
// report, each such case a FAIL naming what happened, and exits 1 (it used
// to die with the plugin: 139, or hang).
TEST(PluginCheck, KernelsThatCrashOrWriteOutOfBoundsGetFailLines) {
  const HostileDir dir({"hostile_launch_crash", "hostile_launch_oob_256", "hostile_launch_oob_16m",
                        "hostile_launch_hang"});
  const std::map<std::string, std::vector<std::string>> want{
      {"hostile_launch_crash", {"crashed (SIGSEGV) in kernel_launch"}},
      {"hostile_launch_oob_256", {"wrote past the end of output 0 (byte 1 after it changed)"}},
      // Runs off the heap (a crash) or lands in the guard bytes; under
      // AddressSanitizer, its report and exit.
      {"hostile_launch_oob_16m", {"crashed (", "wrote past the end of output 0", "exited ("}},
  };
  for (const auto& [plugin, messages] : want) {
    const auto r = ampx("plugin-check " + dir.file(plugin.c_str()) +
                        " --op Relu --op Add --dtype f32 --format json");
    EXPECT_EQ(r.code, 1) << plugin << "\n" << r.out << r.err;
    const auto j = json::parse(r.out);  // the whole report came
    int failed = 0;
    for (const auto& c : j["cases"]) {
      EXPECT_EQ(c["result"], "FAIL") << plugin << " " << c.dump();
      const std::string m = c.value("message", "");
      bool named = false;
      for (const std::string& w : messages) named = named || m.find(w) != std::string::npos;
      EXPECT_TRUE(named) << plugin << " " << c.dump();
      ++failed;
    }
    EXPECT_GE(failed, 4) << plugin;  // Relu and Add cases, each its own FAIL
  }
  // The text report goes on to its summary after the crashes.
  const auto text = ampx("plugin-check " + dir.file("hostile_launch_crash") + " --op Relu");
  EXPECT_EQ(text.code, 1);
  EXPECT_THAT(text.out, HasSubstr("crashed (SIGSEGV) in kernel_launch"));
  EXPECT_THAT(text.out, HasSubstr("summary: hostile_launch_crash"));
  // A hang is killed at --timeout; after three, the rest is not run.
  const auto hang = ampx("plugin-check " + dir.file("hostile_launch_hang") +
                         " --op Relu --dtype f32 --timeout 1 --format json");
  EXPECT_EQ(hang.code, 1) << hang.err;
  const auto h = json::parse(hang.out);
  std::string messages;
  for (const auto& c : h["cases"]) messages += c.value("message", "") + "\n";
  EXPECT_THAT(messages, HasSubstr("hung (killed after 1 s) in kernel_launch"));
}

// A vendor's plugin built against ABI 1.0 that follows 1.0's rules: the
// rules ABI 1.3 added (repeated destroys, a failed prepare's NULL out
// handle) are advice, not failures; a 1.3 plugin is still failed on them
// (c_relu_careless, above).
TEST(PluginCheck, APluginIsHeldToTheRulesOfItsOwnAbi) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                      "/libampx_backend_c_relu_abi10.so --format json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["abi"], "1.0");
  std::set<std::string> advice;
  for (const auto& c : j["checks"]) {
    if (c.value("advice", false)) {
      advice.insert(c["check"].get<std::string>());
      EXPECT_EQ(c["since"], "1.3") << c.dump();
    } else {
      EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    }
  }
  EXPECT_EQ(advice, (std::set<std::string>{"status_destroy of a status destroyed before",
                                           "plugin_destroy of an instance destroyed before",
                                           "buffer_free of a buffer freed before",
                                           "kernel_destroy of a kernel destroyed before",
                                           "kernel_prepare that failed left its out handle NULL"}))
      << r.out;
  const auto text = ampx(std::string("plugin-check ") + AMPX_HOSTILE_PLUGIN_DIR +
                         "/libampx_backend_c_relu_abi10.so");
  EXPECT_EQ(text.code, 0);
  EXPECT_THAT(text.out, HasSubstr("not required before 1.3"));
  EXPECT_THAT(text.out, HasSubstr("0 ABI/error-path failures, 5 advice"));
  EXPECT_THAT(text.out, HasSubstr("PASS"));
}

// --compute-mode f16-accumulate holds f16 results to the op set's looser
// f16-accumulation bar, leaves the other dtypes' bars, and says so.
TEST(PluginCheck, ComputeModeSetsTheTolerance) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_PLUGIN_BUILD_DIR +
                      "/libampx_backend_cpu_ref.so --op Gemm --dtype f16 --dtype bf16 "
                      "--compute-mode f16-accumulate --format json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["compute_mode"], "f16-accumulate");
  EXPECT_EQ(j["compute_mode_source"], "command-line");
  ASSERT_FALSE(j["cases"].empty());
  for (const auto& c : j["cases"]) {
    const double want =
        c["dtype"] == "f16"
            ? ampx::opset::tolerance(AMPX_DTYPE_F16, ampx::opset::ComputeMode::kF16Accumulate)
            : ampx::opset::tolerance(AMPX_DTYPE_BF16);
    EXPECT_EQ(c["tolerance"].get<double>(), want) << c.dump();
  }
  // Without the option: what cpu_ref declares (the SDK glue publishes its
  // f32 accumulation), the op set's bar.
  const auto d = ampx(std::string("plugin-check ") + AMPX_PLUGIN_BUILD_DIR +
                      "/libampx_backend_cpu_ref.so --op Relu --dtype f16 --format json");
  ASSERT_EQ(d.code, 0) << d.out << d.err;
  const auto dj = json::parse(d.out);
  EXPECT_EQ(dj["compute_mode"], "f32-accumulate");
  EXPECT_EQ(dj["compute_mode_source"], "plugin");
  const auto bad = ampx(std::string("plugin-check ") + AMPX_PLUGIN_BUILD_DIR +
                        "/libampx_backend_cpu_ref.so --compute-mode fast");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--compute-mode 'fast'"));
}

// --perf times every run case on the plugin, on cpu_ref and, where it is
// built, on the oneDNN plugin as the fast CPU peer (no timing is asserted).
TEST(PluginCheck, PerfTimesThePeerToo) {
  const auto r = ampx(std::string("plugin-check ") + AMPX_PLUGIN_BUILD_DIR +
                          "/libampx_backend_cpu_ref.so --op Gemm --dtype f32 --perf --format json",
                      kOnednnLsanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = json::parse(r.out);
  const bool onednn = std::filesystem::exists(std::filesystem::path(AMPX_PLUGIN_BUILD_DIR) /
                                              "libampx_backend_onednn.so");
  EXPECT_EQ(j["peer"], onednn ? "onednn" : "");
  int timed = 0, peer_timed = 0;
  for (const auto& c : j["cases"]) {
    timed += c.contains("plugin_us") && c["plugin_us"].get<double>() > 0;
    peer_timed += c.contains("peer_us") && c["peer_us"].get<double>() > 0;
  }
  EXPECT_GT(timed, 0);
  if (onednn) {
    EXPECT_GT(peer_timed, 0);
  }
}

TEST(PluginCheck, BadArgumentsAreOneLineErrors) {
  const auto missing = ampx("plugin-check /nonexistent/libampx_backend_x.so");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("'/nonexistent/libampx_backend_x.so' is not a file"));
  const auto not_a_plugin = ampx(std::string("plugin-check ") + AMPX_CLI_PATH);
  EXPECT_EQ(not_a_plugin.code, 1);
  EXPECT_THAT(not_a_plugin.out, HasSubstr("FAIL"));
  const auto dtype = ampx(std::string("plugin-check ") + AMPX_PLUGIN_BUILD_DIR +
                          "/libampx_backend_cpu_ref.so --dtype f64");
  EXPECT_EQ(dtype.code, 2);
  EXPECT_THAT(dtype.err, HasSubstr("--dtype 'f64'"));
}

// A plugin whose device query throws a C++ exception used to stop every
// command ("C++ exception across the C ABI", no plugin named): it is skipped,
// named, with what it did, and cpu_ref plans as before; with or without the
// pre-flight.
TEST(Cli, PluginsThatThrowAreSkippedAndNamed) {
  const HostileDir dir({"hostile_throw_devices", "hostile_throw_query"});
  for (const char* trust : {"", "--trust-plugins "}) {
    const auto plan =
        ampx(dir.plugin_dir() + trust + "plan builtin:mlp --device cpu_ref:0", dir.env());
    EXPECT_EQ(plan.code, 0) << trust << plan.err;
  }
  const auto r = ampx(dir.plugin_dir() + "devices --format json", dir.env());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  std::map<std::string, std::string> skipped;
  for (const auto& s : j["skipped"])
    skipped[s["name"].get<std::string>()] = s["reason"].get<std::string>();
  EXPECT_THAT(skipped["hostile_throw_devices"],
              HasSubstr("device_props(0) threw a C++ exception across the C ABI (device_props is "
                        "not implemented)"));
  EXPECT_THAT(skipped["hostile_throw_query"],
              HasSubstr("query_capability threw a C++ exception across the C ABI"));
}

// Plugins whose kernels crash, write out of bounds or lie: the pre-flight's
// smoke launch skips them, so `run --device auto` runs (it used to die with
// 139 or 134), and asking for such a device says why it is not there.
TEST(Cli, RunSkipsPluginsWhoseKernelsCrashOrLie) {
  const HostileDir dir(
      {"hostile_launch_crash", "hostile_launch_oob_256", "hostile_launch_oob_16m", "liar"});
  // --device auto runs onednn:0 where it is built.
  const auto run =
      ampx(dir.plugin_dir() + "run builtin:mlp --device auto", dir.env() + " " + kOnednnLsanEnv);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.err,
              HasSubstr("libampx_backend_hostile_launch_crash.so: crashed (SIGSEGV) in a smoke "
                        "launch (Relu f32 on device 0)"));
  EXPECT_THAT(run.err, HasSubstr("libampx_backend_liar.so: failed a smoke launch: Relu f32 on "
                                 "device 0: wrong results"));
  const auto named =
      ampx(dir.plugin_dir() + "run builtin:mlp --device hostile_launch_oob_256:0", dir.env());
  EXPECT_EQ(named.code, 2);
  EXPECT_THAT(
      named.err,
      HasSubstr("ampx: error: --device 'hostile_launch_oob_256:0': unknown device "
                "'hostile_launch_oob_256:0': plugin hostile_launch_oob_256 was skipped: "
                "libampx_backend_hostile_launch_oob_256.so: failed a smoke launch: Relu f32 "
                "on device 0: wrote outside its output"));
}

TEST(Cli, PlanO2OnCpuRefIsNoNativeKernelOutsideTheBlackList) {
  const auto r = ampx("plan builtin:cnn --amp O2 --device cpu_ref:0 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "ampx.plan/1");
  for (const auto& n : j["nodes"]) {
    EXPECT_EQ(n["effective"], "f32") << n["name"];
    if (n["op"] == "BatchNorm") {
      EXPECT_EQ(n["intended"], "f32");
      EXPECT_EQ(n["reason"], "black-list");
    } else if (n["op"] == "Flatten") {  // data movement follows its f32 input
      EXPECT_EQ(n["intended"], "f32");
      EXPECT_EQ(n["reason"], "follows-input");
    } else {
      EXPECT_EQ(n["intended"], "f16") << n["name"];
      EXPECT_EQ(n["reason"], "no-native-kernel") << n["name"];
    }
  }
  EXPECT_EQ(j["casts"].size(), 0u);
  EXPECT_EQ(j["summary"]["effective_16bit"], 0);
  const auto text = ampx("plan builtin:cnn --amp O2 --device cpu_ref:0");
  EXPECT_THAT(text.out, HasSubstr("no-native-kernel"));
  EXPECT_THAT(text.out, HasSubstr("summary:"));
}

TEST(Cli, PlanO2OnANativeDeviceGoes16BitWithMinimalCasts) {
  const auto r =
      ampx(kTestDir + " plan builtin:cnn --amp O2 --device test_native:0 --format json", kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  for (const auto& n : j["nodes"])
    EXPECT_EQ(n["effective"], n["op"] == "BatchNorm" ? "f32" : "f16") << n["name"];
  int activation_casts = 0;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& c : j["casts"]) {
    EXPECT_TRUE(seen.insert({c["value"].get<std::string>(), c["to"].get<std::string>()}).second)
        << "one Cast per value and dtype";
    activation_casts += c["on_constant"].get<bool>() ? 0 : 1;
  }
  EXPECT_EQ(activation_casts, 6);
}

TEST(Cli, KeepFp32OverridesANode) {
  const auto r = ampx(
      kTestDir +
          " plan builtin:mlp --amp O3 --device test_native:0 --keep-fp32 fc2 relu* --format json",
      kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);  // outlives the loop: a temporary would not
  for (const auto& n : j["nodes"]) {
    const std::string name = n["name"];
    const bool kept = name == "fc2" || name.starts_with("relu");
    EXPECT_EQ(n["effective"], kept ? "f32" : "f16") << name;
    if (kept) {
      EXPECT_EQ(n["reason"], "override");
    }
  }
}

// --per-node and --trace: every kernel timed with its prediction, as JSON
// and as a trace file; an unwritable trace path is a usage error before
// anything runs.
TEST(Cli, RunPerNodeAndTrace) {
  const auto dir = std::filesystem::temp_directory_path() / "ampx_cli_trace";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "run.json").string();
  const auto r = ampx("run builtin:mlp --amp O0 --iters 2 --warmup 0 --per-node --trace " + trace +
                      " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  const auto& pn = j["per_node"];
  EXPECT_EQ(pn["timing"], "host");
  ASSERT_EQ(pn["steps"].size(), j["kernels"].get<size_t>());
  for (const auto& s : pn["steps"]) {
    EXPECT_GT(s["measured_us"].get<double>(), 0.0) << s["name"];
    EXPECT_TRUE(s.contains("predicted_us")) << s["name"];
    EXPECT_EQ(s["device"], "cpu_ref:0");
  }
  EXPECT_FALSE(pn["ops"].empty());
  EXPECT_EQ(j["trace"], trace);
  const auto t = json::parse(slurp(trace));
  size_t complete = 0;
  for (const auto& e : t["traceEvents"]) complete += e["ph"] == "X" ? 1 : 0;
  EXPECT_EQ(complete, 2 * j["kernels"].get<size_t>());
  // A 16-bit plan: its Casts are steps too, with the plan's predictions.
  const auto o2 = ampx(kTestDir +
                           " run builtin:mlp --amp O2 --device test_native:0 --iters 1 --warmup 0 "
                           "--per-node --format json",
                       kNative);
  ASSERT_EQ(o2.code, 0) << o2.err;
  int casts = 0;
  const auto j2 = json::parse(o2.out);
  for (const auto& s : j2["per_node"]["steps"]) {
    if (s["op"] != "Cast") continue;
    ++casts;
    EXPECT_GT(s["predicted_us"].get<double>(), 0.0) << s["name"];
    EXPECT_EQ(s["device"], "test_native:0");
  }
  EXPECT_EQ(casts, 2) << "the input to f16 and the output back to f32";
  const auto text = ampx("run builtin:mlp --amp O0 --iters 1 --warmup 0 --per-node");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("per node (median of the profiled runs; timing: host)"));
  EXPECT_THAT(text.out, HasSubstr("per op:"));
  const std::string bad = (dir / "no" / "such" / "dir.json").string();
  expect_one_line_error(ampx("run builtin:mlp --trace " + bad), 2, "--trace '" + bad + "'");
  EXPECT_FALSE(std::filesystem::exists(bad));
  expect_one_line_error(ampx("run builtin:mlp --trace " + dir.string()), 2, "is a directory");
  std::filesystem::remove_all(dir);
}

TEST(Cli, RunReportsTimesAndErrorsAgainstTheReference) {
  const auto r = ampx(
      kTestDir +
          " run builtin:mlp --amp O2 --device test_native:0 --iters 2 --warmup 1 --format json",
      kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_GT(j["median_ms"].get<double>(), 0.0);
  EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
  ASSERT_EQ(j["outputs"].size(), 1u);
  const double err = j["outputs"][0]["max_rel_error"];
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, ampx::test::model_tolerance(AMPX_DTYPE_F16));
  EXPECT_LT(j["memory"]["planned_peak_bytes"].get<uint64_t>(),
            j["memory"]["no_reuse_bytes"].get<uint64_t>());
  // Unfused, the f32 plan on cpu_ref is the reference itself.
  const auto text = ampx("run builtin:cnn --amp O0 --iters 1 --warmup 0 --no-fuse");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("max relative error 0.000e+00"));
  EXPECT_THAT(text.out, HasSubstr("planned peak"));
  EXPECT_THAT(text.out, HasSubstr("fused: none"));
  const auto fused = ampx("run builtin:cnn --amp O0 --iters 1 --warmup 0");
  ASSERT_EQ(fused.code, 0) << fused.err;
  EXPECT_THAT(fused.out, HasSubstr("fused: conv1+bn1+relu1, conv2+bn2+relu2, fc1+relu3"));
}

TEST(Cli, SummaryCoversEveryModelLevelAndDevice) {
  const size_t builtin_models = 4;  // cnn, mlp, encoder, digits-cnn
  const auto r = ampx("summary --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["rows"].size(),
            builtin_models * 4u * json::parse(ampx("devices --format json").out)["devices"].size());
}

TEST(Cli, DtypeAutoFollowsTheDevice) {
  // test_native configured to have native bf16 only.
  auto r = ampx(
      kTestDir + " plan builtin:mlp --amp O2 --device test_native:0 --dtype auto --format json",
      kNative + " AMPX_TEST_NATIVE_DTYPES=bf16");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["dtype"], "bf16");
  EXPECT_EQ(j["dtype_auto"]["bf16_effective"], 7);
  EXPECT_EQ(j["summary"]["effective_16bit"], 7);
  // cpu_ref emulates 16-bit: auto keeps every node f32.
  r = ampx("plan builtin:mlp --amp O2 --device cpu_ref:0 --dtype auto --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_FALSE(j["dtype_auto"]["any_native"].get<bool>());
  EXPECT_EQ(j["summary"]["effective_16bit"], 0);
}

TEST(Cli, BadArgumentsGiveOneLineErrors) {
  expect_one_line_error(ampx("plan builtin:cnn --amp O5"), 2, "unknown amp level 'O5'");
  expect_one_line_error(ampx("plan builtin:cnn --dtype f8"), 2,
                        "--dtype 'f8': expected f16, bf16 or auto");
  expect_one_line_error(ampx("plan builtin:cnn --device cuda:7"), 2, "unknown device 'cuda:7'");
  expect_one_line_error(ampx("plan builtin:cnn --keep-fp32 'a*b'"), 2, "--keep-fp32 'a*b'");
  expect_one_line_error(ampx("plan builtin:cnn --amp O2 --keep-fp32 nosuchnode"), 2,
                        "override 'nosuchnode' matches no node");
  expect_one_line_error(ampx("plan builtin:resnet"), 2, "unknown built-in model 'resnet'");
  expect_one_line_error(ampx("plan model.onnx"), 2, "model 'model.onnx'");
  expect_one_line_error(ampx("plan builtin:cnn --white-list Conv2d,Foo --amp O1"), 2,
                        "--white-list: unknown op 'Foo'");
  expect_one_line_error(ampx("run builtin:cnn --iters 0"), 2, "--iters");
  expect_one_line_error(ampx("frobnicate"), 2, "frobnicate");
  expect_one_line_error(ampx("--log-level loud devices"), 2, "--log-level 'loud'");
  expect_one_line_error(ampx("--threads 0 devices"), 2, "--threads");
  expect_one_line_error(ampx("plan builtin:cnn --device ''"), 2, "--device: must not be empty");
  expect_one_line_error(ampx("report builtin:cnn --no-run --device ''"), 2,
                        "--device: must not be empty");
  expect_one_line_error(ampx("run builtin:mlp --seed -1"), 2, "--seed");
  expect_one_line_error(ampx("plan builtin:mlp --max-tensor-bytes 0"), 2, "--max-tensor-bytes");
  expect_one_line_error(ampx("plan builtin:mlp --max-tensor-bytes 17GiB"), 2, "--max-tensor-bytes");
  EXPECT_EQ(ampx("plan builtin:mlp --max-tensor-bytes 512MiB").code, 0);
  // Choices name the choices, not CLI11's check ("Check yaml value in ...").
  expect_one_line_error(ampx("summary --format yaml"), 2,
                        "--format: 'yaml' is not one of text, json");
  expect_one_line_error(ampx("report builtin:mlp --no-run --format pdf"), 2,
                        "--format: 'pdf' is not one of text, md, json, html");
  EXPECT_EQ(ampx("plan builtin:mlp --format json").code, 0);
  // The database must be a file: /dev/null is not an empty database.
  expect_one_line_error(ampx("db list --db /dev/null"), 1,
                        "is a character device, not a database file");
  // A model path that is a FIFO is named for what it is (and not read: a
  // FIFO would block).
  const std::string fifo =
      testing::TempDir() + "ampx_cli_fifo_" + std::to_string(::getpid()) + ".onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_one_line_error(ampx("plan " + fifo), 2, "is a FIFO, not a regular file");
  expect_one_line_error(ampx("run builtin:mlp --input input=" + fifo), 1,
                        "is a FIFO, not a regular file");
  std::remove(fifo.c_str());
}

// Issue 36: the numbers and names in messages are the right ones. A seed
// is an unsigned 64-bit integer (CLI11 printed a double's 300-digit range
// for -1 and saturated 2^64 to 2^64 - 1); '*' alone says why it is refused;
// a plugin directory that is not one is an error, not silence.
TEST(Cli, SeedsPatternsAndPluginDirsAreCheckedInPlainWords) {
  for (const std::string cmd :
       {"run builtin:mlp --seed -1", "run builtin:mlp --seed 18446744073709551616",
        "tune builtin:mlp --seed 1e3", "train builtin:mlp --seed 0x10"}) {
    const Result r = ampx(cmd);
    expect_one_line_error(r, 2, "is not an integer from 0 to 18446744073709551615");
    EXPECT_LT(r.err.size(), 160u) << r.err;
  }
  EXPECT_EQ(ampx("run builtin:mlp --iters 1 --warmup 0 --seed 18446744073709551615").code, 0);
  expect_one_line_error(ampx("plan builtin:mlp --place '*=nodev:0'"), 2,
                        "--place '*': '*' alone matches every node");
  expect_one_line_error(ampx("plan builtin:mlp --keep-fp32 'a*b'"), 2,
                        "'*' may only end the pattern");
  expect_one_line_error(ampx("--plugin-dir /nonexistent devices"), 2,
                        "--plugin-dir: '/nonexistent' does not exist");
  expect_one_line_error(ampx("--plugin-dir /dev/null devices"), 2,
                        "--plugin-dir: '/dev/null' is not a directory");
}

// Issue 36: a corrupt database was warned about three times in one command
// (every read-only open); once is enough.
TEST(Cli, ACorruptDatabaseIsWarnedAboutOnce) {
  const std::string db =
      testing::TempDir() + "ampx_cli_corrupt_" + std::to_string(::getpid()) + ".db";
  std::ofstream(db, std::ios::binary) << std::string(4096, 'x');
  const Result r = ampx("run builtin:mlp --iters 1 --warmup 0 --db " + db);
  EXPECT_EQ(r.code, 0) << r.err;
  size_t warnings = 0;
  for (size_t at = r.err.find("capability database"); at != std::string::npos;
       at = r.err.find("capability database", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << r.err;
  std::remove(db.c_str());
}

}  // namespace
}  // namespace ampx_cli_test
