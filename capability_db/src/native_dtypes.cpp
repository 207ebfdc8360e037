#include <ampx/capability/native_dtypes.hpp>
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/opset/catalogue.hpp>

#include <array>
#include <map>

namespace ampx::capability {
namespace {

struct Entry {
  std::string op;
  // Per asked dtype: native at every case seen so far.
  std::array<bool, std::size(kNativeDtypesAsked)> native{};
};

}  // namespace

std::vector<OpNativeDtypes> native_dtypes(CapabilitySource& source) {
  // Keyed by the op's id, so the listing follows the op set's order rather
  // than the catalogue's.
  std::map<opset::OpId, Entry> by_op;
  for (const ProbeCase& c : probe_catalog(true)) {
    const opset::OpDef* def = opset::find_op(c.op);
    if (!def) continue;  // not an op of the set: nothing to list it under
    auto [it, first] = by_op.try_emplace(def->id);
    Entry& e = it->second;
    if (first) {
      e.op = c.op;
      e.native.fill(true);
    }
    for (size_t k = 0; k < e.native.size(); ++k) {
      if (!e.native[k]) continue;  // already not native at another shape
      const NodeSpec node = c.make(kNativeDtypesAsked[k]);
      e.native[k] = source.query(node.desc()).support == AMPX_SUPPORT_NATIVE;
    }
  }
  std::vector<OpNativeDtypes> out;
  out.reserve(by_op.size());
  for (auto& [id, e] : by_op) {
    OpNativeDtypes listed{std::move(e.op), {}};
    for (size_t k = 0; k < e.native.size(); ++k)
      if (e.native[k]) listed.native.push_back(kNativeDtypesAsked[k]);
    out.push_back(std::move(listed));
  }
  return out;
}

}  // namespace ampx::capability
