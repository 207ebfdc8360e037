// Profile JSON (schema ampx.profile/1): round trip, atomic save, and one-line
// errors naming the file and what is wrong.
#include "test_util.hpp"

#include <ampx/capability/profile_json.hpp>

#include <gmock/gmock.h>

#include <sys/stat.h>

namespace ampx::capability {
namespace {

using test::sample_profile;
using test::ScratchDir;
using ::testing::HasSubstr;

std::string load_error(const std::filesystem::path& file) {
  try {
    load_profile_file(file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST(ProfileJson, RoundTripKeepsEveryField) {
  const auto p = sample_profile("fp-a", 6);
  const auto j = to_json(p);
  EXPECT_TRUE(j["ops"][2]["time_us"].is_null());  // unsupported: not measured
  test::expect_same(profile_from_json(j), p);
}

TEST(ProfileJson, FileRoundTripAndSelection) {
  ScratchDir dir;
  auto a = sample_profile("fp-a"), b = sample_profile("fp-b");
  b.device_id = "other:0";
  save_profile_file(dir / "p.json", {a, b});
  const auto j = nlohmann::json::parse(test::slurp(dir / "p.json"));
  EXPECT_EQ(j["schema"], "ampx.profile/1");
  const auto loaded = load_profile_file(dir / "p.json");
  ASSERT_EQ(loaded.size(), 2u);
  test::expect_same(loaded[0], a);
  test::expect_same(loaded[1], b);
  EXPECT_EQ(select_profile(loaded, "fp-b")->fingerprint, "fp-b");
  EXPECT_EQ(select_profile(loaded, "other:0")->fingerprint, "fp-b");
  EXPECT_FALSE(select_profile(loaded, "nope:0"));
  // No temporary file left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(ProfileJson, OtherSchemaIsRefusedInOneLine) {
  ScratchDir dir;
  const auto file = dir / "profile.json";
  write(file, R"({"schema": "ampx.profile/2", "devices": []})");
  EXPECT_EQ(load_error(file), file.string() +
                                  ": schema 'ampx.profile/2' is not supported (expected "
                                  "ampx.profile/1)");
}

TEST(ProfileJson, BadJsonAndMissingFieldsNameFileAndPlace) {
  ScratchDir dir;
  const auto file = dir / "bad.json";
  write(file, "{\"schema\": ");
  EXPECT_THAT(load_error(file), HasSubstr(file.string() + ": not valid JSON"));

  auto j = profile_document({sample_profile("fp-a")});
  j["devices"][0]["ops"][1].erase("dtype");
  write(file, j.dump());
  const std::string e = load_error(file);
  EXPECT_THAT(e, HasSubstr(file.string()));
  EXPECT_THAT(e, HasSubstr("devices[0].ops[1]: missing field 'dtype'"));
  EXPECT_EQ(e.find('\n'), std::string::npos);

  write(file, R"({"devices": []})");
  EXPECT_THAT(load_error(file), HasSubstr("missing field 'schema'"));
  EXPECT_THAT(load_error(dir / "absent.json"), HasSubstr("absent.json: no such file"));
}

// Times, sizes and costs are finite and >= 0: a negative time or a number
// past double's range is refused, naming the file and the field, with no
// JSON library's internal tag; a FIFO is refused, never waited on.
TEST(ProfileJson, NegativeOrHugeNumbersAndFifosAreRefused) {
  ScratchDir dir;
  const auto file = dir / "p.json";
  auto j = profile_document({sample_profile("fp-a")});
  j["devices"][0]["ops"][0]["time_us"] = -3.0;
  write(file, j.dump());
  std::string e = load_error(file);
  EXPECT_THAT(
      e, HasSubstr("devices[0].ops[0]: field 'time_us' is -3.0: expected a finite number >= 0"));
  j = profile_document({sample_profile("fp-a")});
  j["devices"][0]["casts"][0]["ns_per_element"] = -1;
  write(file, j.dump());
  EXPECT_THAT(load_error(file), HasSubstr("field 'ns_per_element' is -1"));
  write(file, R"({"schema": "ampx.profile/1", "devices": [1e400]})");
  e = load_error(file);
  EXPECT_THAT(e, HasSubstr(file.string() + ": not valid JSON: number overflow"));
  EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  EXPECT_THAT(load_error(dir / "fifo.json"), HasSubstr("is a FIFO, not a regular file"));
}

}  // namespace
}  // namespace ampx::capability
