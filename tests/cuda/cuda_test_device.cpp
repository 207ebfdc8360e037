// Loading, devices, options, statuses. The first tests run everywhere: the
// plugin must load and either list devices or say why there are none. The
// rest need a GPU and skip with the plugin's reason otherwise.
#include <ampx/plugins/plugin_host.hpp>

#include <iostream>

#include "cuda_harness.hpp"

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;

// ------------------------------------------------------------- everywhere

TEST(CudaPlugin, LoadsAndListsDevicesOrSaysWhyNot) {
  Plugin p(plugin_path("cuda"));
  EXPECT_STREQ(p.api->plugin_name, "cuda");
  EXPECT_EQ(p.api->abi_major, static_cast<uint32_t>(AMPX_ABI_VERSION_MAJOR));
  EXPECT_EQ(p.api->buffer_host_ptr, nullptr) << "device memory is not host-visible";
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  const std::string note = info.note, library = info.library;
  EXPECT_EQ(library.rfind("CUDA runtime ", 0), 0u) << library;
  EXPECT_NE(library.find("cuBLASLt"), std::string::npos) << library;
  const int32_t n = device_count(p);
  std::cout << "[ cuda     ] " << n << " device(s); note: " << note << "; library: " << library
            << "\n";
  if (n == 0) {
    // CI: no GPU, no driver. The reason is the CUDA runtime's own error text.
    EXPECT_EQ(note.rfind("no CUDA device", 0), 0u) << note;
    EXPECT_NE(note.find("cudaGetDeviceCount"), std::string::npos) << note;
    EXPECT_TRUE(note.find("driver") != std::string::npos ||
                note.find("no CUDA-capable device") != std::string::npos)
        << note;
    EXPECT_FALSE(expect_device()) << "AMPX_EXPECT_CUDA_DEVICE=1 but: " << note;
  } else {
    EXPECT_NE(note.find("device(s)"), std::string::npos) << note;
  }
}

TEST(CudaPlugin, NoDeviceIndexOutOfRangeIsAStatus) {
  Plugin p(plugin_path("cuda"));
  const int32_t n = device_count(p);
  ampx_buffer* b = nullptr;
  p.fails(p.api->buffer_alloc(p.plugin, n, 16, &b), AMPX_STATUS_INVALID_ARGUMENT, "out of range");
  EXPECT_EQ(b, nullptr);
  ampx_device_props props{};
  props.struct_size = sizeof props;
  p.fails(p.api->device_props(p.plugin, n, &props), AMPX_STATUS_INVALID_ARGUMENT, "out of range");
  NodeBuilder nb("Relu", "r");
  nb.input(F32, {4}).output(F32, {4});
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  p.fails(p.api->query_capability(p.plugin, n, &nb.desc(), &cap), AMPX_STATUS_INVALID_ARGUMENT,
          "out of range");
  ampx_kernel* k = nullptr;
  p.fails(p.api->kernel_prepare(p.plugin, n, &nb.desc(), &k), AMPX_STATUS_INVALID_ARGUMENT,
          "out of range");
  p.fails(p.api->synchronize(p.plugin, n), AMPX_STATUS_INVALID_ARGUMENT, "out of range");
}

TEST(CudaPlugin, OptionsAreParsedAndBadOnesRefused) {
  { Plugin p(plugin_path("cuda"), "cudnn=off"); }
  { Plugin p(plugin_path("cuda"), " cudnn=on ; threads=4"); }
  // Keys it does not document are ignored (backend_api.h, "Options").
  { Plugin p(plugin_path("cuda"), "speed=fast;cudnn=off"); }
  for (const char* bad : {"cudnn=maybe", "threads=-3"}) {
    void* lib = dlopen(plugin_path("cuda").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto entry = reinterpret_cast<ampx_plugin_entry_fn>(dlsym(lib, AMPX_PLUGIN_ENTRY_SYMBOL));
    const ampx_plugin_api* api = entry();
    ampx_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.options = bad;
    ampx_plugin* plugin = nullptr;
    ampx_status* s = api->plugin_create(&args, &plugin);
    ASSERT_NE(s, nullptr) << bad;
    EXPECT_EQ(api->status_code(s), AMPX_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(api->status_message(s)).find("cuda option"), std::string::npos);
    api->status_destroy(s);
    EXPECT_EQ(plugin, nullptr);
    dlclose(lib);
  }
}

// The host loads it next to cpu_ref and carries on whatever it reports.
TEST(CudaPlugin, PluginHostListsItBesideTheOthers) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {plugin_dir()};
  opts.use_env_path = false;
  opts.use_default_dirs = false;
  const plugins::PluginHost host(opts);
  const plugins::PluginRecord* cuda = nullptr;
  for (const auto& r : host.plugins())
    if (r.name == "cuda") cuda = &r;
  ASSERT_NE(cuda, nullptr) << "the cuda plugin was not loaded";
  for (const auto& s : host.skipped()) EXPECT_NE(s.name_hint, "cuda") << s.reason;
  EXPECT_FALSE(cuda->note.empty());
  EXPECT_NE(host.find_device("cpu_ref:0"), nullptr);
  if (cuda->device_ids.empty()) {
    EXPECT_EQ(host.find_device("cuda:0"), nullptr);
    EXPECT_NE(cuda->note.find("cudaGetDeviceCount"), std::string::npos) << cuda->note;
  } else {
    EXPECT_EQ(cuda->device_ids.front(), "cuda:0");
  }
}

// ------------------------------------------------------------ with a GPU

TEST(CudaDevice, PropsAndFingerprint) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin p(plugin_path("cuda"));
  const ampx_device_props props = props_of(p);
  EXPECT_EQ(props.type, AMPX_DEVICE_GPU);
  EXPECT_GT(props.memory_bytes, 0u);
  EXPECT_GT(props.compute_units, 0);
  EXPECT_STRNE(props.name, "");
  EXPECT_STREQ(props.vendor, "NVIDIA");
  EXPECT_NE(std::string(props.driver_version).find("CUDA "), std::string::npos);
  const std::string fp = props.fingerprint;
  EXPECT_EQ(fp.rfind("cuda/", 0), 0u) << fp;
  for (const char* part : {"/sm_", "/driver-", "/runtime-", "/cudnn-"})
    EXPECT_NE(fp.find(part), std::string::npos) << part << " in " << fp;
  EXPECT_GE(compute_capability(p), 70) << fp;
  std::cout << "[ cuda:0   ] " << props.name << ", " << props.compute_units << " SMs, "
            << props.memory_bytes / (1 << 20) << " MiB, driver " << props.driver_version << "\n"
            << "[ cuda:0   ] fingerprint " << fp << "\n";
}

TEST(CudaDevice, CopiesAreCheckedAndRoundTrip) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin p(plugin_path("cuda"));
  ampx_buffer *a = nullptr, *b = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 100, &a));
  p.ok(p.api->buffer_alloc(p.plugin, 0, 100, &b));
  std::vector<unsigned char> src(100), dst(100, 0);
  for (int i = 0; i < 100; ++i) src[static_cast<size_t>(i)] = static_cast<unsigned char>(i * 7);
  p.ok(p.api->copy_to_device(a, 0, src.data(), 100));
  p.ok(p.api->copy_device_to_device(b, 10, a, 0, 90));
  p.ok(p.api->copy_to_host(dst.data() + 10, b, 10, 90));
  for (int i = 10; i < 100; ++i)
    EXPECT_EQ(dst[static_cast<size_t>(i)], src[static_cast<size_t>(i - 10)]);
  char x[8] = {};
  p.fails(p.api->copy_to_device(a, 96, x, 8), AMPX_STATUS_INVALID_ARGUMENT, "outside");
  p.fails(p.api->copy_to_host(x, a, 99, 2), AMPX_STATUS_INVALID_ARGUMENT, "outside");
  p.api->buffer_free(a);
  p.api->buffer_free(b);
}

// Runs a small Relu to show the device still works.
void expect_relu_runs(const Plugin& p) {
  NodeBuilder nb("Relu", "after");
  nb.input(F32, {64}).output(F32, {64});
  std::vector<double> v(64);
  for (int i = 0; i < 64; ++i) v[static_cast<size_t>(i)] = i - 32;
  const auto out = run_on(p, nb, {Tensor::of(F32, {64}, v)});
  ASSERT_EQ(out.size(), 1u);
  const auto got = out[0].values();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], std::max(0, i - 32));
}

TEST(CudaDevice, OutOfMemoryIsAStatusAndTheDeviceStaysUsable) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin p(plugin_path("cuda"));
  ampx_buffer* b = nullptr;
  p.fails(p.api->buffer_alloc(p.plugin, 0, uint64_t{1} << 50, &b), AMPX_STATUS_OUT_OF_MEMORY,
          "out of memory");
  EXPECT_EQ(b, nullptr);
  expect_relu_runs(p);
}

TEST(CudaDevice, BadNodesAndLaunchesGiveStatusesWithTheNode) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin p(plugin_path("cuda"));
  // Malformed: cpu_ref's validation message, with the node.
  NodeBuilder bad("Relu", "r2");
  bad.input(F32, {4, 4}).output(F32, {4, 5});
  ampx_kernel* k = nullptr;
  p.fails(p.api->kernel_prepare(p.plugin, 0, &bad.desc(), &k), AMPX_STATUS_INVALID_ARGUMENT,
          "node 'r2'");
  // An unsupported shape: rank 9.
  const std::vector<int64_t> dims9(9, 2);
  NodeBuilder deep("Relu", "r9");
  deep.input(F32, dims9).output(F32, dims9);
  const ampx_capability cap = p.capability(deep);
  EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(cap.note).find("rank 9"), std::string::npos) << cap.note;
  p.fails(p.api->kernel_prepare(p.plugin, 0, &deep.desc(), &k), AMPX_STATUS_UNSUPPORTED,
          "node 'r9'");
  // f64 compute: no kernel.
  NodeBuilder f64("Relu", "r3");
  f64.input(AMPX_DTYPE_F64, {4}).output(AMPX_DTYPE_F64, {4});
  EXPECT_EQ(p.capability(f64).support, AMPX_SUPPORT_UNSUPPORTED);
  p.fails(p.api->kernel_prepare(p.plugin, 0, &f64.desc(), &k), AMPX_STATUS_UNSUPPORTED,
          "node 'r3'");
  // A Gather index out of range: a data error found at launch.
  NodeBuilder g("Gather", "g1");
  g.input(F32, {5, 3}).input(AMPX_DTYPE_I64, {2}).output(F32, {2, 3});
  const std::vector<Tensor> gin = {Tensor::zeros(F32, {5, 3}),
                                   Tensor::of(AMPX_DTYPE_I64, {2}, {1, 7})};
  std::vector<ampx_buffer*> bufs;
  std::vector<ampx_buffer_view> views;
  for (const Tensor& t : gin) {
    ampx_buffer* b = nullptr;
    p.ok(p.api->buffer_alloc(p.plugin, 0, t.bytes.size(), &b));
    p.ok(p.api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()));
    bufs.push_back(b);
    views.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  ampx_buffer* yb = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 24, &yb));
  const ampx_buffer_view yv{sizeof(ampx_buffer_view), yb, 0};
  p.ok(p.api->kernel_prepare(p.plugin, 0, &g.desc(), &k));
  ASSERT_NE(k, nullptr);
  p.fails(p.api->kernel_launch(k, views.data(), 2, &yv, 1), AMPX_STATUS_INVALID_ARGUMENT,
          "node 'g1'");
  p.fails(p.api->kernel_launch(k, views.data(), 1, &yv, 1), AMPX_STATUS_INVALID_ARGUMENT,
          "expects 2 inputs");
  const ampx_buffer_view past{sizeof(ampx_buffer_view), yb, 8};
  p.fails(p.api->kernel_launch(k, views.data(), 2, &past, 1), AMPX_STATUS_INVALID_ARGUMENT,
          "node 'g1'");
  p.api->kernel_destroy(k);
  for (ampx_buffer* b : bufs) p.api->buffer_free(b);
  p.api->buffer_free(yb);
  expect_relu_runs(p);
}

TEST(CudaDevice, InPlaceAndMisalignedViewsAreStaged) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin p(plugin_path("cuda"));
  NodeBuilder nb("Relu", "r1");
  nb.input(F32, {4, 4}).output(F32, {4, 4});
  ampx_kernel* k = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
  ASSERT_NE(k, nullptr);
  ampx_buffer* b = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 64 + 2, &b));
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i - 8);
  // In place, then at a 2-byte offset (not float-aligned).
  for (uint64_t off : {uint64_t{0}, uint64_t{2}}) {
    p.ok(p.api->copy_to_device(b, off, x.data(), 64));
    const ampx_buffer_view v{sizeof(ampx_buffer_view), b, off};
    p.ok(p.api->kernel_launch(k, &v, 1, &v, 1));
    std::vector<float> y(16);
    p.ok(p.api->copy_to_host(y.data(), b, off, 64));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(y[static_cast<size_t>(i)], std::max(0, i - 8)) << off;
  }
  p.api->kernel_destroy(k);
  p.api->buffer_free(b);
}

}  // namespace
}  // namespace ampx::test
