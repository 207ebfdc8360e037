// Node attributes: a small closed set of kinds, mirroring ampx_attr_kind.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/node_desc_builder.hpp>

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

// Adds the attributes to a node description, in map order, borrowed:
// `attrs` must outlive every use of the description.
void borrow_attrs(const AttrMap& attrs, plugin_support::NodeDescBuilder& desc);

}  // namespace ampx
