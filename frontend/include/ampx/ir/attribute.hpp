// Node attributes: a small closed set of kinds, mirroring ampx_attr_kind.
#pragma once

#include <ampx/backend_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace ampx {

using Attribute =
    std::variant<int64_t, double, std::vector<int64_t>, std::vector<double>, std::string>;

enum class AttrKind { kInt, kFloat, kInts, kFloats, kString };

inline AttrKind attr_kind(const Attribute& a) {
  return static_cast<AttrKind>(a.index());
}
const char* attr_kind_name(AttrKind k);

// Ordered so that node descriptions and printed plans are deterministic.
using AttrMap = std::map<std::string, Attribute, std::less<>>;

// The attributes as the C ABI's ampx_attr array, in map order. The entries
// point into `attrs`, which must outlive them.
std::vector<ampx_attr> to_c_attrs(const AttrMap& attrs);
// The same into `out` (cleared first), reusing its capacity: the planner
// lowers every node several times.
void to_c_attrs(const AttrMap& attrs, std::vector<ampx_attr>& out);

}  // namespace ampx
