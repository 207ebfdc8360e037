// Discovery, validation, exclusion and the device registry.
#include "test_support.hpp"

#include <ampx/plugins/discovery.hpp>

#include <gmock/gmock.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>
#include <optional>

#include <sys/wait.h>
#include <unistd.h>

namespace ampx::plugins::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const SkippedPlugin* find_skipped(const PluginHost& host, const std::string& file_name) {
  for (const SkippedPlugin& s : host.skipped()) {
    if (s.file.filename() == file_name) return &s;
  }
  return nullptr;
}

const PluginRecord* find_plugin(const PluginHost& host, const std::string& name) {
  for (const PluginRecord& p : host.plugins()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> plugin_names(const PluginHost& host) {
  std::vector<std::string> names;
  for (const PluginRecord& p : host.plugins()) names.push_back(p.name);
  return names;
}

std::vector<std::string> device_ids(const PluginHost& host) {
  std::vector<std::string> ids;
  for (const Device& d : host.devices()) ids.push_back(d.id());
  return ids;
}

using DiscoveryTest = PluginHostTest;

TEST_F(DiscoveryTest, BrokenDirLoadsTheGoodAndSkipsTheBad) {
  const PluginHost host(only({broken_dir()}));

  // Sorted by file name within the directory.
  EXPECT_THAT(plugin_names(host), ElementsAre("c_future", "c_minimal", "c_old", "c_relu"));
  EXPECT_THAT(device_ids(host),
              ElementsAre("c_future:0", "c_minimal:0", "c_old:0", "c_relu:0", "c_relu:1"));
  ASSERT_EQ(host.skipped().size(), 9u);

  const SkippedPlugin* ext = find_skipped(host, "libampx_backend_broken_ext.so");
  ASSERT_NE(ext, nullptr);
  EXPECT_THAT(ext->reason, HasSubstr("extension chain longer than"));

  const SkippedPlugin* abi = find_skipped(host, "libampx_backend_broken_abi.so");
  ASSERT_NE(abi, nullptr);
  EXPECT_EQ(abi->reason, "libampx_backend_broken_abi.so: plugin ABI 2.0, host ABI 1." +
                             std::to_string(AMPX_ABI_VERSION_MINOR));
  EXPECT_EQ(abi->name_hint, "broken_abi");
  EXPECT_EQ(abi->file, test_plugin("broken_abi"));

  const SkippedPlugin* small = find_skipped(host, "libampx_backend_broken_small.so");
  ASSERT_NE(small, nullptr);
  EXPECT_THAT(small->reason, HasSubstr("libampx_backend_broken_small.so"));
  EXPECT_THAT(small->reason, HasSubstr("function table struct_size 24 is smaller than the v1 "
                                       "minimum " +
                                       std::to_string(AMPX_PLUGIN_API_MIN_SIZE_V1)));

  const SkippedPlugin* init = find_skipped(host, "libampx_backend_broken_init.so");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->reason,
            "libampx_backend_broken_init.so: broken_init: plugin_create: simulated init failure");
  EXPECT_EQ(init->name_hint, "broken_init");

  const SkippedPlugin* noentry = find_skipped(host, "libampx_backend_broken_noentry.so");
  ASSERT_NE(noentry, nullptr);
  EXPECT_EQ(noentry->reason,
            "libampx_backend_broken_noentry.so: no entry symbol '" AMPX_PLUGIN_ENTRY_SYMBOL "'");

  const SkippedPlugin* entry_null = find_skipped(host, "libampx_backend_broken_entry_null.so");
  ASSERT_NE(entry_null, nullptr);
  EXPECT_EQ(entry_null->reason,
            "libampx_backend_broken_entry_null.so: " AMPX_PLUGIN_ENTRY_SYMBOL " returned NULL");

  const SkippedPlugin* null = find_skipped(host, "libampx_backend_broken_null.so");
  ASSERT_NE(null, nullptr);
  EXPECT_THAT(null->reason, HasSubstr("required member 'kernel_launch' is NULL"));

  const SkippedPlugin* name = find_skipped(host, "libampx_backend_broken_name.so");
  ASSERT_NE(name, nullptr);
  EXPECT_THAT(name->reason, HasSubstr("invalid plugin_name 'Broken-Name'"));

  const SkippedPlugin* devices = find_skipped(host, "libampx_backend_broken_devices.so");
  ASSERT_NE(devices, nullptr);
  EXPECT_THAT(devices->reason, HasSubstr("device_count: simulated device_count failure"));

  // The host survived and the good plugins work.
  const Device& device = host.device("c_minimal:0");
  Buffer buffer = device.allocate(4);
  EXPECT_EQ(buffer.size(), 4u);
}

TEST_F(DiscoveryTest, SkippedPluginsAreWarnedAbout) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(128);
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  {
    PluginHostOptions options = only({broken_dir()});
    options.excluded_plugins = {"c_relu"};
    const PluginHost host(options);
  }
  spdlog::set_default_logger(previous);

  std::vector<std::string> warnings;
  std::vector<std::string> infos;
  for (const auto& message : sink->last_raw()) {
    const std::string text(message.payload.begin(), message.payload.end());
    if (message.level == spdlog::level::warn) warnings.push_back(text);
    if (message.level == spdlog::level::info) infos.push_back(text);
  }
  EXPECT_EQ(warnings.size(), 9u);
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("simulated init failure") != std::string::npos;
  }));
  // An exclusion is what the user asked for: info, not a warning.
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_THAT(infos[0], HasSubstr("libampx_backend_c_relu.so"));
}

TEST_F(DiscoveryTest, RecordsDescribeThePlugins) {
  const PluginHost host(only({broken_dir()}));
  const PluginRecord* minimal = find_plugin(host, "c_minimal");
  ASSERT_NE(minimal, nullptr);
  EXPECT_EQ(minimal->version, "1.0.0");
  EXPECT_EQ(minimal->library, "C99 libc");
  EXPECT_EQ(minimal->note, "one host-memory device, no kernels");
  EXPECT_EQ(minimal->file, test_plugin("c_minimal"));
  EXPECT_EQ(minimal->abi_major, 1u);
  EXPECT_EQ(minimal->abi_minor, static_cast<uint32_t>(AMPX_ABI_VERSION_MINOR));
  EXPECT_THAT(minimal->device_ids, ElementsAre("c_minimal:0"));

  // A newer minor with a longer table is accepted.
  const PluginRecord* future = find_plugin(host, "c_future");
  ASSERT_NE(future, nullptr);
  EXPECT_EQ(future->abi_major, 1u);
  EXPECT_EQ(future->abi_minor, AMPX_ABI_VERSION_MINOR + 9u);

  const PluginRecord* relu = find_plugin(host, "c_relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->note, "");
  EXPECT_THAT(relu->device_ids, ElementsAre("c_relu:0", "c_relu:1"));

  // ABI 1.2 extensions: c_relu's chain has a type no host knows (skipped)
  // before its options; c_minimal has none, c_old's table predates them.
  ASSERT_EQ(relu->options.size(), 2u);
  EXPECT_EQ(relu->options[0].key, "threads");
  EXPECT_EQ(relu->options[0].values, "ignored");
  EXPECT_EQ(relu->options[1].key, "relu_slope");
  EXPECT_EQ(relu->options[1].doc, "reserved");
  EXPECT_TRUE(minimal->options.empty());
  ASSERT_NE(find_plugin(host, "c_old"), nullptr);
  EXPECT_TRUE(find_plugin(host, "c_old")->options.empty());
}

TEST_F(DiscoveryTest, DevicePropsAreCopiedAndComplete) {
  const PluginHost host(only({broken_dir()}));
  const Device& device = host.device("c_minimal:0");
  EXPECT_EQ(device.id(), "c_minimal:0");
  EXPECT_EQ(device.plugin_name(), "c_minimal");
  EXPECT_EQ(device.index(), 0);
  const ampx_device_props& props = device.props();
  EXPECT_EQ(props.struct_size, sizeof(ampx_device_props));
  EXPECT_STREQ(props.name, "c_minimal host memory");
  EXPECT_STREQ(props.vendor, "ampx");
  EXPECT_STREQ(props.driver_version, "1.0");
  EXPECT_STREQ(props.fingerprint, "c_minimal/1.0");
  EXPECT_EQ(props.type, AMPX_DEVICE_CPU);
  EXPECT_EQ(props.compute_units, 1);

  const Device& relu1 = host.device("c_relu:1");
  EXPECT_EQ(relu1.index(), 1);
  EXPECT_STREQ(relu1.props().name, "c_relu device 1");
  EXPECT_STREQ(relu1.props().vendor, "");  // not set by the plugin: zero
}

TEST_F(DiscoveryTest, MissingDirectoriesAreSkippedSilently) {
  const PluginHost host(only({"/nonexistent/ampx/plugins", broken_dir() / "no_such_dir"}));
  EXPECT_TRUE(host.plugins().empty());
  EXPECT_TRUE(host.skipped().empty());
  EXPECT_TRUE(host.devices().empty());
  EXPECT_EQ(host.search_dirs().size(), 2u);
}

TEST_F(DiscoveryTest, AFileThatIsNotALibraryIsSkipped) {
  TempDir dir;
  {
    std::ofstream(dir.path() / "libampx_backend_garbage.so") << "not an ELF file\n";
    std::ofstream(dir.path() / "libampx_backend_ignored.so.txt") << "not a plugin name\n";
    std::ofstream(dir.path() / "ampx_backend_nolib.so") << "no lib prefix\n";
    std::ofstream(dir.path() / "libampx_backend_.so") << "empty name\n";
  }
  dir.add("c_minimal");
  const PluginHost host(only({dir.path()}));
  EXPECT_THAT(plugin_names(host), ElementsAre("c_minimal"));
  ASSERT_EQ(host.skipped().size(), 1u);
  EXPECT_EQ(host.skipped()[0].name_hint, "garbage");
  EXPECT_THAT(host.skipped()[0].reason, HasSubstr("libampx_backend_garbage.so: cannot load: "));
}

TEST_F(DiscoveryTest, ExcludedByOption) {
  PluginHostOptions options = only({broken_dir()});
  options.excluded_plugins = {"c_minimal", "broken_abi"};
  const PluginHost host(options);
  EXPECT_THAT(plugin_names(host), ElementsAre("c_future", "c_old", "c_relu"));
  EXPECT_EQ(host.find_device("c_minimal:0"), nullptr);

  const SkippedPlugin* minimal = find_skipped(host, "libampx_backend_c_minimal.so");
  ASSERT_NE(minimal, nullptr);
  EXPECT_EQ(minimal->reason,
            "libampx_backend_c_minimal.so: excluded by PluginHostOptions::excluded_plugins");
  // Excluded by its file name, so never opened: no ABI complaint.
  const SkippedPlugin* abi = find_skipped(host, "libampx_backend_broken_abi.so");
  ASSERT_NE(abi, nullptr);
  EXPECT_THAT(abi->reason, HasSubstr("excluded"));
  EXPECT_THAT(abi->reason, ::testing::Not(HasSubstr("ABI")));
}

TEST_F(DiscoveryTest, ExcludedByEnvironment) {
  ScopedEnv disable("AMPX_DISABLE_PLUGINS", " c_relu , c_old,,");
  const PluginHost host(only({broken_dir()}));
  EXPECT_THAT(plugin_names(host), ElementsAre("c_future", "c_minimal"));
  for (const char* file : {"libampx_backend_c_relu.so", "libampx_backend_c_old.so"}) {
    const SkippedPlugin* skipped = find_skipped(host, file);
    ASSERT_NE(skipped, nullptr) << file;
    EXPECT_THAT(skipped->reason, HasSubstr("excluded by AMPX_DISABLE_PLUGINS"));
  }
}

TEST_F(DiscoveryTest, ExclusionAppliesToThePluginNameNotOnlyTheFileName) {
  TempDir dir;
  dir.add("c_minimal", "libampx_backend_renamed.so");
  PluginHostOptions options = only({dir.path()});
  options.excluded_plugins = {"c_minimal"};
  const PluginHost host(options);
  EXPECT_TRUE(host.plugins().empty());
  ASSERT_EQ(host.skipped().size(), 1u);
  EXPECT_EQ(host.skipped()[0].name_hint, "c_minimal");
  EXPECT_THAT(host.skipped()[0].reason, HasSubstr("excluded"));
}

TEST_F(DiscoveryTest, DuplicateNamesTheFirstWins) {
  TempDir dir;
  const fs::path first = dir.add("c_minimal");
  const fs::path second = dir.add("c_minimal", "libampx_backend_c_minimal_copy.so");
  const PluginHost host(only({dir.path()}));
  EXPECT_THAT(plugin_names(host), ElementsAre("c_minimal"));
  EXPECT_EQ(host.plugins()[0].file, first);
  ASSERT_EQ(host.skipped().size(), 1u);
  EXPECT_EQ(host.skipped()[0].file, second);
  EXPECT_EQ(host.skipped()[0].name_hint, "c_minimal");
  EXPECT_EQ(host.skipped()[0].reason,
            "libampx_backend_c_minimal_copy.so: duplicate of " + first.string());
}

TEST_F(DiscoveryTest, SearchOrderIsExtraDirsThenEnvPath) {
  TempDir extra, env_a, env_b;
  const fs::path in_extra = extra.add("c_minimal");
  const fs::path in_a = env_a.add("c_minimal");
  env_b.add("c_minimal");
  env_b.add("c_relu");

  ScopedEnv path("AMPX_PLUGIN_PATH",
                 env_b.path().string() + "::" + env_a.path().string() + ":/nonexistent");
  {
    PluginHostOptions options = only({extra.path()});
    options.use_env_path = true;
    const PluginHost host(options);
    EXPECT_THAT(host.search_dirs(),
                ElementsAre(extra.path(), env_b.path(), env_a.path(), fs::path("/nonexistent")));
    ASSERT_NE(find_plugin(host, "c_minimal"), nullptr);
    EXPECT_EQ(find_plugin(host, "c_minimal")->file, in_extra);
    ASSERT_NE(find_plugin(host, "c_relu"), nullptr);
    EXPECT_EQ(host.skipped().size(), 2u);  // c_minimal in env_b and env_a
    EXPECT_THAT(find_skipped(host, "libampx_backend_c_minimal.so")->reason,
                HasSubstr("duplicate of " + in_extra.string()));
  }
  {
    // Within AMPX_PLUGIN_PATH, left to right.
    ScopedEnv path2("AMPX_PLUGIN_PATH", env_a.path().string() + ":" + env_b.path().string());
    PluginHostOptions options = only({});
    options.use_env_path = true;
    const PluginHost host(options);
    ASSERT_NE(find_plugin(host, "c_minimal"), nullptr);
    EXPECT_EQ(find_plugin(host, "c_minimal")->file, in_a);
  }
  {
    // use_env_path = false ignores it.
    const PluginHost host(only({}));
    EXPECT_TRUE(host.search_dirs().empty());
    EXPECT_TRUE(host.plugins().empty());
  }
}

TEST_F(DiscoveryTest, ADirectoryIsSearchedOnce) {
  TempDir dir;
  dir.add("c_minimal");
  const fs::path link = dir.path().parent_path() / (dir.path().filename().string() + "_link");
  fs::create_directory_symlink(dir.path(), link);
  const PluginHost host(only({dir.path(), dir.path() / "." / "", link}));
  fs::remove(link);
  EXPECT_THAT(host.search_dirs(), ElementsAre(dir.path()));
  EXPECT_EQ(host.plugins().size(), 1u);
  EXPECT_TRUE(host.skipped().empty());
}

TEST_F(DiscoveryTest, TheSameFileTwiceIsNotLoadedTwice) {
  TempDir a, b;
  const fs::path original = a.add("c_minimal");
  fs::create_symlink(original, b.path() / "libampx_backend_alias.so");
  const PluginHost host(only({a.path(), b.path()}));
  EXPECT_EQ(host.plugins().size(), 1u);
  ASSERT_EQ(host.skipped().size(), 1u);
  EXPECT_EQ(host.skipped()[0].reason,
            "libampx_backend_alias.so: duplicate of " + original.string());
}

TEST_F(DiscoveryTest, UnknownDeviceListsTheAvailableOnes) {
  const PluginHost host(only({broken_dir()}));
  EXPECT_EQ(host.find_device("x:0"), nullptr);
  ASSERT_NE(host.find_device("c_relu:1"), nullptr);
  EXPECT_EQ(host.find_device("c_relu:1")->index(), 1);
  try {
    (void)host.device("x:0");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown device 'x:0' (available: c_future:0, c_minimal:0, c_old:0, c_relu:0, "
                 "c_relu:1)");
  }

  const PluginHost empty(only({}));
  try {
    (void)empty.device("c_minimal:0");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown device 'c_minimal:0' (available: none)");
  }
}

TEST_F(DiscoveryTest, DefaultDirsAreTheBuildThenTheInstallDir) {
  PluginHostOptions options;
  options.use_env_path = false;
  const PluginHost host(options);
  const std::vector<fs::path> dirs = host.search_dirs();
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], fs::path(AMPX_PLUGIN_BUILD_DIR).lexically_normal());
  EXPECT_EQ(dirs[1].filename(), "plugins");
  EXPECT_EQ(dirs[1].parent_path().filename(), "ampx");
  EXPECT_EQ(dirs, default_plugin_dirs());
}

#if defined(AMPX_HAVE_CPU_REF)
TEST_F(DiscoveryTest, PluginOptionsReachPluginCreate) {
  PluginHostOptions ok;
  ok.default_plugin_options = "threads=1";
  EXPECT_NE(PluginHost(ok).find_device("cpu_ref:0"), nullptr);

  PluginHostOptions bad;
  bad.plugin_options["cpu_ref"] = "threads=many";
  const PluginHost host(bad);
  EXPECT_EQ(host.find_device("cpu_ref:0"), nullptr);
  std::string reasons;
  for (const auto& s : host.skipped()) reasons += s.reason + "\n";
  EXPECT_NE(reasons.find("cpu_ref option threads='many': expected an integer 1..4096"),
            std::string::npos)
      << reasons;
}

// A plugin named cpu_ref outside ampx's own plugin directories (here a
// copy of the real one in an extra directory, searched first) never
// replaces the reference backend: it is skipped with the reason, and
// cpu_ref:0 comes from the build tree.
TEST_F(DiscoveryTest, ACpuRefOutsideTheOwnPluginDirIsNotLoaded) {
  TempDir dir;
  fs::copy_file(fs::path(AMPX_PLUGIN_BUILD_DIR) / "libampx_backend_cpu_ref.so",
                dir.path() / "libampx_backend_cpu_ref.so");
  PluginHostOptions options;
  options.extra_dirs = {dir.path()};
  options.use_env_path = false;
  const PluginHost host(options);
  const PluginRecord* record = find_plugin(host, "cpu_ref");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->file.parent_path(), fs::path(AMPX_PLUGIN_BUILD_DIR).lexically_normal());
  std::string reasons;
  for (const auto& s : host.skipped()) reasons += s.reason + "\n";
  EXPECT_THAT(reasons, HasSubstr("the name 'cpu_ref' belongs to ampx's reference backend"));
}

// A host that lives in a global (a global Session) is destroyed after the
// plugin library's own statics, which were made later, at load. Its plugin
// instance, buffer and kernel must still be freed: no "not live" message,
// no leak (LeakSanitizer would fail the child under the sanitizers).
std::unique_ptr<PluginHost> g_host_destroyed_at_exit;
std::optional<Buffer> g_buffer_destroyed_at_exit;
std::optional<Kernel> g_kernel_destroyed_at_exit;

TEST_F(DiscoveryTest, AHostDestroyedAtExitFreesItsPluginObjects) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    g_host_destroyed_at_exit = std::make_unique<PluginHost>();
    const Device& device = g_host_destroyed_at_exit->device("cpu_ref:0");
    g_buffer_destroyed_at_exit.emplace(device.allocate(64));
    g_kernel_destroyed_at_exit.emplace(device.prepare(TestNode("Relu", {4}).node));
    std::exit(0);  // static destruction: the plugin's registries first
  }
  ::close(pipe_fds[1]);
  std::string err;
  char chunk[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], chunk, sizeof chunk)) > 0;) err.append(chunk, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
  EXPECT_THAT(err, Not(HasSubstr("not live"))) << err;
}

TEST_F(DiscoveryTest, DefaultDirsFindCpuRef) {
  const PluginHost host;
  ASSERT_NE(host.find_device("cpu_ref:0"), nullptr)
      << "search dirs: " << ::testing::PrintToString(host.search_dirs());
  const Device& device = host.device("cpu_ref:0");
  EXPECT_EQ(device.props().type, AMPX_DEVICE_CPU);
  const PluginRecord* record = find_plugin(host, "cpu_ref");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->file.parent_path(), fs::path(AMPX_PLUGIN_BUILD_DIR).lexically_normal());

  // End to end through the host: Relu on f32.
  TestNode relu("Relu", {4});
  EXPECT_NE(device.query(relu.node).support, AMPX_SUPPORT_UNSUPPORTED);
  Kernel kernel = device.prepare(relu.node);
  const std::vector<float> x{-2.0f, -0.5f, 0.5f, 2.0f};
  Buffer in = device.allocate(sizeof(float) * x.size());
  Buffer out = device.allocate(sizeof(float) * x.size());
  device.copy_to_device(in, 0, std::as_bytes(std::span(x)));
  const std::array<ampx_buffer_view, 1> inputs{in.view()};
  const std::array<ampx_buffer_view, 1> outputs{out.view()};
  kernel.launch(inputs, outputs);
  device.synchronize();
  std::vector<float> y(x.size());
  device.copy_to_host(std::as_writable_bytes(std::span(y)), out, 0);
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 0.5f, 2.0f}));
}
#endif

TEST(DiscoveryNames, PluginFileNames) {
  EXPECT_TRUE(is_plugin_file_name("libampx_backend_cpu_ref.so"));
  EXPECT_FALSE(is_plugin_file_name("libampx_backend_.so"));
  EXPECT_FALSE(is_plugin_file_name("ampx_backend_cpu_ref.so"));
  EXPECT_FALSE(is_plugin_file_name("libampx_backend_cpu_ref.so.1"));
  EXPECT_FALSE(is_plugin_file_name("libampx_plugins.a"));
  EXPECT_FALSE(is_plugin_file_name("libampx_backend_cpu_ref.txt"));
  EXPECT_EQ(plugin_name_hint("/x/libampx_backend_cpu_ref.so"), "cpu_ref");
  EXPECT_EQ(plugin_name_hint("/x/libfoo.so"), "");
}

TEST(DiscoveryNames, Lists) {
  EXPECT_THAT(split_path_list("/a::/b:"), ElementsAre(fs::path("/a"), fs::path("/b")));
  EXPECT_TRUE(split_path_list("").empty());
  EXPECT_THAT(split_name_list(" a, b ,,c "), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(split_name_list(" , ").empty());
}

}  // namespace
}  // namespace ampx::plugins::test
