// Device and plugin facts, options, error statuses, and capability answers
// under ONEDNN_MAX_CPU_ISA (oneDNN reads it once per process: a child runs
// the same binary with it set).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "onednn_harness.hpp"
#include "op_cases.hpp"

extern char** environ;

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
constexpr ampx_dtype F16 = AMPX_DTYPE_F16;
constexpr ampx_dtype BF16 = AMPX_DTYPE_BF16;

ampx_device_props props_of(const Plugin& p) {
  ampx_device_props props{};
  props.struct_size = sizeof props;
  p.ok(p.api->device_props(p.plugin, 0, &props));
  return props;
}

TEST(OnednnDevice, PropsAndInfo) {
  Plugin p(plugin_path("onednn"));
  EXPECT_STREQ(p.api->plugin_name, "onednn");
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  EXPECT_EQ(std::string(info.library).rfind("oneDNN 2.", 0), 0u) << info.library;
  EXPECT_NE(std::string(info.note).find("threads"), std::string::npos) << info.note;
  const ampx_device_props props = props_of(p);
  EXPECT_EQ(props.type, AMPX_DEVICE_CPU);
  EXPECT_GT(props.memory_bytes, 0u);
  EXPECT_GT(props.compute_units, 0);
  EXPECT_STRNE(props.name, "");
  EXPECT_STRNE(props.vendor, "");
  EXPECT_EQ(std::string(props.driver_version), std::string(info.library));
  const std::string fp = props.fingerprint;
  EXPECT_EQ(fp.rfind("onednn/", 0), 0u) << fp;
  EXPECT_NE(fp.find("/onednn-2."), std::string::npos) << fp;
  int32_t n = 0;
  p.ok(p.api->device_count(p.plugin, &n));
  EXPECT_EQ(n, 1);
}

TEST(OnednnDevice, BuffersAreHostMemoryAndCopiesAreChecked) {
  // Host pointers only without blocked activations (onednn_test_layouts.cpp).
  Plugin p(plugin_path("onednn"), "blocked_activations=0");
  ampx_buffer* b = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 100, &b));
  ASSERT_NE(b, nullptr);
  ASSERT_NE(p.api->buffer_host_ptr, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.api->buffer_host_ptr(b)) % 64, 0u);
  char data[8] = {};
  p.fails(p.api->copy_to_device(b, 96, data, 8), AMPX_STATUS_INVALID_ARGUMENT, "outside");
  p.fails(p.api->copy_to_host(data, b, 99, 2), AMPX_STATUS_INVALID_ARGUMENT, "outside");
  ampx_buffer* none = b;
  p.fails(p.api->buffer_alloc(p.plugin, 1, 8, &none), AMPX_STATUS_INVALID_ARGUMENT, "device");
  EXPECT_EQ(none, nullptr) << "a failed call leaves its out handle NULL";
  p.api->buffer_free(b);
}

TEST(OnednnDevice, OptionsAreParsedAndBadOnesRefused) {
  // Keys of other plugins are ignored (backend_api.h, "Options").
  { Plugin p(plugin_path("onednn"), "speed=fast;threads=1"); }
  {
    Plugin p(plugin_path("onednn"), "threads=1");
    ampx_plugin_info info{};
    info.struct_size = sizeof info;
    p.ok(p.api->plugin_info(p.plugin, &info));
    EXPECT_NE(std::string(info.note).find(", 1 threads"), std::string::npos) << info.note;
  }
  { Plugin p(plugin_path("onednn"), " threads=0 ; "); }
  {
    Plugin p(plugin_path("onednn"), "blocked_activations=0;debug_counters=1");
    ampx_plugin_info info{};
    info.struct_size = sizeof info;
    p.ok(p.api->plugin_info(p.plugin, &info));
    EXPECT_NE(std::string(info.note).find("plain activations; activation reorders: 0"),
              std::string::npos)
        << info.note;
  }
  for (const char* bad : {"threads=abc", "threads=-2", "blocked_activations=2", "debug_counters=x",
                          "deterministic=2", "selfcheck_perturb=yes"}) {
    void* lib = dlopen(plugin_path("onednn").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr);
    auto entry = reinterpret_cast<ampx_plugin_entry_fn>(dlsym(lib, AMPX_PLUGIN_ENTRY_SYMBOL));
    const ampx_plugin_api* api = entry();
    ampx_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.options = bad;
    ampx_plugin* plugin = nullptr;
    ampx_status* s = api->plugin_create(&args, &plugin);
    ASSERT_NE(s, nullptr) << bad;
    EXPECT_EQ(api->status_code(s), AMPX_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(api->status_message(s)).find("onednn"), std::string::npos);
    api->status_destroy(s);
    EXPECT_EQ(plugin, nullptr);
    dlclose(lib);
  }
}

// One thread and all threads give the same result (oneDNN's f32 kernels
// here do not split reductions by thread count).
// threads=N takes effect: the launch's OpenMP team (debug_counters=1's
// "launch threads") is 1 at threads=1 and 3 at threads=3 (not the
// default of a 2-core machine, and more than its cores) for a MatMul big
// enough to run threaded, and 1 for a small one whatever the option
// (PrimitiveKernel::threads_for). deterministic=0: the threaded primitive
// runs unchecked (thread_check.hpp), so the count is the option's on any CPU.
TEST(OnednnDevice, ThreadsOptionRuns) {
  Plugin one(plugin_path("onednn"), "threads=1;debug_counters=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1;deterministic=0");
  Rng rng(2);
  NodeBuilder big("MatMul", "mm");
  big.input(F32, {128, 256}).input(F32, {256, 64}).output(F32, {128, 64});
  const std::vector<Tensor> in = {random_tensor(rng, F32, {128, 256}),
                                  random_tensor(rng, F32, {256, 64})};
  const auto a = run_on(one, big, in)[0];
  EXPECT_EQ(note_number(one, "launch threads "), 1) << plugin_note(one);
  const auto b = run_on(three, big, in)[0];
  EXPECT_EQ(note_number(three, "launch threads "), 3) << plugin_note(three);
  expect_close(a, b.values());

  NodeBuilder small("MatMul", "mm");
  small.input(F32, {33, 40}).input(F32, {40, 21}).output(F32, {33, 21});
  const std::vector<Tensor> s = {random_tensor(rng, F32, {33, 40}),
                                 random_tensor(rng, F32, {40, 21})};
  expect_close(run_on(three, small, s)[0], run_on(one, small, s)[0].values());
  EXPECT_EQ(note_number(three, "launch threads "), 1) << plugin_note(three);
}

TEST(OnednnDevice, BadLaunchesGiveStatuses) {
  Plugin p(plugin_path("onednn"));
  NodeBuilder nb("Relu", "r1");
  nb.input(F32, {4, 4}).output(F32, {4, 4});
  ampx_kernel* k = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
  ASSERT_NE(k, nullptr);
  ampx_buffer* b = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 64, &b));
  const ampx_buffer_view v[1] = {{sizeof(ampx_buffer_view), b, 0}};
  const ampx_buffer_view past[1] = {{sizeof(ampx_buffer_view), b, 8}};
  p.fails(p.api->kernel_launch(k, v, 1, v, 0), AMPX_STATUS_INVALID_ARGUMENT, "expects 1 inputs");
  p.fails(p.api->kernel_launch(k, v, 1, past, 1), AMPX_STATUS_INVALID_ARGUMENT, "node 'r1'");
  // In place (output == input) is staged by the host plugin and still right.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i - 8);
  p.ok(p.api->copy_to_device(b, 0, x.data(), 64));
  p.ok(p.api->kernel_launch(k, v, 1, v, 1));
  p.ok(p.api->copy_to_host(x.data(), b, 0, 64));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(x[i], std::max(0, i - 8));
  p.api->kernel_destroy(k);
  p.api->buffer_free(b);

  // Malformed and unsupported nodes: statuses with the node and a reason.
  NodeBuilder bad("Relu", "r2");
  bad.input(F32, {4, 4}).output(F32, {4, 5});
  p.fails(p.api->kernel_prepare(p.plugin, 0, &bad.desc(), &k), AMPX_STATUS_INVALID_ARGUMENT,
          "node 'r2'");
  NodeBuilder f64("Relu", "r3");
  f64.input(AMPX_DTYPE_F64, {4}).output(AMPX_DTYPE_F64, {4});
  const ampx_capability cap = p.capability(f64);
  EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(cap.note).find("f64"), std::string::npos) << cap.note;
  p.fails(p.api->kernel_prepare(p.plugin, 0, &f64.desc(), &k), AMPX_STATUS_UNSUPPORTED,
          "node 'r3'");
}

// f64 beyond the elementwise ops is the reference kernels' float64 mode,
// cpu_ref's alone (docs/OPS.md, "f64"): the plugin's fallback to the
// reference kernels must not take it up, for the training ops it runs as
// loops (SliceGrad, the loss) or falls back on (no backward primitive)
// either.
TEST(OnednnDevice, F64ComputeNodesAreUnsupported) {
  Plugin p(plugin_path("onednn"));
  int asked = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    Rng rng(5);
    op_cases::Case c;
    make(rng, AMPX_DTYPE_F64, c);
    const opset::OpDef* op = opset::find_op(c.nb.op_type());
    if (!op || op->dtype_rule != opset::DtypeRule::kCompute) continue;
    bool f64 = false;
    for (const Tensor& t : c.inputs) f64 = f64 || t.dtype == AMPX_DTYPE_F64;
    if (!f64) continue;  // the f32-only updates' cases
    ++asked;
    const ampx_capability cap = p.capability(c.nb);
    EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << name << ": " << cap.note;
    ampx_kernel* k = nullptr;
    p.fails(p.api->kernel_prepare(p.plugin, 0, &c.nb.desc(), &k), AMPX_STATUS_UNSUPPORTED, "f64");
  }
  EXPECT_GT(asked, 40);
}

// The nodes whose answers the ISA test compares.
std::vector<NodeBuilder> probe_nodes() {
  std::vector<NodeBuilder> v;
  for (ampx_dtype dt : {F32, F16, BF16}) {
    NodeBuilder conv("Conv2d", "conv");
    conv.input(dt, {1, 8, 10, 10}).input(dt, {16, 8, 3, 3}).output(dt, {1, 16, 8, 8});
    v.push_back(conv);
    NodeBuilder mm("MatMul", "mm");
    mm.input(dt, {64, 64}).input(dt, {64, 64}).output(dt, {64, 64});
    v.push_back(mm);
    NodeBuilder relu("Relu", "relu");
    relu.input(dt, {8, 64}).output(dt, {8, 64});
    v.push_back(relu);
    NodeBuilder sm("Softmax", "sm");
    sm.input(dt, {8, 64}).output(dt, {8, 64});
    v.push_back(sm);
  }
  return v;
}

// "<fingerprint>\n" then "<op> <support> <note>\n" per probe node.
std::string answers(const Plugin& p) {
  std::ostringstream s;
  s << props_of(p).fingerprint << "\n";
  for (NodeBuilder& nb : probe_nodes()) {
    const ampx_capability c = p.capability(nb);
    s << nb.op_type() << " " << static_cast<int>(c.support) << " " << c.note << "\n";
  }
  return s.str();
}

// Runs this test binary's OnednnIsaChild.WriteAnswers with
// ONEDNN_MAX_CPU_ISA=isa; returns what it wrote.
std::string child_answers(const std::string& isa) {
  const std::string out = ::testing::TempDir() + "onednn_isa_" + isa + ".txt";
  std::vector<std::string> env_s = {"ONEDNN_MAX_CPU_ISA=" + isa, "AMPX_ONEDNN_CHILD_OUT=" + out};
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("ONEDNN_MAX_CPU_ISA=", 0) != 0 && kv.rfind("GTEST_", 0) != 0) env_s.push_back(kv);
  }
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", filter = "--gtest_filter=OnednnIsaChild.WriteAnswers";
  char* argv[] = {self.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t quiet;  // the child's gtest chatter
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &quiet, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&quiet);
  if (rc != 0) return {};
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(out.c_str());
  return ss.str();
}

// Not a test on its own: the child side of AnswersFollowTheIsa.
TEST(OnednnIsaChild, WriteAnswers) {
  const char* out = std::getenv("AMPX_ONEDNN_CHILD_OUT");
  if (!out) GTEST_SKIP() << "run by OnednnIsa.AnswersFollowTheIsa";
  Plugin p(plugin_path("onednn"));
  std::ofstream(out) << answers(p);
}

TEST(OnednnIsa, AnswersFollowTheIsa) {
  Plugin p(plugin_path("onednn"));
  const std::string mine = answers(p);
  const std::string avx2 = child_answers("AVX2");
  ASSERT_FALSE(avx2.empty()) << "child process failed";
  const std::string sse41 = child_answers("SSE41");
  ASSERT_FALSE(sse41.empty()) << "child process failed";
  const std::string fp = mine.substr(0, mine.find('\n'));
  // Fingerprints carry the effective ISA, so the capability database keeps
  // the answers apart.
  EXPECT_NE(sse41.find("/sse41/"), std::string::npos) << sse41;
  if (fp.find("/avx2/") != std::string::npos) {
    EXPECT_EQ(avx2, mine) << "this CPU's ISA is AVX2: capping at AVX2 changes nothing";
  }
  if (avx2.find("/avx2/") != std::string::npos) {
    // No bf16/f16 arithmetic at AVX2: those nodes are never native there.
    std::istringstream lines(avx2);
    std::string line;
    std::getline(lines, line);
    for (int i = 0; std::getline(lines, line); ++i) {
      if (i >= 4 && line.find(" 1 ") != std::string::npos) {
        ADD_FAILURE() << "16-bit native under AVX2: " << line;
      }
    }
  }
  std::cout << "default:\n" << mine << "AVX2:\n" << avx2 << "SSE41:\n" << sse41;
}

}  // namespace
}  // namespace ampx::test
