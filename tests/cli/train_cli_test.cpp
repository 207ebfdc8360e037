// `ampx train` as a user runs it: the digits to the accuracy,
// kill -9 and resume ending in the same weights, bad input refused in one
// line.
#include <nlohmann/json.hpp>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <tolerances.hpp>
#include "cli_support.hpp"

using namespace ampx_cli_test;
namespace fs = std::filesystem;

// Inside ampx_cli_test: its ampx() hides the ampx namespace of tolerances.hpp.
namespace ampx_cli_test {
namespace {

bool have_digits() {
  const char* env = std::getenv("AMPX_DIGITS_CSV");
  return fs::exists(
      env && *env ? env : "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz");
}

// 40 samples of 64 features for builtin:mlp-sized... a [N, 1, 8, 8] set for
// digits-cnn, with the given labels and one optional NaN.
fs::path digits_like(const std::string& name, std::vector<int64_t> labels, bool nan = false,
                     int64_t label_count = -1) {
  const fs::path d = fresh_dir(name);
  const auto n = static_cast<int64_t>(labels.size());
  std::vector<float> x(static_cast<size_t>(n * 64));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 17) / 16.0f;
  if (nan) x[64 * 2 + 5] = NAN;
  write_npy(d / "inputs.npy", "<f4", {n, 1, 8, 8}, x.data(), x.size() * 4);
  if (label_count >= 0) labels.resize(static_cast<size_t>(label_count));
  write_npy(d / "labels.npy", "<i8", {static_cast<int64_t>(labels.size())}, labels.data(),
            labels.size() * 8);
  return d;
}

const std::string kTrain = kTestDir + " train builtin:digits-cnn --device cpu_ref:0";

TEST(TrainCli, DigitsReachNinetySevenPercentAtO0) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn is not installed";
  const Result r = ampx(kTrain +
                        " --data builtin:digits --epochs 12 --optimizer sgd --lr 0.05 "
                        "--momentum 0.9 --amp O0 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  double accuracy = 0;
  int epochs = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["event"] == "epoch") {
      ++epochs;
      accuracy = j["eval_accuracy"].get<double>();
    }
  }
  EXPECT_EQ(epochs, 12);
  EXPECT_GE(accuracy, 0.97);
}

// The `epoch` records of a --format json run's output.
std::vector<nlohmann::json> epoch_records(const std::string& out) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["event"] == "epoch") records.push_back(std::move(j));
  }
  return records;
}

// Train 3 epochs straight; separately kill -9 the run as soon as epoch 1's
// checkpoint exists, and resume: the final checkpoints are the same bytes
// (weights, optimizer and loss-scale state), and epochs 2 and 3 report the
// same losses, scales and overflow counts.
void expect_kill_and_resume_to_match(const std::string& args, const std::string& name) {
  const fs::path straight = fresh_dir(name + "_straight"), killed = fresh_dir(name + "_killed");
  const Result full = ampx(args + " --format json --checkpoint " + straight.string());
  ASSERT_EQ(full.code, 0) << full.err;

  const fs::path pidfile = killed / "pid";
  const std::string cmd = "env AMPX_CAPABILITY_DB='" + (killed / "c.db").string() +
                          "' AMPX_PLUGIN_PATH= '" AMPX_CLI_PATH "' " + args + " --checkpoint " +
                          killed.string() + " > /dev/null 2>&1 & echo $! > " + pidfile.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  pid_t pid = 0;
  for (int i = 0; i < 500 && pid == 0; ++i) {
    std::ifstream(pidfile) >> pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(pid, 0);
  bool epoch2_before_kill = false;
  for (int i = 0; i < 60000; ++i) {
    if (fs::exists(killed / "epoch-0001.ampxckpt")) {
      epoch2_before_kill = fs::exists(killed / "epoch-0002.ampxckpt");
      ::kill(pid, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(fs::exists(killed / "epoch-0001.ampxckpt"));
  EXPECT_FALSE(epoch2_before_kill) << "the run was not killed in epoch 2";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(killed / "epoch-0003.ampxckpt"));
  const Result resumed =
      ampx(args + " --format json --checkpoint " + killed.string() + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const std::string a = slurp(straight / "epoch-0003.ampxckpt");
  const std::string b = slurp(killed / "epoch-0003.ampxckpt");
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "the resumed run ends with other weights";
  const auto want = epoch_records(full.out), got = epoch_records(resumed.out);
  ASSERT_EQ(want.size(), 3u);
  ASSERT_EQ(got.size(), 2u);
  for (size_t e = 0; e < 2; ++e)
    for (const char* key : {"epoch", "train_loss", "loss_scale", "overflow_steps"})
      EXPECT_EQ(got[e][key], want[e + 1][key]) << key << " of epoch " << e + 2;
}

TEST(TrainCli, KillDashNineAndResumeEndsWithIdenticalWeights) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn is not installed";
  expect_kill_and_resume_to_match(
      kTrain + " --data builtin:digits --epochs 3 --optimizer adam --lr 0.002 --seed 5", "adam");
}

// f16 everywhere (O3, cpu_ref's emulation really rounds to f16) with a
// scale that overflows f16 at 2^16 and grows back to it every 15 clean
// steps: overflows in every epoch, and the resumed run continues the same
// scale trajectory.
TEST(TrainCli, KillDashNineAndResumeReproducesARunWithOverflows) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn is not installed";
  const std::string args = kTrain +
                           " --data builtin:digits --lr 0.05 --momentum 0.9 --seed 2 --amp O3 "
                           "--capability-blind --loss-scale dynamic:65536,2,15";
  expect_kill_and_resume_to_match(args + " --epochs 3", "overflow");
  const Result r = ampx(args + " --epochs 1 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto records = epoch_records(r.out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_GT(records[0]["overflow_steps"].get<int>(), 0);
  EXPECT_EQ(records[0]["skipped_steps"], records[0]["overflow_steps"]);
}

// --diagnose-overflow in JSON: every overflowed step names its layer, and
// the done record summarises the layers.
TEST(TrainCli, DiagnosticsNameTheLayerOfEveryOverflowedStep) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn is not installed";
  const std::string args = kTrain +
                           " --data builtin:digits --epochs 1 --amp O3 --capability-blind "
                           "--loss-scale dynamic:1048576,2,2000 --diagnose-overflow";
  const Result r = ampx(args + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto records = epoch_records(r.out);
  ASSERT_EQ(records.size(), 1u);
  const auto& overflows = records[0]["overflows"];
  ASSERT_EQ(overflows.size(), records[0]["overflow_steps"].get<size_t>());
  ASSERT_GE(overflows.size(), 5u);  // 2^20 .. 2^16
  for (const auto& e : overflows) {
    EXPECT_FALSE(e["layer"].get<std::string>().empty());
    EXPECT_EQ(e["kind"], "gradient");
    EXPECT_EQ(e["dtype"], "f16");
    EXPECT_EQ(e["dtype_max"], 65504.0);
    EXPECT_FALSE(e["counts_for_fallback"].get<bool>()) << "the scale is still backing off";
  }
  EXPECT_EQ(overflows[0]["step"], 1);
  std::string last = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  last = last.substr(last.rfind('\n') + 1);
  const auto done = nlohmann::json::parse(last);
  ASSERT_EQ(done["event"], "done");
  EXPECT_EQ(done["diagnostics"]["half"], "f16");
  // digits-cnn's layers but its 3 Relus (selections, not probed), and the loss.
  EXPECT_EQ(done["diagnostics"]["layers"].size(), 9u);
  EXPECT_TRUE(done["diagnostics"]["fallbacks"].empty());
  const Result text = ampx(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("  overflow at step 1: layer '"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("overflow diagnostics (9 layers"), std::string::npos) << text.out;
  expect_one_line_error(ampx(args + " --auto-fallback --fallback-window 0"), 2,
                        "--fallback-window");
}

// --report: two runs in one self-contained file, drawn in a real browser:
// the loss of each, the scale, and a mark per skipped step.
TEST(TrainCli, TheCurvesReportHoldsEveryRunAndDrawsInABrowser) {
  const fs::path data = digits_like("report", {1, 2, 3, 4, 5, 6, 7, 8});
  const fs::path dir = fresh_dir("report_out");
  const std::string html = (dir / "curves.html").string();
  const std::string base =
      kTrain + " --epochs 2 --batch 4 --data " + data.string() + " --report " + html;
  ASSERT_EQ(ampx(base).code, 0);
  const Result o3 = ampx(base +
                         " --amp O3 --capability-blind --loss-scale dynamic:1048576,2,3 "
                         "--diagnose-overflow");
  ASSERT_EQ(o3.code, 0) << o3.err;
  ASSERT_EQ(ampx(base).code, 0) << "the same label again replaces its run";
  std::ifstream f(html);
  const std::string page((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("O0 f16, loss scale none"), std::string::npos);
  EXPECT_NE(page.find("O3 f16 (capability-blind), loss scale dynamic:1048576,2,3"),
            std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  // The diagnosed run lists its layers with the most underflow.
  EXPECT_NE(page.find("\"underflow\":[{\"layer\""), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));
  const fs::path dom = dir / "dom.html";
  const std::string cmd = "chromium --headless --no-sandbox --disable-gpu --dump-dom 'file://" +
                          html + "' > '" + dom.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream d(dom);
  const std::string rendered((std::istreambuf_iterator<char>(d)), std::istreambuf_iterator<char>());
  EXPECT_NE(rendered.find("data-charts-drawn=\"3\""), std::string::npos);
  EXPECT_NE(rendered.find("data-series-drawn=\"2\""), std::string::npos);
  // All four steps (2^20 .. 2^17) overflow f16's seed: four marks.
  EXPECT_NE(rendered.find("data-skips-drawn=\"4\""), std::string::npos) << rendered.substr(0, 400);
  // A directory that does not exist: refused before any training.
  expect_one_line_error(ampx(kTrain + " --epochs 1 --batch 4 --data " + data.string() +
                             " --report " + (dir / "no" / "such.html").string()),
                        2, "--report: directory");
  // A file that is not a report is never overwritten.
  const fs::path other = dir / "notes.html";
  std::ofstream(other) << "<html>mine</html>";
  expect_one_line_error(ampx(kTrain + " --epochs 1 --batch 4 --data " + data.string() +
                             " --report " + other.string()),
                        1, "not an ampx training report");
  std::ifstream n(other);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(n)), std::istreambuf_iterator<char>()),
            "<html>mine</html>");
}

TEST(TrainCli, BadLossScalesAndAnotherScheduleOnResumeAreOneLineErrors) {
  const fs::path ok = digits_like("scale_ok", {1, 2, 3, 4});
  const std::string base = kTrain + " --epochs 1 --batch 2 --data " + ok.string();
  expect_one_line_error(ampx(base + " --loss-scale fixed:0"), 2,
                        "--loss-scale: loss scale 'fixed:0': the scale must be positive");
  expect_one_line_error(ampx(base + " --loss-scale dynamic:1024,1"), 2,
                        "the factor must be greater than 1");
  expect_one_line_error(ampx(base + " --loss-scale dynamic:1024,2,0"), 2,
                        "the window must be at least 1 step");
  expect_one_line_error(ampx(base + " --loss-scale often"), 2, "unknown loss scale 'often'");
  const fs::path dir = fresh_dir("scale_ckpt");
  ASSERT_EQ(ampx(base + " --loss-scale fixed:256 --checkpoint " + dir.string()).code, 0);
  expect_one_line_error(
      ampx(kTrain + " --epochs 2 --batch 2 --data " + ok.string() +
           " --loss-scale dynamic --resume --checkpoint " + dir.string()),
      1, "the checkpoint's loss scale is fixed:256, this run's dynamic:16777216,2,2000");
  const Result reset =
      ampx(kTrain + " --epochs 2 --batch 2 --data " + ok.string() +
           " --loss-scale dynamic --resume --reset-loss-scale --checkpoint " + dir.string());
  EXPECT_EQ(reset.code, 0) << reset.err;
  // A scale f16 cannot hold, fixed: every step overflows and nothing can
  // change, so the run stops itself after 100 of them, in one line.
  const fs::path stop_dir = fresh_dir("scale_stop");
  expect_one_line_error(ampx(kTrain + " --epochs 60 --batch 2 --data " + ok.string() +
                             " --amp O3 --capability-blind --loss-scale fixed:65536 --checkpoint " +
                             stop_dir.string()),
                        1, "training stopped at step 100: 100 steps in a row had non-finite");
  EXPECT_TRUE(fs::exists(stop_dir / "epoch-0049.ampxckpt"));
  EXPECT_FALSE(fs::exists(stop_dir / "epoch-0050.ampxckpt"));
}

TEST(TrainCli, ACheckpointOfAnotherRunIsRefused) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn is not installed";
  const fs::path dir = fresh_dir("other");
  ASSERT_EQ(ampx(kTrain + " --data builtin:digits --epochs 1 --checkpoint " + dir.string()).code,
            0);
  expect_one_line_error(
      ampx(kTrain + " --data builtin:digits --epochs 2 --lr 0.1 --resume --checkpoint " +
           dir.string()),
      1, "epoch-0001.ampxckpt: the checkpoint was written with other options");
  // Truncated.
  const fs::path f = dir / "epoch-0001.ampxckpt";
  const std::string bytes = slurp(f);
  std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  expect_one_line_error(
      ampx(kTrain + " --data builtin:digits --epochs 2 --resume --checkpoint " + dir.string()), 1,
      "epoch-0001.ampxckpt: tensor");
  // Issue 36: flipped bytes in a tensor's data (4 at a time) were read
  // back as weights; the tensor's CRC-32 finds them.
  std::string flipped = bytes;
  for (size_t k = 0; k < 4; ++k) flipped[flipped.size() - 100 + k] ^= 0x5a;
  std::ofstream(f, std::ios::binary | std::ios::trunc) << flipped;
  expect_one_line_error(
      ampx(kTrain + " --data builtin:digits --epochs 2 --resume --checkpoint " + dir.string()), 1,
      "': its data does not match its checksum (the file is corrupt)");
  std::ofstream(f, std::ios::binary | std::ios::trunc) << "garbage";
  expect_one_line_error(
      ampx(kTrain + " --data builtin:digits --epochs 2 --resume --checkpoint " + dir.string()), 1,
      "epoch-0001.ampxckpt: truncated");
}

// The last record of a --format json run's output (the `done` record).
nlohmann::json done_record(const std::string& out) {
  std::string last = out.substr(0, out.find_last_not_of('\n') + 1);
  return nlohmann::json::parse(last.substr(last.rfind('\n') + 1));
}

// Options that only exist to be refused, not ignored: --profile and
// --no-tuned (a training step is planned through the Session, which neither
// reads a profile nor applies a tuned plan: they were accepted and ignored).
TEST(TrainCli, ProfileAndNoTunedAreRefusedNotIgnored) {
  const fs::path ok = digits_like("refused", {1, 2, 3, 4});
  const std::string base = kTrain + " --epochs 1 --batch 2 --data " + ok.string();
  expect_one_line_error(ampx(base + " --profile /nonexistent.json"), 2, "--profile");
  expect_one_line_error(ampx(base + " --no-tuned"), 2, "--no-tuned");
  ASSERT_EQ(ampx(base).code, 0);
}

// The global --log-level reaches the plugins `ampx train` runs on (its
// Session's level, ampx_plugin_create_args::log_level): test_native, told
// to, logs the level it was created at, at debug (plugin_log).
TEST(TrainCli, LogLevelReachesThePlugins) {
  const fs::path data = digits_like("log_level", {1, 2, 3, 4});
  const std::string train =
      " train builtin:digits-cnn --device test_native:0 --epochs 1 "
      "--batch 2 --data " +
      data.string();
  const std::string env = "AMPX_TEST_NATIVE_LOG_LEVEL=1";
  const Result debug = ampx(kTestDir + " --log-level debug" + train, env);
  ASSERT_EQ(debug.code, 0) << debug.err;
  EXPECT_THAT(debug.err, ::testing::HasSubstr("[ampx test_native] created at host log level 1"));
  const Result trace = ampx(kTestDir + " --log-level trace" + train, env);
  ASSERT_EQ(trace.code, 0) << trace.err;
  EXPECT_THAT(trace.err, ::testing::HasSubstr("[ampx test_native] created at host log level 0"));
  const Result warn = ampx(kTestDir + train, env);
  ASSERT_EQ(warn.code, 0) << warn.err;
  EXPECT_THAT(warn.err, ::testing::Not(::testing::HasSubstr("created at host log level")));
}

// The training losses of every epoch of a --format json run.
std::vector<double> epoch_losses(const std::string& out) {
  std::vector<double> losses;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("train_loss") && j.contains("epoch")) losses.push_back(j["train_loss"]);
  }
  return losses;
}

// --eager (node by node: it used to be refused, and before that ran the
// compiled step under its name) trains, and like the compiled step: the
// same epoch losses within an f32 model's tolerance.
TEST(TrainCli, EagerTrainsLikeTheCompiledStep) {
  const fs::path data = digits_like("eager", {1, 2, 3, 4, 5, 6, 7, 8});
  const std::string base =
      kTrain + " --amp O0 --epochs 2 --batch 4 --format json --data " + data.string();
  const Result compiled = ampx(base);
  const Result eager = ampx("--log-level info " + base + " --eager");
  ASSERT_EQ(compiled.code, 0) << compiled.err;
  ASSERT_EQ(eager.code, 0) << eager.err;
  EXPECT_THAT(eager.err, ::testing::HasSubstr("(eager: node by node)"));
  const std::vector<double> want = epoch_losses(compiled.out), got = epoch_losses(eager.out);
  ASSERT_EQ(want.size(), 2u) << compiled.out;
  ASSERT_EQ(got.size(), want.size()) << eager.out;
  for (size_t e = 0; e < got.size(); ++e)
    EXPECT_NEAR(got[e], want[e], ampx::test::model_tolerance(AMPX_DTYPE_F32) * std::abs(want[e]))
        << "epoch " << e + 1;
}

// --dtype auto trains in the 16-bit type `ampx plan --dtype auto` picks for
// the same model and device (it used to train in f16 whatever the device):
// test_native answering only bf16 natively, then only f16, and onednn:0
// where it is built (bf16 on an AVX512-BF16 or AMX CPU, f16 elsewhere).
// The loss scale follows the type: none for bf16, dynamic for f16 at O2.
TEST(TrainCli, DtypeAutoTrainsInTheTypePlanChooses) {
  const fs::path ok = digits_like("dtype_auto", {1, 2, 3, 4});
  const auto check = [&](const std::string& device, const std::string& env,
                         const std::string& want) {
    SCOPED_TRACE(device + " " + env);
    const Result plan = ampx(kTestDir + " plan builtin:digits-cnn --amp O2 --dtype auto --device " +
                                 device + " --format json",
                             env);
    if (plan.code != 0 && plan.err.find("no device") != std::string::npos) return;
    ASSERT_EQ(plan.code, 0) << plan.err;
    const std::string chosen = nlohmann::json::parse(plan.out)["dtype_auto"]["chosen"];
    if (!want.empty()) EXPECT_EQ(chosen, want);
    const Result train =
        ampx(kTestDir +
                 " train builtin:digits-cnn --amp O2 --dtype auto --epochs 1 --batch 2 "
                 "--format json --device " +
                 device + " --data " + ok.string(),
             env);
    ASSERT_EQ(train.code, 0) << train.err;
    const nlohmann::json done = done_record(train.out);
    EXPECT_EQ(done["dtype"], chosen);
    EXPECT_EQ(done["loss_scale"]["schedule"].get<std::string>().rfind("dynamic", 0) == 0,
              chosen == "f16")
        << done["loss_scale"];
    const Result text =
        ampx(kTestDir +
                 " train builtin:digits-cnn --amp O2 --dtype auto --epochs 1 --batch 2 "
                 "--device " +
                 device + " --data " + ok.string(),
             env);
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("amp O2 " + chosen + " (--dtype auto)"), std::string::npos) << text.out;
  };
  check("test_native:0", "AMPX_TEST_NATIVE_OPS='*' AMPX_TEST_NATIVE_DTYPES=bf16", "bf16");
  check("test_native:0", "AMPX_TEST_NATIVE_OPS='*' AMPX_TEST_NATIVE_DTYPES=f16", "f16");
  check("onednn:0", kOnednnLsanEnv, "");
}

// Every optimizer and data flag reaches the step: a run with it ends in
// another loss than the same run without it (the formulas are checked in
// tests/train/trainer_options_test.cpp); --freeze trains fewer weights,
// --keep keeps that many checkpoints, --loss mse takes f32 targets.
TEST(TrainCli, EveryTrainingFlagChangesTheRun) {
  const fs::path ok = digits_like("flags", {1, 2, 3, 4, 5, 6, 7, 8});
  const std::string base =
      kTrain + " --epochs 2 --batch 4 --lr 0.1 --format json --data " + ok.string();
  const auto last_loss = [&](const std::string& extra) {
    const Result r = ampx(base + extra);
    EXPECT_EQ(r.code, 0) << extra << ": " << r.err;
    const auto records = epoch_records(r.out);
    return records.empty() ? nlohmann::json() : records.back()["train_loss"];
  };
  const nlohmann::json plain = last_loss("");
  ASSERT_TRUE(plain.is_number());
  EXPECT_EQ(last_loss(""), plain) << "the run is deterministic";
  // Pairs of runs that differ in one flag only.
  const std::pair<const char*, const char*> pairs[] = {
      {"", " --clip-grad-norm 0.001"},
      {"", " --momentum 0.9"},
      {" --momentum 0.9", " --momentum 0.9 --nesterov"},
      {"", " --weight-decay 0.5"},
      {"", " --seed 2"},
      {"", " --optimizer adam"},
      {" --optimizer adam --weight-decay 0.5", " --optimizer adamw --weight-decay 0.5"}};
  for (const auto& [a, b] : pairs)
    EXPECT_NE(last_loss(b), a[0] ? last_loss(a) : plain) << "'" << a << "' against '" << b << "'";
  const auto weights = [&](const std::string& extra) {
    const Result r = ampx(kTrain + " --epochs 1 --batch 4 --data " + ok.string() + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out.substr(0, r.out.find(" parameters)"));
  };
  EXPECT_NE(weights(" --freeze 'conv1*'"), weights("")) << "--freeze";
  const fs::path kept = fresh_dir("flags_keep");
  ASSERT_EQ(ampx(kTrain + " --epochs 3 --batch 4 --keep 1 --data " + ok.string() +
                 " --checkpoint " + kept.string())
                .code,
            0);
  EXPECT_FALSE(fs::exists(kept / "epoch-0002.ampxckpt"));
  EXPECT_TRUE(fs::exists(kept / "epoch-0003.ampxckpt"));
  // MSE against one-hot f32 targets [N, 10] (cross entropy refuses them).
  const fs::path mse = digits_like("flags_mse", {1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<float> onehot(80, 0.0f);
  for (int i = 0; i < 8; ++i) onehot[static_cast<size_t>(i * 10 + i + 1)] = 1.0f;
  write_npy(mse / "labels.npy", "<f4", {8, 10}, onehot.data(), onehot.size() * 4);
  const Result r = ampx(kTrain + " --epochs 1 --batch 4 --loss mse --data " + mse.string());
  EXPECT_EQ(r.code, 0) << r.err;
}

// A run resumed from its checkpoints ends where the uninterrupted run does
// when the automatic fallback is at work: the layers moved to f32 stay
// there (metadata amp_fallback) and the fallback windows carry over
// (fallback_windows), so a layer with two counted overflows before a
// checkpoint moves at the same step after it. fc2's gradients overflow f16
// at this fixed scale (two steps per epoch). A checkpoint of another seed
// is refused.
TEST(TrainCli, AResumedRunKeepsItsFallbacksAndTheirWindows) {
  const fs::path ok = digits_like("fallback_resume", {1, 2, 3, 4, 5, 6, 7, 8});
  const std::string args = kTrain +
                           " --batch 4 --amp O2 --capability-blind --loss-scale "
                           "fixed:65536 --auto-fallback --format json --data " +
                           ok.string();
  const fs::path straight = fresh_dir("fallback_straight"), split = fresh_dir("fallback_split");
  const Result full = ampx(args + " --epochs 3 --checkpoint " + straight.string());
  ASSERT_EQ(full.code, 0) << full.err;
  const nlohmann::json fallbacks = done_record(full.out)["diagnostics"]["fallbacks"];
  ASSERT_FALSE(fallbacks.empty()) << full.out;
  std::string last_out;
  for (int epochs = 1; epochs <= 3; ++epochs) {
    const Result r = ampx(args + " --epochs " + std::to_string(epochs) + " --checkpoint " +
                          split.string() + (epochs > 1 ? " --resume" : ""));
    ASSERT_EQ(r.code, 0) << r.err;
    last_out = r.out;
  }
  EXPECT_EQ(done_record(last_out)["diagnostics"]["fallbacks"], fallbacks);
  EXPECT_TRUE(slurp(straight / "epoch-0003.ampxckpt") == slurp(split / "epoch-0003.ampxckpt"))
      << "the resumed run ends with other weights";
  expect_one_line_error(ampx(args + " --epochs 4 --seed 7 --resume --checkpoint " + split.string()),
                        1, "epoch-0003.ampxckpt: the checkpoint was written with --seed 0");
}

TEST(TrainCli, BadDataIsOneLineNamingFileAndSample) {
  const fs::path out_of_range = digits_like("range", {1, 2, 10, 3});
  expect_one_line_error(ampx(kTrain + " --epochs 1 --data " + out_of_range.string()), 2,
                        "label 10 of sample 2 is outside [0, 10)");
  const fs::path nan = digits_like("nan", {1, 2, 3, 4}, true);
  expect_one_line_error(ampx(kTrain + " --epochs 1 --data " + nan.string()), 2,
                        "sample 2 has a NaN value");
  const fs::path mismatch = digits_like("count", {1, 2, 3, 4}, false, 3);
  expect_one_line_error(ampx(kTrain + " --epochs 1 --data " + mismatch.string()), 2,
                        "4 samples but 3 labels");
  const fs::path ok = digits_like("ok", {1, 2, 3, 4});
  expect_one_line_error(
      ampx("train builtin:mlp --device cpu_ref:0 --epochs 1 --data " + ok.string()), 2,
      "do not fit the model's input");
  expect_one_line_error(ampx(kTrain + " --epochs 1 --lr 0 --data " + ok.string()), 2,
                        "learning rate 0 must be a positive number");
  expect_one_line_error(ampx(kTrain + " --epochs 1 --optimizer lamb --data " + ok.string()), 2,
                        "'lamb' is not one of sgd, adam, adamw");
}

// Issue 36: a --checkpoint that is a dangling symbolic link leaked
// "filesystem error: ... File exists", after the first epoch's work.
TEST(TrainCli, ACheckpointDirectoryThatCannotBeOneIsRefusedFirst) {
  const fs::path data = digits_like("dangling-data", {1, 2, 3, 4});
  const fs::path link = fresh_dir("dangling") / "ckpt";
  fs::create_symlink(link.parent_path() / "nowhere", link);
  const Result r =
      ampx(kTrain + " --epochs 1 --data " + data.string() + " --checkpoint " + link.string());
  expect_one_line_error(r, 1, link.string() + ": a symbolic link to '");
  EXPECT_THAT(r.err, ::testing::HasSubstr("which does not exist"));
  EXPECT_THAT(r.out, ::testing::Not(::testing::HasSubstr("epoch")));
}

}  // namespace
}  // namespace ampx_cli_test
