// The Session's log level is the one its plugins get
// (ampx_plugin_create_args::log_level, SessionOptions::log_level): test_native
// reports the level it was created at in its plugin note when
// AMPX_TEST_NATIVE_LOG_LEVEL=1 (tests/test_plugins/test_native/plugin.cpp).
#include <ampx/session/session.hpp>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace ampx {
namespace {

class SessionLogLevel : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("AMPX_TEST_NATIVE_LOG_LEVEL", "1", 1); }
  void TearDown() override {
    ::unsetenv("AMPX_TEST_NATIVE_LOG_LEVEL");
    spdlog::set_level(saved_);
  }
  spdlog::level::level_enum saved_ = spdlog::get_level();
};

SessionOptions at_level(std::optional<int> level) {
  return {.devices = "test_native:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}, .log_level = level};
}

std::string note_of(const Session& session) {
  return session.host().device("test_native:0").plugin_note();
}

TEST_F(SessionLogLevel, EveryLevelReachesThePlugin) {
  for (int level : {0, 1, 2, 3, 4, 6}) {
    const Session session(at_level(level));
    EXPECT_EQ(note_of(session), "log_level=" + std::to_string(level));
  }
}

TEST_F(SessionLogLevel, SessionsSideBySideKeepTheirOwnLevels) {
  const Session trace(at_level(0));
  const Session errors(at_level(4));
  EXPECT_EQ(note_of(trace), "log_level=0");
  EXPECT_EQ(note_of(errors), "log_level=4");
}

TEST_F(SessionLogLevel, UnsetIsTheProcesssLevelWhenTheSessionIsMade) {
  spdlog::set_level(spdlog::level::debug);
  const Session debug(at_level(std::nullopt));
  spdlog::set_level(spdlog::level::err);
  const Session errors(at_level(std::nullopt));
  EXPECT_EQ(note_of(debug), "log_level=1");
  EXPECT_EQ(note_of(errors), "log_level=4");
}

}  // namespace
}  // namespace ampx
