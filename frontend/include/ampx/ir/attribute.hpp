// Node attributes: a small closed set of kinds, mirroring ampx_attr_kind.
#pragma once

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

}  // namespace ampx
