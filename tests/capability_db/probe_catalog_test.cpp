// The probe catalogue: every case is a well-formed node the reference kernels
// can run in every dtype (a malformed case would be silently "unsupported"
// on every device), the quick catalogue covers every op of the full one, and
// labels are unique per op.
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/opset/catalogue.hpp>
#include <ampx/opset/validate.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_support.hpp>

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
          << c.op << " [" << c.shape_class << "] " << plugin_support::dtype_name(dt) << ": " << why;
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

// Every attribute the op set declares, of every kind, reaches a probe node
// and reads back as plugins read it: FLOATS too (the recurrent ops'
// activation_alpha), which the probe's node description once lacked.
TEST(ProbeNodes, EveryAttributeKindOfTheOpSetReadsBack) {
  std::set<ampx_attr_kind> kinds;
  for (const opset::OpDef& op : opset::all_ops()) {
    NodeSpec n{std::string(op.name)};
    for (const opset::AttrDef& a : op.attrs) {
      const std::string name(a.name);
      switch (a.kind) {
        case AMPX_ATTR_INT:
          n.attr_int(name, 3);
          break;
        case AMPX_ATTR_FLOAT:
          n.attr_float(name, 0.5);
          break;
        case AMPX_ATTR_INTS:
          n.attr_ints(name, {1, 2});
          break;
        case AMPX_ATTR_FLOATS:
          n.attr_floats(name, {0.25, 4.0});
          break;
        case AMPX_ATTR_STRING:
          n.attr_str(name, "x");
          break;
      }
    }
    const plugin_support::NodeView v(n.desc());
    EXPECT_EQ(v.op_type(), op.name);
    ASSERT_EQ(v.num_attrs(), op.attrs.size()) << op.name;
    for (const opset::AttrDef& a : op.attrs) {
      const ampx_attr* got = v.find_attr(a.name);
      ASSERT_NE(got, nullptr) << op.name << "." << a.name;
      EXPECT_EQ(got->kind, a.kind) << op.name << "." << a.name;
      kinds.insert(got->kind);
      if (a.kind == AMPX_ATTR_INT) EXPECT_EQ(v.get_int(a.name, 0), 3);
      if (a.kind == AMPX_ATTR_FLOAT) EXPECT_EQ(v.get_float(a.name, 0), 0.5);
      if (a.kind == AMPX_ATTR_INTS) EXPECT_EQ(v.get_ints(a.name), (std::vector<int64_t>{1, 2}));
      if (a.kind == AMPX_ATTR_FLOATS)
        EXPECT_EQ(v.get_floats(a.name), (std::vector<double>{0.25, 4.0})) << op.name;
      if (a.kind == AMPX_ATTR_STRING) EXPECT_EQ(v.get_string(a.name), "x");
    }
  }
  EXPECT_EQ(kinds.size(), 5u);  // the op set uses every kind of the ABI
}

}  // namespace
}  // namespace ampx::capability
