#include <ampx/ir/shape.hpp>
#include <ampx/opset/shape_rules.hpp>

namespace ampx {

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  return opset::dims_str(shape);  // one spelling in messages, frontend and op set
}

}  // namespace ampx
