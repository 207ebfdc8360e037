#include <ampx/capability/native_dtypes.hpp>
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/opset/catalogue.hpp>

#include <algorithm>
#include <map>

namespace ampx::capability {

std::vector<OpNativeDtypes> native_dtypes(CapabilitySource& source) {
  // Keyed by the op's id, so the listing follows the op set's order rather
  // than the catalogue's.
  std::map<opset::OpId, OpNativeDtypes> by_op;
  std::map<opset::OpId, std::vector<bool>> native_at_every_case;
  for (const ProbeCase& c : probe_catalog(true)) {
    const opset::OpDef* def = opset::find_op(c.op);
    if (!def) continue;  // not an op of the set: nothing to list it under
    auto [flags, first] =
        native_at_every_case.try_emplace(def->id, std::size(kNativeDtypesAsked), true);
    if (first) by_op[def->id].op = c.op;
    for (size_t k = 0; k < std::size(kNativeDtypesAsked); ++k) {
      if (!flags->second[k]) continue;  // already not native at another shape
      const NodeSpec node = c.make(kNativeDtypesAsked[k]);
      flags->second[k] = source.query(node.desc()).support == AMPX_SUPPORT_NATIVE;
    }
  }
  std::vector<OpNativeDtypes> out;
  for (auto& [id, entry] : by_op) {
    const std::vector<bool>& flags = native_at_every_case.at(id);
    for (size_t k = 0; k < std::size(kNativeDtypesAsked); ++k)
      if (flags[k]) entry.native.push_back(kNativeDtypesAsked[k]);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace ampx::capability
