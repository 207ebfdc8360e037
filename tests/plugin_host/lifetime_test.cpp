// Ownership: plugins stay loaded exactly as long as something references them.
#include "test_support.hpp"

#include <array>
#include <cstring>
#include <optional>

namespace ampx::plugins::test {
namespace {

const std::vector<std::string> kAllTestPlugins = {
    "c_minimal",      "c_old",       "c_future",       "c_relu",
    "broken_noentry", "broken_abi",  "broken_small",   "broken_init",
    "broken_null",    "broken_name", "broken_devices", "broken_entry_null",
    "broken_ext"};

using LifetimeTest = PluginHostTest;

TEST_F(LifetimeTest, DestroyingTheHostUnloadsEveryPlugin) {
  for (const std::string& name : kAllTestPlugins) {
    ASSERT_FALSE(is_loaded(test_plugin(name))) << name << " is loaded before the test";
  }
  {
    const PluginHost host(only({broken_dir()}));
    EXPECT_TRUE(is_loaded(test_plugin("c_minimal")));
    EXPECT_TRUE(is_loaded(test_plugin("c_relu")));
    // Skipped plugins are unloaded at once.
    EXPECT_FALSE(is_loaded(test_plugin("broken_abi")));
    EXPECT_FALSE(is_loaded(test_plugin("broken_init")));
    EXPECT_FALSE(is_loaded(test_plugin("broken_devices")));
  }
  for (const std::string& name : kAllTestPlugins) {
    EXPECT_FALSE(is_loaded(test_plugin(name))) << name << " is still loaded";
  }
}

TEST_F(LifetimeTest, ABufferOutlivesTheHost) {
  Buffer buffer;
  std::optional<Device> device;
  {
    const PluginHost host(only({broken_dir()}));
    device = host.device("c_minimal:0");
    buffer = device->allocate(16);
  }
  ASSERT_TRUE(is_loaded(test_plugin("c_minimal")));
  EXPECT_FALSE(is_loaded(test_plugin("c_relu")));  // nothing of it survived

  // Still fully usable.
  const std::vector<std::byte> data(16, std::byte{0x5a});
  device->copy_to_device(buffer, 0, data);
  std::vector<std::byte> back(16);
  device->copy_to_host(back, buffer, 0);
  EXPECT_EQ(back, data);

  device.reset();
  EXPECT_TRUE(is_loaded(test_plugin("c_minimal")));  // the buffer still holds it
  buffer.reset();
  EXPECT_FALSE(is_loaded(test_plugin("c_minimal")));
}

TEST_F(LifetimeTest, AKernelOutlivesTheHost) {
  Kernel kernel;
  Buffer x;
  Buffer y;
  {
    const PluginHost host(only({broken_dir()}));
    const Device& device = host.device("c_relu:0");
    TestNode relu("Relu", {3});
    kernel = device.prepare(relu.node);
    x = device.allocate(3 * sizeof(float));
    y = device.allocate(3 * sizeof(float));
  }
  ASSERT_TRUE(is_loaded(test_plugin("c_relu")));

  const std::array<float, 3> in{-1.0f, 2.0f, -3.0f};
  std::memcpy(x.host_ptr(), in.data(), sizeof(in));
  const std::array<ampx_buffer_view, 1> inputs{x.view()};
  const std::array<ampx_buffer_view, 1> outputs{y.view()};
  kernel.launch(inputs, outputs);
  std::array<float, 3> out{};
  std::memcpy(out.data(), y.host_ptr(), sizeof(out));
  EXPECT_EQ(out, (std::array<float, 3>{0.0f, 2.0f, 0.0f}));

  x.reset();
  y.reset();
  EXPECT_TRUE(is_loaded(test_plugin("c_relu")));  // the kernel still holds it
  kernel = Kernel();
  EXPECT_FALSE(is_loaded(test_plugin("c_relu")));
}

TEST_F(LifetimeTest, TwoHostsShareTheLibraryButNotTheInstance) {
  std::optional<PluginHost> first(std::in_place, only({broken_dir()}));
  const PluginHost second(only({broken_dir()}));
  Buffer from_first = first->device("c_minimal:0").allocate(8);
  Buffer from_second = second.device("c_minimal:0").allocate(8);
  first.reset();
  EXPECT_TRUE(is_loaded(test_plugin("c_minimal")));
  const std::vector<std::byte> data(8, std::byte{1});
  second.device("c_minimal:0").copy_to_device(from_second, 0, data);
  from_first.reset();
}

TEST_F(LifetimeTest, AMovedHostKeepsItsPlugins) {
  PluginHost moved(only({broken_dir()}));
  const PluginHost host = std::move(moved);
  EXPECT_EQ(host.plugins().size(), 4u);
  Buffer buffer = host.device("c_minimal:0").allocate(4);
  EXPECT_TRUE(buffer);
}

}  // namespace
}  // namespace ampx::plugins::test
