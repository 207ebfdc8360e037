// Status ownership and PluginError formatting, against a fake status table.
#include <ampx/plugins/status.hpp>

#include <gtest/gtest.h>

#include <string>

namespace ampx::plugins {
namespace {

// A fake plugin's status functions: counts what it frees.
struct FakeStatus {
  ampx_status_code code;
  const char* message;
};
int g_destroyed = 0;

ampx_status* make(ampx_status_code code, const char* message) {
  return reinterpret_cast<ampx_status*>(new FakeStatus{code, message});
}

ampx_plugin_api fake_api() {
  ampx_plugin_api api{};
  api.struct_size = sizeof(api);
  api.status_code = [](const ampx_status* s) {
    return reinterpret_cast<const FakeStatus*>(s)->code;
  };
  api.status_message = [](const ampx_status* s) {
    return reinterpret_cast<const FakeStatus*>(s)->message;
  };
  api.status_destroy = [](ampx_status* s) {
    ++g_destroyed;
    delete reinterpret_cast<FakeStatus*>(s);
  };
  return api;
}

class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override { g_destroyed = 0; }
  ampx_plugin_api api_ = fake_api();
};

TEST_F(StatusTest, NullIsOk) {
  Status status(api_, nullptr);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), AMPX_STATUS_OK);
  EXPECT_EQ(status.message(), "");
  EXPECT_NO_THROW(status.throw_if_error("p", "op"));
  EXPECT_EQ(g_destroyed, 0);
}

TEST_F(StatusTest, ReleasesExactlyOnce) {
  {
    Status status(api_, make(AMPX_STATUS_INTERNAL, "boom"));
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), AMPX_STATUS_INTERNAL);
    EXPECT_EQ(status.message(), "boom");
    Status moved = std::move(status);
    EXPECT_TRUE(status.ok());  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(g_destroyed, 1);
}

TEST_F(StatusTest, ThrowsOneLinePluginError) {
  Status status(api_, make(AMPX_STATUS_UNSUPPORTED, "no kernel\nfor Conv2d\r\n"));
  try {
    status.throw_if_error("cpu_x", "kernel_prepare(Conv2d 'c1', device 0)");
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(), "cpu_x: kernel_prepare(Conv2d 'c1', device 0): no kernel for Conv2d");
    EXPECT_EQ(e.code(), AMPX_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.plugin(), "cpu_x");
    EXPECT_EQ(e.plugin_message(), "no kernel for Conv2d");
    // Copies share the details and cannot throw.
    static_assert(std::is_nothrow_copy_constructible_v<PluginError>);
    const PluginError copy = e;
    EXPECT_STREQ(copy.what(), e.what());
    EXPECT_EQ(copy.operation(), e.operation());
  }
  EXPECT_EQ(g_destroyed, 1);  // released before the throw
  EXPECT_TRUE(status.ok());
}

TEST_F(StatusTest, NonNullOkAndMissingMessagesStillFail) {
  Status status(api_, make(AMPX_STATUS_OK, nullptr));
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), AMPX_STATUS_INTERNAL);
  EXPECT_EQ(status.message(), "(no message)");
  EXPECT_THROW(status.throw_if_error("p", "op"), PluginError);
}

TEST(StatusCodeNames, AllCodes) {
  EXPECT_EQ(to_string(AMPX_STATUS_OK), "OK");
  EXPECT_EQ(to_string(AMPX_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_EQ(to_string(AMPX_STATUS_UNSUPPORTED), "UNSUPPORTED");
  EXPECT_EQ(to_string(AMPX_STATUS_OUT_OF_MEMORY), "OUT_OF_MEMORY");
  EXPECT_EQ(to_string(AMPX_STATUS_UNAVAILABLE), "UNAVAILABLE");
  EXPECT_EQ(to_string(AMPX_STATUS_INTERNAL), "INTERNAL");
  EXPECT_EQ(to_string(static_cast<ampx_status_code>(42)), "UNKNOWN(42)");
}

}  // namespace
}  // namespace ampx::plugins
