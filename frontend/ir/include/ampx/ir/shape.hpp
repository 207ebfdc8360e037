// Static tensor shapes. Every dimension is known once a graph is built;
// symbolic dimensions are pinned by importers before a Graph exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ampx {

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& shape);
// "[1x3x32x32]"; "[]" for a scalar.
std::string shape_str(const Shape& shape);

}  // namespace ampx
