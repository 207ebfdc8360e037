// `ampx report`: the JSON form validates against its published schema
// (docs/schemas/ampx.report-1.schema.json, checked with Python's jsonschema),
// the HTML form draws its charts in a real browser (headless Chromium), the
// text and Markdown forms hold the tables, and bad arguments fail cleanly.
#include "cli_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>

using nlohmann::json;
using ::testing::HasSubstr;

namespace ampx_cli_test {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("ampx_report_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// Native 16-bit on test_native, so O1-O3 differ from O0 and Casts appear.
const std::string kArgs =
    kTestDir + " report builtin:mlp --device test_native:0,cpu_ref:0 " + "--iters 1 --warmup 0";

TEST(Report, JsonMatchesItsSchema) {
  const auto r = ampx(kArgs + " --format json", kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path out = temp_dir() / "report.json";
  std::ofstream(out) << r.out;
  const std::string cmd = "/usr/bin/python3 -m jsonschema -i '" + out.string() + "' '" +
                          AMPX_SOURCE_DIR + "/docs/schemas/ampx.report-1.schema.json' 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "schema validation failed: " << cmd;

  const auto j = json::parse(r.out);
  ASSERT_EQ(j["models"].size(), 1u);
  const auto& devices = j["models"][0]["devices"];
  ASSERT_EQ(devices.size(), 2u);
  const auto& native = devices[0];
  EXPECT_EQ(native["device"], "test_native:0");
  ASSERT_EQ(native["levels"].size(), 4u);
  EXPECT_EQ(native["levels"][0]["level"], "O0");
  EXPECT_EQ(native["levels"][0]["measured_ratio_to_o0"], 1.0);
  EXPECT_GT(native["levels"][2]["effective_16bit"].get<int>(), 0);  // O2
  EXPECT_GT(native["levels"][2]["max_rel_error"].get<double>(), 0.0);
  // cpu_ref emulates 16-bit: O2 there is the f32 plan.
  EXPECT_EQ(devices[1]["levels"][2]["effective_16bit"], 0);
  EXPECT_EQ(devices[1]["levels"][2]["kept_fp32_no_native_kernel"], 7);
  // Coverage: Gemm on cpu_ref in f16 is emulated for all 4 nodes.
  bool found = false;
  for (const auto& row : j["models"][0]["coverage"])
    if (row["op"] == "Gemm") {
      found = true;
      EXPECT_EQ(row["nodes"], 4);
      EXPECT_EQ(row["cells"]["cpu_ref:0"]["f16"]["emulated"], 4);
      EXPECT_EQ(row["cells"]["test_native:0"]["f16"]["native"], 4);
    }
  EXPECT_TRUE(found);
}

TEST(Report, HtmlDrawsItsChartsInABrowser) {
  const fs::path html = temp_dir() / "report.html";
  const auto r = ampx(kArgs + " --format html -o '" + html.string() + "'", kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(html));
  const std::string page = slurp(html);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"))
      << "no network references besides the SVG namespace";
  EXPECT_EQ(page.find("https://"), std::string::npos);
  // Render it: the inline script draws the charts and records that on <body>.
  const fs::path dom = temp_dir() / "dom.html";
  const std::string cmd = "chromium --headless --no-sandbox --disable-gpu --dump-dom 'file://" +
                          html.string() + "' > '" + dom.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string rendered = slurp(dom);
  EXPECT_THAT(rendered, HasSubstr("data-charts-drawn=\"2\""));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rendered, m, std::regex("data-bars-drawn=\"([0-9]+)\"")));
  // 2 devices x 4 levels: 2 coverage bars each (zeros drawn as hairlines)
  // and 2 time bars each.
  EXPECT_EQ(std::stoi(m[1]), 2 * 4 * 2 + 2 * 4 * 2);
  EXPECT_THAT(rendered, HasSubstr("<svg"));
}

TEST(Report, TextAndMarkdownHoldTheTables) {
  const auto text = ampx(kArgs, kNative);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("== builtin:mlp (7 nodes) =="));
  EXPECT_THAT(text.out, HasSubstr("16-bit coverage by op"));
  EXPECT_THAT(text.out, HasSubstr("f32: no native kernel"));
  const auto md = ampx(kArgs + " --format md --no-run", kNative);
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("| level | dtype |"));
  EXPECT_THAT(md.out, ::testing::Not(HasSubstr("measured")));
}

// Probe data measured on one machine, carried as a profile file: plans and
// reports for that device use its answers and times, without the device.
TEST(Report, FromAProfileFile) {
  const fs::path dir = temp_dir();
  const std::string db = (dir / "cap.db").string(), prof = (dir / "prof.json").string();
  fs::remove(db);
  const auto probe =
      ampx("probe --quick --device cpu_ref:0 --ops MatMul,Gemm,Relu,Cast --db '" + db + "'");
  ASSERT_EQ(probe.code, 0) << probe.err;
  ASSERT_EQ(ampx("db export '" + prof + "' --db '" + db + "'").code, 0);

  // plan with the database: costs from the probe data of that fingerprint.
  const auto with_db = ampx("plan builtin:mlp --amp O2 --format json --db '" + db + "'");
  ASSERT_EQ(with_db.code, 0) << with_db.err;
  EXPECT_THAT(json::parse(with_db.out)["cost_source"].get<std::string>(), HasSubstr("probe data"));
  // plan with the profile file.
  const auto planned =
      ampx("plan builtin:mlp --amp O2 --format json --device cpu_ref:0 --profile '" + prof + "'");
  ASSERT_EQ(planned.code, 0) << planned.err;
  const auto pj = json::parse(planned.out);
  EXPECT_THAT(pj["cost_source"].get<std::string>(), HasSubstr("probe data"));
  EXPECT_GT(pj["predicted_us"].get<double>(), 0.0);
  EXPECT_EQ(pj["summary"]["kept_fp32_no_native_kernel"], 7);  // cpu_ref: emulated, per the profile

  const auto r = ampx("report builtin:mlp --format json --profile '" + prof + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  const auto& dev = j["models"][0]["devices"][0];
  EXPECT_EQ(dev["device"], "cpu_ref:0");
  EXPECT_THAT(dev["source"].get<std::string>(), HasSubstr("profile"));
  EXPECT_TRUE(dev["levels"][0]["measured_ms"].is_null()) << "a profile is not run";
  EXPECT_GT(dev["levels"][0]["predicted_ms"].get<double>(), 0.0);

  expect_one_line_error(ampx("plan builtin:mlp --device gpu:7 --profile '" + prof + "'"), 2,
                        "no device 'gpu:7'");
  std::ofstream(dir / "bad.json") << R"({"schema": "ampx.profile/9", "devices": []})";
  expect_one_line_error(ampx("report builtin:mlp --profile '" + (dir / "bad.json").string() + "'"),
                        1, "ampx.profile/9");
}

TEST(Report, BadArgumentsFailOnOneLine) {
  expect_one_line_error(ampx("report builtin:mlp --device nosuch:0"), 2, "nosuch:0");
  expect_one_line_error(ampx("report builtin:mlp --format pdf"), 2, "--format");
  expect_one_line_error(ampx("report builtin:nosuch --device cpu_ref:0 --no-run"), 2, "nosuch");
  const auto r = ampx("report builtin:mlp --device cpu_ref:0 --no-run -o /nonexistent/dir/r.txt");
  expect_one_line_error(r, 1, "/nonexistent/dir/r.txt");
}

}  // namespace
}  // namespace ampx_cli_test
