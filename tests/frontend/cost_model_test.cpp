// Predicted times from a device profile: interpolation by work between
// probed shapes, Casts per element, fallback to the plugin's hints; and
// capability answers from a profile alone.
#include <ampx/capability/calibration.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/capability/profile_capabilities.hpp>

#include <node_builder.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace ampx;
using namespace ampx::capability;

namespace {

// A node of op MatMul [m,k] x [k,n] in dtype dt: 2·m·n·k FLOPs.
test::NodeBuilder matmul(int64_t m, int64_t k, int64_t n, ampx_dtype dt = AMPX_DTYPE_F32) {
  test::NodeBuilder b("MatMul", "mm");
  b.input(dt, {m, k}).input(dt, {k, n}).output(dt, {m, n});
  return b;
}

DeviceProfile profile() {
  DeviceProfile p;
  p.fingerprint = "test/1/fp";
  p.device_id = "gpu:0";
  p.probed_at = "2026-11-29T00:00:00Z";
  // 2·100³ = 2e6 FLOPs in 10 us, 2·1000³ = 2e9 FLOPs in 1000 us.
  p.ops.push_back({"MatMul", "f32", "small", 2e6, 0, AMPX_SUPPORT_NATIVE, "", 10});
  p.ops.push_back({"MatMul", "f32", "large", 2e9, 0, AMPX_SUPPORT_NATIVE, "", 1000});
  p.ops.push_back({"MatMul", "f16", "small", 2e6, 0, AMPX_SUPPORT_NATIVE, "", 4});
  p.ops.push_back({"MatMul", "bf16", "small", 2e6, 0, AMPX_SUPPORT_UNSUPPORTED, "no bf16", -1});
  p.casts.push_back({"f32", "f16", 0.5});
  return p;
}

class FixedHints final : public CostModel {
 public:
  double node_us(const ampx_node_desc&) override { return 123; }
  std::string source() const override { return "hints"; }
  bool measured() const override { return false; }
};

TEST(ProfileCostModel, InterpolatesInLogLogBetweenProbedShapes) {
  auto m = make_profile_cost_model(profile(), std::make_unique<FixedHints>());
  EXPECT_TRUE(m->measured());
  EXPECT_NE(m->source().find("test/1/fp"), std::string::npos);
  EXPECT_NEAR(m->node_us(matmul(100, 100, 100).desc()), 10, 1e-9);
  EXPECT_NEAR(m->node_us(matmul(1000, 1000, 1000).desc()), 1000, 1e-6);
  // 2e7.5 FLOPs: halfway in log work between the points is halfway in log
  // time: sqrt(10 * 1000) = 100 us.
  const double w = 2 * std::pow(10.0, 7.5);
  const int64_t k = static_cast<int64_t>(std::llround(w / (2.0 * 1000 * 10)));
  EXPECT_NEAR(m->node_us(matmul(1000, k, 10).desc()), 100, 1.0);
  // Beyond the largest point: the last segment's slope (here 2/3).
  EXPECT_NEAR(m->node_us(matmul(1000, 8000, 1000).desc()), 1000 * std::pow(8.0, 2.0 / 3.0), 1e-3);
  // A single probed point (f16) scales linearly.
  EXPECT_NEAR(m->node_us(matmul(100, 200, 100, AMPX_DTYPE_F16).desc()), 8, 1e-9);
}

TEST(ProfileCostModel, CastsPerElementAndFallbackForTheUnprobed) {
  auto m = make_profile_cost_model(profile(), std::make_unique<FixedHints>());
  test::NodeBuilder cast("Cast", "c");
  cast.input(AMPX_DTYPE_F32, {1000, 10}).output(AMPX_DTYPE_F16, {1000, 10});
  cast.attr_int("to", AMPX_DTYPE_F16);
  EXPECT_NEAR(m->node_us(cast.desc()), 10000 * 0.5e-3, 1e-12);
  test::NodeBuilder relu("Relu", "r");
  relu.input(AMPX_DTYPE_F32, {10}).output(AMPX_DTYPE_F32, {10});
  EXPECT_EQ(m->node_us(relu.desc()), 123);                                 // not probed: the hint
  EXPECT_EQ(m->node_us(matmul(10, 10, 10, AMPX_DTYPE_BF16).desc()), 123);  // only unsupported
}

TEST(ProfileCapabilities, AnswersFromTheProfileAlone) {
  ProfileCapabilities caps(profile());
  EXPECT_EQ(caps.device_id(), "gpu:0");
  const auto f16 = caps.query(matmul(64, 64, 64, AMPX_DTYPE_F16).desc());
  EXPECT_EQ(f16.support, AMPX_SUPPORT_NATIVE);
  EXPECT_GT(f16.cost_us, 0);
  const auto bf16 = caps.query(matmul(64, 64, 64, AMPX_DTYPE_BF16).desc());
  EXPECT_EQ(bf16.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(bf16.note.find("no bf16"), std::string::npos);
  test::NodeBuilder relu("Relu", "r");
  relu.input(AMPX_DTYPE_F32, {10}).output(AMPX_DTYPE_F32, {10});
  const auto unknown = caps.query(relu.desc());
  EXPECT_EQ(unknown.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(unknown.note.find("no probe of f32 Relu"), std::string::npos);
}

}  // namespace

// In-context calibration: an exact measurement wins, anything else goes to
// the probe data and then the hints, and the origin says which.
TEST(CalibratedCostModel, PrefersAnExactMeasurementAndSaysWhereEachNumberCameFrom) {
  auto inner = std::shared_ptr<CostModel>(
      make_profile_cost_model(profile(), std::make_unique<FixedHints>()));
  Calibration cal;
  const double samples[] = {7.0, 5.0, 6.0, 50.0};  // one slow outlier
  cal.record(matmul(100, 100, 100).desc(), samples, "now");
  CalibratedCostModel m(std::move(cal), inner);
  const auto exact = m.estimate(matmul(100, 100, 100).desc());
  EXPECT_EQ(exact.origin, CostOrigin::kMeasured);
  EXPECT_NEAR(exact.us, 6.5, 1e-9);  // the median, not the mean
  const auto other_shape = m.estimate(matmul(100, 200, 100).desc());
  EXPECT_EQ(other_shape.origin, CostOrigin::kProbe);
  EXPECT_NEAR(other_shape.us, 10 * std::pow(2.0, 2.0 / 3.0), 1e-6);  // the probe slope
  test::NodeBuilder relu("Relu", "r");
  relu.input(AMPX_DTYPE_F32, {8}).output(AMPX_DTYPE_F32, {8});
  const auto hinted = m.estimate(relu.desc());
  EXPECT_EQ(hinted.origin, CostOrigin::kHint);
  EXPECT_EQ(hinted.us, 123);
  EXPECT_NE(m.source().find("in-context measurements (1 node signatures)"), std::string::npos);
  // The per-run correction is kept per run description, and may be
  // negative (a plain run shorter than its profiled steps).
  test::NodeBuilder run("Run", "run");
  run.input(AMPX_DTYPE_F32, {1, 8}).output(AMPX_DTYPE_F32, {1, 4}).attr_int("steps", 3);
  EXPECT_FALSE(m.run_overhead_us(run.desc()));
  const double shorter[] = {-30.0, -20.0, -25.0};
  m.calibration().record_run_overhead(run.desc(), shorter, "now");
  ASSERT_TRUE(m.run_overhead_us(run.desc()));
  EXPECT_NEAR(*m.run_overhead_us(run.desc()), -25.0, 1e-9);
  EXPECT_EQ(invalid_reason(*m.calibration().find(node_signature(run.desc()))), "");
}

TEST(NodeSignature, NamesEveryTensorAndAttributeButNeverTheNodeName) {
  auto conv = [](const char* name, int64_t pad, bool attrs_reversed) {
    test::NodeBuilder b("Conv2d", name);
    b.input(AMPX_DTYPE_F16, {1, 3, 8, 8}).input(AMPX_DTYPE_F16, {4, 3, 3, 3});
    b.output(AMPX_DTYPE_F16, {1, 4, 8, 8});
    if (attrs_reversed) {
      b.attr_ints("pads", {pad, pad, pad, pad}).attr_int("group", 1);
    } else {
      b.attr_int("group", 1).attr_ints("pads", {pad, pad, pad, pad});
    }
    return node_signature(b.desc());
  };
  EXPECT_EQ(conv("a", 1, false), conv("b", 1, true));
  EXPECT_NE(conv("a", 1, false), conv("a", 0, false));
  EXPECT_EQ(conv("a", 1, false),
            std::string(kSignatureVersion) +
                "|Conv2d|f16[1,3,8,8],f16[4,3,3,3]|f16[1,4,8,8]|group=1;pads=[1,1,1,1]");
  NodeTiming bad{conv("a", 1, false), "Conv2d", "f16", 0, 1, 0, "t"};
  EXPECT_EQ(invalid_reason(bad), "no samples");
  bad.samples = 2;
  EXPECT_EQ(invalid_reason(bad), "");
  bad.median_us = std::nan("");
  EXPECT_NE(invalid_reason(bad), "");
}
