// Device facts, options, the no-driver case, and error statuses (bad
// arguments, out of memory, launches that do not match the prepared node),
// each naming the device or node.
#include <cstdlib>

#include "vulkan_harness.hpp"

namespace ampx::test {
namespace {

ampx_device_props props_of(const Plugin& p) {
  ampx_device_props props{};
  props.struct_size = sizeof props;
  p.ok(p.api->device_props(p.plugin, 0, &props));
  return props;
}

TEST(VulkanDevice, PropsAndInfo) {
  Plugin p(plugin_path("vulkan"));
  EXPECT_STREQ(p.api->plugin_name, "vulkan");
  AMPX_SKIP_WITHOUT_VULKAN(p);
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  EXPECT_EQ(std::string(info.library).rfind("Vulkan 1.", 0), 0u) << info.library;
  const std::string note = info.note;
  for (const char* part : {"API 1.", "subgroup ", "shaderFloat16 ", "storageBuffer16BitAccess ",
                           "cooperative_matrix "})
    EXPECT_NE(note.find(part), std::string::npos) << part << " in " << note;
  const ampx_device_props props = props_of(p);
  EXPECT_STRNE(props.name, "");
  EXPECT_STRNE(props.vendor, "");
  EXPECT_NE(std::string(props.driver_version).find("Vulkan 1."), std::string::npos);
  const std::string fp = props.fingerprint;
  EXPECT_EQ(fp.rfind("vulkan/", 0), 0u) << fp;
  EXPECT_GT(props.memory_bytes, 0u);
  // The same hardware and driver give the same fingerprint.
  Plugin again(plugin_path("vulkan"));
  EXPECT_EQ(fp, std::string(props_of(again).fingerprint));
  expect_no_validation_errors(p);
}

// threads is accepted (unused: a GPU API), a malformed one refused, and
// keys of other plugins ignored (backend_api.h, "Options").
TEST(VulkanDevice, OptionsThreadsAcceptedUnknownIgnored) {
  { Plugin ok(plugin_path("vulkan"), "threads=2"); }
  { Plugin ok(plugin_path("vulkan"), "tiles=7;threads=1"); }
  void* lib = dlopen(plugin_path("vulkan").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  auto entry = reinterpret_cast<ampx_plugin_entry_fn>(dlsym(lib, AMPX_PLUGIN_ENTRY_SYMBOL));
  const ampx_plugin_api* api = entry();
  ampx_plugin_create_args args{};
  args.struct_size = sizeof args;
  args.options = "threads=many";
  ampx_plugin* plugin = nullptr;
  ampx_status* s = api->plugin_create(&args, &plugin);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api->status_code(s), AMPX_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api->status_message(s)).find("threads"), std::string::npos);
  api->status_destroy(s);
  EXPECT_EQ(plugin, nullptr);
  dlclose(lib);
}

// No ICD: zero devices and the reason, never a failed plugin_create.
TEST(VulkanDevice, NoDriverMeansZeroDevicesAndAReason) {
  const char* old = std::getenv("VK_ICD_FILENAMES");
  const std::string saved = old ? old : "";
  setenv("VK_ICD_FILENAMES", "/nonexistent/ampx_no_icd.json", 1);
  {
    Plugin p(plugin_path("vulkan"));
    EXPECT_EQ(device_count(p), 0);
    const std::string note = plugin_note(p);
    EXPECT_FALSE(note.empty());
    EXPECT_TRUE(note.find("no usable Vulkan driver") != std::string::npos ||
                note.find("no Vulkan device") != std::string::npos)
        << note;
    ampx_device_props props{};
    props.struct_size = sizeof props;
    p.fails(p.api->device_props(p.plugin, 0, &props), AMPX_STATUS_INVALID_ARGUMENT, "out of range");
  }
  if (old)
    setenv("VK_ICD_FILENAMES", saved.c_str(), 1);
  else
    unsetenv("VK_ICD_FILENAMES");
}

TEST(VulkanDevice, OutOfMemoryIsAStatus) {
  Plugin p(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(p);
  ampx_buffer* b = nullptr;
  p.fails(p.api->buffer_alloc(p.plugin, 0, uint64_t{1} << 50, &b), AMPX_STATUS_OUT_OF_MEMORY,
          "vulkan:0");
  EXPECT_EQ(b, nullptr);
  // The device is still usable.
  p.ok(p.api->buffer_alloc(p.plugin, 0, 64, &b));
  p.api->buffer_free(b);
  expect_no_validation_errors(p);
}

TEST(VulkanDevice, BadLaunchesNameTheNode) {
  Plugin p(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(p);
  NodeBuilder nb("Relu", "my_relu");
  nb.input(AMPX_DTYPE_F32, {4, 5}).output(AMPX_DTYPE_F32, {4, 5});
  ampx_kernel* k = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
  ASSERT_NE(k, nullptr);
  ampx_buffer* small = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 40, &small));
  ampx_buffer_view v{sizeof(ampx_buffer_view), small, 0};
  p.fails(p.api->kernel_launch(k, &v, 1, &v, 0), AMPX_STATUS_INVALID_ARGUMENT, "my_relu");
  p.fails(p.api->kernel_launch(k, &v, 1, &v, 1), AMPX_STATUS_INVALID_ARGUMENT, "my_relu");
  ampx_buffer* big = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 256, &big));
  ampx_buffer_view odd{sizeof(ampx_buffer_view), big, 2};  // not f32-aligned
  ampx_buffer_view out{sizeof(ampx_buffer_view), big, 128};
  p.fails(p.api->kernel_launch(k, &odd, 1, &out, 1), AMPX_STATUS_INVALID_ARGUMENT, "my_relu");
  // Views at offsets inside one buffer work (an arena).
  std::vector<float> x(20), y(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 9.5f;
  p.ok(p.api->copy_to_device(big, 16, x.data(), 80));
  ampx_buffer_view in{sizeof(ampx_buffer_view), big, 16};
  p.ok(p.api->kernel_launch(k, &in, 1, &out, 1));
  p.ok(p.api->synchronize(p.plugin, 0));
  p.ok(p.api->copy_to_host(y.data(), big, 128, 80));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
  p.api->kernel_destroy(k);
  p.api->buffer_free(small);
  p.api->buffer_free(big);
  // Out-of-range copies and device indices.
  p.fails(p.api->device_count(nullptr, nullptr), AMPX_STATUS_INVALID_ARGUMENT);
  ampx_buffer* b = nullptr;
  p.fails(p.api->buffer_alloc(p.plugin, 7, 16, &b), AMPX_STATUS_INVALID_ARGUMENT, "device index 7");
  expect_no_validation_errors(p);
}

TEST(VulkanDevice, DeviceToDeviceCopyIsOrderedWithLaunches) {
  Plugin p(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(p);
  ampx_buffer *a = nullptr, *b = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 64, &a));
  p.ok(p.api->buffer_alloc(p.plugin, 0, 64, &b));
  std::vector<float> x(16), y(16, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f;
  p.ok(p.api->copy_to_device(a, 0, x.data(), 64));
  NodeBuilder nb("Relu", "r");
  nb.input(AMPX_DTYPE_F32, {16}).output(AMPX_DTYPE_F32, {16});
  ampx_kernel* k = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
  ampx_buffer_view va{sizeof(ampx_buffer_view), a, 0}, vb{sizeof(ampx_buffer_view), b, 0};
  p.ok(p.api->kernel_launch(k, &va, 1, &vb, 1));       // b = relu(a)
  p.ok(p.api->copy_device_to_device(a, 0, b, 0, 64));  // a = b
  p.ok(p.api->copy_to_host(y.data(), a, 0, 64));       // flushes
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
  p.api->kernel_destroy(k);
  p.api->buffer_free(a);
  p.api->buffer_free(b);
  expect_no_validation_errors(p);
}

}  // namespace
}  // namespace ampx::test
