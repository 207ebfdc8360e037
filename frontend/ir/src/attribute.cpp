#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/attribute.hpp>
#include <ampx/ir/graph.hpp>

#include <span>
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

void borrow_attrs(const AttrMap& attrs, plugin_support::NodeDescBuilder& desc) {
  // Not a structured binding: lambdas capture those only from C++20 compilers
  // newer than Debian's clang (the fuzz preset's).
  for (const auto& entry : attrs) {
    const std::string& key = entry.first;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>)
            desc.borrow_attr(key.c_str(), v.c_str());
          else if constexpr (std::is_arithmetic_v<T>)
            desc.borrow_attr(key.c_str(), v);
          else
            desc.borrow_attr(key.c_str(), std::span<const typename T::value_type>(v));
        },
        entry.second);
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
