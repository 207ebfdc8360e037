#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/attribute.hpp>
#include <ampx/ir/graph.hpp>

#include <type_traits>

namespace ampx {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt:
      return "int";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kInts:
      return "ints";
    case AttrKind::kFloats:
      return "floats";
    case AttrKind::kString:
      return "string";
  }
  return "?";
}

std::vector<ampx_attr> to_c_attrs(const AttrMap& attrs) {
  std::vector<ampx_attr> out;
  to_c_attrs(attrs, out);
  return out;
}

void to_c_attrs(const AttrMap& attrs, std::vector<ampx_attr>& out) {
  out.clear();
  out.reserve(attrs.size());
  for (const auto& [key, value] : attrs) {
    ampx_attr a{};
    a.struct_size = sizeof(ampx_attr);
    a.name = key.c_str();
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            a.kind = AMPX_ATTR_INT;
            a.i = v;
          } else if constexpr (std::is_same_v<T, double>) {
            a.kind = AMPX_ATTR_FLOAT;
            a.f = v;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            a.kind = AMPX_ATTR_INTS;
            a.ints = v.data();
            a.count = v.size();
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            a.kind = AMPX_ATTR_FLOATS;
            a.floats = v.data();
            a.count = v.size();
          } else {
            a.kind = AMPX_ATTR_STRING;
            a.s = v.c_str();
          }
        },
        value);
    out.push_back(a);
  }
}

namespace {
template <typename T>
const T* find_typed(const AttrMap& attrs, std::string_view name, AttrKind want) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return nullptr;
  if (const T* v = std::get_if<T>(&it->second)) return v;
  throw GraphError("attribute '" + std::string(name) + "' must be " + attr_kind_name(want) +
                   ", got " + attr_kind_name(attr_kind(it->second)));
}
}  // namespace

int64_t attr_int(const AttrMap& attrs, std::string_view name, int64_t fallback) {
  const auto* v = find_typed<int64_t>(attrs, name, AttrKind::kInt);
  return v ? *v : fallback;
}
double attr_float(const AttrMap& attrs, std::string_view name, double fallback) {
  const auto* v = find_typed<double>(attrs, name, AttrKind::kFloat);
  return v ? *v : fallback;
}
std::vector<int64_t> attr_ints(const AttrMap& attrs, std::string_view name,
                               std::vector<int64_t> fallback) {
  const auto* v = find_typed<std::vector<int64_t>>(attrs, name, AttrKind::kInts);
  return v ? *v : fallback;
}
std::string attr_string(const AttrMap& attrs, std::string_view name, std::string fallback) {
  const auto* v = find_typed<std::string>(attrs, name, AttrKind::kString);
  return v ? *v : fallback;
}

}  // namespace ampx
