// The probe catalogue: every case is a well-formed node the reference kernels
// can run in every dtype (a malformed case would be silently "unsupported"
// on every device), the quick catalogue covers every op of the full one, and
// labels are unique per op.
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/opset/validate.hpp>
#include <ampx/opset/work.hpp>

#include <gtest/gtest.h>

#include <set>

namespace ampx::capability {
namespace {

TEST(ProbeCatalog, EveryCaseRunsOnTheReferenceKernelsInEveryDtype) {
  for (const auto& c : probe_catalog(false))
    for (const ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16}) {
      const NodeSpec n = c.make(dt);
      EXPECT_EQ(n.op_type(), c.op);
      std::string why;
      EXPECT_TRUE(opset::is_valid(n.desc(), &why))
          << c.op << " [" << c.shape_class << "] " << dtype_name(dt) << ": " << why;
      EXPECT_GT(opset::estimate_work(n.desc()).bytes, 0) << c.op;
    }
}

TEST(ProbeCatalog, QuickCoversEveryOpWithFewerCases) {
  std::set<std::string> full_ops, quick_ops;
  std::set<std::pair<std::string, std::string>> labels;
  const auto full = probe_catalog(false), quick = probe_catalog(true);
  for (const auto& c : full) {
    full_ops.insert(c.op);
    EXPECT_TRUE(labels.insert({c.op, c.shape_class}).second) << c.op << " " << c.shape_class;
  }
  for (const auto& c : quick) quick_ops.insert(c.op);
  EXPECT_EQ(full_ops, quick_ops);
  EXPECT_LT(quick.size(), full.size());
  // The op set of docs/OPS.md, Cast aside (probed separately, per dtype pair).
  EXPECT_EQ(full_ops.size(), 27u);
}

TEST(ProbeCatalog, OpsFilterAndCasts) {
  const auto some = probe_catalog(true, {"Relu", "Conv2d"});
  for (const auto& c : some) EXPECT_TRUE(c.op == "Relu" || c.op == "Conv2d");
  EXPECT_EQ(some.size(), 4u);  // Relu: 1 quick shape; Conv2d: 3x3, 1x1, depthwise
  const NodeSpec cast = make_cast(AMPX_DTYPE_F16, AMPX_DTYPE_BF16, 1000);
  EXPECT_TRUE(opset::is_valid(cast.desc(), nullptr));
}

}  // namespace
}  // namespace ampx::capability
