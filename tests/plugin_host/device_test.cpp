// Devices, buffers and kernels against the C test plugins.
#include "test_support.hpp"

#include <gmock/gmock.h>

#include <array>
#include <cstring>
#include <numeric>

#include <unistd.h>

namespace ampx::plugins::test {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> pattern(size_t n, int seed = 1) {
  std::vector<std::byte> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((i * 7 + seed) & 0xff);
  return bytes;
}

std::span<const std::byte> as_bytes(const std::vector<float>& v) {
  return std::as_bytes(std::span<const float>(v));
}

class DeviceTest : public PluginHostTest {
 protected:
  PluginHost host_{only({broken_dir()})};
};

TEST_F(DeviceTest, MinimalBufferRoundTrip) {
  const Device& device = host_.device("c_minimal:0");
  Buffer buffer = device.allocate(64);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(buffer.size(), 64u);
  EXPECT_EQ(buffer.device_index(), 0);
  ASSERT_NE(buffer.host_ptr(), nullptr);

  const std::vector<std::byte> data = pattern(64);
  device.copy_to_device(buffer, 0, data);
  EXPECT_EQ(std::memcmp(buffer.host_ptr(), data.data(), data.size()), 0);

  std::vector<std::byte> back(64);
  device.copy_to_host(back, buffer, 0);
  EXPECT_EQ(back, data);

  // With offsets.
  const std::vector<std::byte> part = pattern(8, 99);
  device.copy_to_device(buffer, 56, part);
  std::vector<std::byte> tail(8);
  device.copy_to_host(tail, buffer, 56);
  EXPECT_EQ(tail, part);

  // Device to device, within one plugin.
  Buffer other = device.allocate(16);
  device.copy_device_to_device(other, 4, buffer, 0, 12);
  std::vector<std::byte> copied(12);
  device.copy_to_host(copied, other, 4);
  EXPECT_TRUE(std::equal(copied.begin(), copied.end(), data.begin()));

  device.synchronize();
}

TEST_F(DeviceTest, CopiesOutsideABufferAreRejectedByTheHost) {
  const Device& device = host_.device("c_minimal:0");
  Buffer buffer = device.allocate(16);
  const std::vector<std::byte> data = pattern(8);
  EXPECT_THROW(device.copy_to_device(buffer, 9, data), std::out_of_range);
  EXPECT_THROW(device.copy_to_device(buffer, UINT64_MAX, data), std::out_of_range);
  std::vector<std::byte> big(17);
  EXPECT_THROW(device.copy_to_host(big, buffer, 0), std::out_of_range);
  EXPECT_THROW(device.copy_device_to_device(buffer, 0, buffer, 8, 9), std::out_of_range);
  // Exactly at the end, and nothing at all, are fine.
  device.copy_to_device(buffer, 8, data);
  device.copy_to_device(buffer, 16, {});
}

TEST_F(DeviceTest, BuffersOfAnotherDeviceOrPluginAreRejected) {
  const Device& relu0 = host_.device("c_relu:0");
  const Device& relu1 = host_.device("c_relu:1");
  const Device& minimal = host_.device("c_minimal:0");
  Buffer on1 = relu1.allocate(8);
  Buffer on_minimal = minimal.allocate(8);
  const std::vector<std::byte> data = pattern(8);

  try {
    relu0.copy_to_device(on1, 0, data);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("belongs to c_relu:1, not to c_relu:0"));
  }
  EXPECT_THROW(relu0.copy_to_device(on_minimal, 0, data), std::invalid_argument);
  EXPECT_THROW(relu0.copy_device_to_device(on1, 0, on_minimal, 0, 8), std::invalid_argument);
  EXPECT_THROW(minimal.copy_to_device(Buffer(), 0, data), std::invalid_argument);

  // Any two devices of one plugin may copy between each other.
  Buffer on0 = relu0.allocate(8);
  relu0.copy_to_device(on0, 0, data);
  relu0.copy_device_to_device(on1, 0, on0, 0, 8);
  std::vector<std::byte> back(8);
  relu1.copy_to_host(back, on1, 0);
  EXPECT_EQ(back, data);
}

TEST_F(DeviceTest, OptionalMembersPastTheTableAreIgnored) {
  // c_old's table ends before buffer_host_ptr; the member it has there aborts.
  const Device& device = host_.device("c_old:0");
  Buffer buffer = device.allocate(8);
  EXPECT_EQ(buffer.host_ptr(), nullptr);
  const std::vector<std::byte> data = pattern(8);
  device.copy_to_device(buffer, 0, data);
  std::vector<std::byte> back(8);
  device.copy_to_host(back, buffer, 0);
  EXPECT_EQ(back, data);
}

TEST_F(DeviceTest, MinimalQueryAnswersUnsupported) {
  TestNode relu("Relu");
  const Capability capability = host_.device("c_minimal:0").query(relu.node);
  EXPECT_EQ(capability.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_LT(capability.cost_us, 0);
  EXPECT_EQ(capability.note, "c_minimal has no kernels");
}

TEST_F(DeviceTest, MinimalPrepareFailsWithThePluginsMessage) {
  TestNode relu("Relu");
  try {
    (void)host_.device("c_minimal:0").prepare(relu.node);
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(),
                 "c_minimal: kernel_prepare(Relu 'node1', device 0): c_minimal has no kernels "
                 "(asked for Relu)");
    EXPECT_EQ(e.plugin(), "c_minimal");
    EXPECT_EQ(e.operation(), "kernel_prepare(Relu 'node1', device 0)");
    EXPECT_EQ(e.code(), AMPX_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.plugin_message(), "c_minimal has no kernels (asked for Relu)");
  }
}

TEST_F(DeviceTest, NodeWithoutStructSizeIsRejected) {
  TestNode relu("Relu");
  relu.node.struct_size = 0;
  EXPECT_THROW((void)host_.device("c_relu:0").query(relu.node), std::invalid_argument);
  EXPECT_THROW((void)host_.device("c_relu:0").prepare(relu.node), std::invalid_argument);
}

TEST_F(DeviceTest, ReluKernelRuns) {
  const Device& device = host_.device("c_relu:1");
  TestNode relu("Relu", {2, 3});
  const Capability capability = device.query(relu.node);
  EXPECT_EQ(capability.support, AMPX_SUPPORT_NATIVE);
  EXPECT_DOUBLE_EQ(capability.cost_us, 0.006);
  EXPECT_EQ(capability.note, "");

  Kernel kernel = device.prepare(relu.node);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel.op_type(), "Relu");
  EXPECT_EQ(kernel.num_inputs(), 1u);
  EXPECT_EQ(kernel.num_outputs(), 1u);
  EXPECT_EQ(kernel.device_index(), 1);

  // Input and output packed into one arena, as the executor does.
  const std::vector<float> x{-1.5f, 0.0f, 2.0f, -0.25f, 3.5f, -7.0f};
  Buffer arena = device.allocate(2 * 6 * sizeof(float));
  device.copy_to_device(arena, 0, as_bytes(x));
  const std::array<ampx_buffer_view, 1> in{arena.view(0)};
  const std::array<ampx_buffer_view, 1> out{arena.view(6 * sizeof(float))};
  kernel.launch(in, out);
  device.synchronize();

  std::vector<float> y(6);
  device.copy_to_host(std::as_writable_bytes(std::span<float>(y)), arena, 6 * sizeof(float));
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 2.0f, 0.0f, 3.5f, 0.0f}));

  // c_relu has no kernel_launch_timed (ABI 1.1, optional): a timed launch
  // runs the kernel to completion on the host clock, and computes the same.
  device.copy_to_device(arena, 6 * sizeof(float), as_bytes(std::vector<float>(6, 9.0f)));
  const Kernel::Timing t = kernel.launch_timed(in, out);
  EXPECT_EQ(t.method, Kernel::TimingMethod::kHost);
  EXPECT_GE(t.us, 0.0);
  device.copy_to_host(std::as_writable_bytes(std::span<float>(y)), arena, 6 * sizeof(float));
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 2.0f, 0.0f, 3.5f, 0.0f}));
  // Nor a kernel-info extension (ABI 1.4, optional): no report, no error.
  EXPECT_FALSE(kernel.report().has_value());
}

TEST_F(DeviceTest, ReluQueryExplainsWhatItCannotDo) {
  TestNode sigmoid("Sigmoid");
  const Capability capability = host_.device("c_relu:0").query(sigmoid.node);
  EXPECT_EQ(capability.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_EQ(capability.note, "c_relu runs Relu only");

  TestNode half("Relu");
  half.tensor.dtype = AMPX_DTYPE_F16;
  EXPECT_EQ(host_.device("c_relu:0").query(half.node).note, "f32 only");
}

// A dtype of ABI 1.5 (u16) never reaches a plugin built against 1.0: the
// host answers `unsupported` for it and refuses the prepare (backend_api.h,
// the dtype rule), while a current plugin is asked as usual.
TEST_F(DeviceTest, NewerDtypesAreNotShownToOlderPlugins) {
  TestNode u16("Relu");
  u16.tensor.dtype = AMPX_DTYPE_U16;
  EXPECT_EQ(host_.device("c_relu:0").query(u16.node).note, "f32 only");
  const fs::path dir = fs::temp_directory_path() / ("ampx-abi10-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(AMPX_HOSTILE_PLUGIN_DIR) / "libampx_backend_c_relu_abi10.so",
                dir / "libampx_backend_c_relu_abi10.so", fs::copy_options::overwrite_existing);
  {
    PluginHost old{only({dir})};
    const Device& device = old.device("c_relu_abi10:0");
    const Capability cap = device.query(u16.node);
    EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED);
    EXPECT_THAT(cap.note, HasSubstr("newer than the plugin's ABI 1.0"));
    try {
      (void)device.prepare(u16.node);
      ADD_FAILURE() << "prepare of a u16 node on an ABI 1.0 plugin succeeded";
    } catch (const PluginError& e) {
      EXPECT_EQ(e.code(), AMPX_STATUS_UNSUPPORTED);
    }
    TestNode f32("Relu");
    EXPECT_EQ(device.query(f32.node).support, AMPX_SUPPORT_NATIVE);
  }
  fs::remove_all(dir);
}

TEST_F(DeviceTest, LaunchErrors) {
  const Device& device = host_.device("c_relu:0");
  TestNode relu("Relu", {4});
  Kernel kernel = device.prepare(relu.node);
  Buffer buffer = device.allocate(4 * sizeof(float));
  const std::array<ampx_buffer_view, 1> view{buffer.view()};

  // Counts and missing buffers: caught by the host.
  EXPECT_THROW(kernel.launch({}, view), std::invalid_argument);
  ampx_buffer_view no_buffer = buffer.view();
  no_buffer.buffer = nullptr;
  EXPECT_THROW(kernel.launch(view, std::span(&no_buffer, 1)), std::invalid_argument);

  // A view past the end of its buffer: caught by the plugin.
  const std::array<ampx_buffer_view, 1> late{buffer.view(4)};
  try {
    kernel.launch(view, late);
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.code(), AMPX_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("c_relu: kernel_launch(Relu 'node1', device 0): "));
    EXPECT_THAT(e.what(), HasSubstr("outside a buffer of 16 bytes"));
  }

  Kernel empty;
  EXPECT_THROW(empty.launch(view, view), std::logic_error);
}

TEST_F(DeviceTest, BufferAndKernelAreMoveOnlyHandles) {
  static_assert(!std::is_copy_constructible_v<Buffer>);
  static_assert(!std::is_copy_constructible_v<Kernel>);
  static_assert(std::is_nothrow_move_constructible_v<Buffer>);
  static_assert(std::is_nothrow_move_constructible_v<Kernel>);

  const Device& device = host_.device("c_relu:0");
  Buffer a = device.allocate(8);
  ampx_buffer* handle = a.handle();
  Buffer b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.handle(), handle);
  EXPECT_THROW((void)a.view(), std::logic_error);
  EXPECT_THROW((void)b.view(9), std::out_of_range);
  EXPECT_EQ(b.view(8).offset, 8u);
  EXPECT_EQ(b.view().struct_size, sizeof(ampx_buffer_view));

  b = device.allocate(4);  // frees the first buffer
  EXPECT_EQ(b.size(), 4u);
  b.reset();
  EXPECT_FALSE(b);

  TestNode relu("Relu");
  Kernel k1 = device.prepare(relu.node);
  Kernel k2;
  k2 = std::move(k1);
  EXPECT_FALSE(k1);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(k2);
  EXPECT_EQ(k2.op_type(), "Relu");
}

TEST_F(DeviceTest, PluginErrorsFromAllocation) {
  // The plugin refuses an absurd size: its status becomes a PluginError.
  try {
    (void)host_.device("c_minimal:0").allocate(UINT64_MAX);
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.code(), AMPX_STATUS_OUT_OF_MEMORY);
    EXPECT_THAT(e.what(), HasSubstr("c_minimal: buffer_alloc("));
  }
}

// ABI 1.6 native handles, checked by the host: a plugin without the
// extension (c_minimal) and a device answering UNSUPPORTED (c_relu:0) give
// nullopt, the data-parallel exchange's host path; an answer naming an API
// the ABI does not (c_relu:1) is refused in one line naming the plugin.
TEST_F(DeviceTest, NativeHandlesAbsentUnsupportedOrMalformed) {
  const Device& minimal = host_.device("c_minimal:0");
  EXPECT_FALSE(minimal.native().has_value());
  Buffer b = minimal.allocate(64);
  EXPECT_THROW((void)minimal.native_ptr(b), std::logic_error);

  const Device& relu0 = host_.device("c_relu:0");
  EXPECT_FALSE(relu0.native().has_value());
  const Device& relu1 = host_.device("c_relu:1");
  try {
    (void)relu1.native();
    FAIL() << "a native_device answer with api 7 was accepted";
  } catch (const PluginLoadError& e) {
    EXPECT_THAT(e.what(), HasSubstr("c_relu: native_device(device 1) answered api 7"));
  }
  // The buffer's address is the plugin's answer, for its own buffers only.
  Buffer r = relu1.allocate(64);
  EXPECT_EQ(relu1.native_ptr(r), r.host_ptr());
  EXPECT_THROW((void)relu0.native_ptr(r), std::invalid_argument);
}

}  // namespace
}  // namespace ampx::plugins::test
