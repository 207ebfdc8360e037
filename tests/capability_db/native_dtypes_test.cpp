// native_dtypes: a device's native dtypes per op, from its capability answers
// at the probe's quick cases. A scripted source shows the rules: listed in
// the op set's order, one entry per op of the catalogue, a dtype native only
// where every case of the op is, nothing but `native` counted.
#include <ampx/capability/native_dtypes.hpp>
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/opset/catalogue.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

namespace ampx::capability {
namespace {

bool grouped(const ampx_node_desc& n) {
  for (size_t i = 0; i < n.num_attrs; ++i)
    if (std::strcmp(n.attrs[i].name, "group") == 0) return n.attrs[i].i > 1;
  return false;
}

// f32 native everywhere but MatMul (unsupported in every dtype); f16 Conv2d
// native at every shape, bf16 Conv2d only when grouped (the probe's
// depthwise case, its last: the others are not); every other 16-bit node
// emulated.
class ScriptedSource final : public CapabilitySource {
 public:
  std::string device_id() const override { return "scripted:0"; }
  Answer query(const ampx_node_desc& n) override {
    ++queries;
    const std::string op = n.op_type;
    const ampx_dtype dt = n.inputs[0].dtype;
    if (op == "MatMul") return {AMPX_SUPPORT_UNSUPPORTED};
    if (dt == AMPX_DTYPE_F32) return {AMPX_SUPPORT_NATIVE};
    if (op == "Conv2d" && (dt == AMPX_DTYPE_F16 || grouped(n))) return {AMPX_SUPPORT_NATIVE};
    return {AMPX_SUPPORT_EMULATED};
  }
  int queries = 0;
};

TEST(NativeDtypes, ListsEachOpOfTheQuickCatalogueInTheOpSetsOrder) {
  ScriptedSource source;
  const auto listing = native_dtypes(source);
  std::set<std::string> catalogue_ops;
  for (const auto& c : probe_catalog(true)) catalogue_ops.insert(c.op);
  std::set<std::string> listed;
  int last_id = -1;
  for (const auto& e : listing) {
    ASSERT_NE(opset::find_op(e.op), nullptr) << e.op;
    const int id = static_cast<int>(opset::find_op(e.op)->id);
    EXPECT_GT(id, last_id) << e.op;
    last_id = id;
    listed.insert(e.op);
  }
  EXPECT_EQ(listed, catalogue_ops);
  // Each case asked once per dtype at most (nothing probed beyond the catalogue).
  EXPECT_LE(source.queries, static_cast<int>(probe_catalog(true).size() * 3));
}

TEST(NativeDtypes, NativeOnlyWhereEveryCaseIs) {
  ScriptedSource source;
  for (const auto& e : native_dtypes(source)) {
    std::vector<ampx_dtype> want{AMPX_DTYPE_F32};
    if (e.op == "Conv2d") want = {AMPX_DTYPE_F32, AMPX_DTYPE_F16};  // bf16: only the depthwise case
    if (e.op == "MatMul") want = {};
    EXPECT_EQ(e.native, want) << e.op;
  }
}

}  // namespace
}  // namespace ampx::capability
