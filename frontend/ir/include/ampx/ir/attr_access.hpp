// Typed attribute lookup with defaults. Kind mismatches are GraphErrors:
// the verifier has normally caught them already.
#pragma once

#include <ampx/ir/attribute.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ampx {

int64_t attr_int(const AttrMap& attrs, std::string_view name, int64_t fallback);
double attr_float(const AttrMap& attrs, std::string_view name, double fallback);
std::vector<int64_t> attr_ints(const AttrMap& attrs, std::string_view name,
                               std::vector<int64_t> fallback = {});
std::string attr_string(const AttrMap& attrs, std::string_view name, std::string fallback);

}  // namespace ampx
