#include <ampx/ir/shape.hpp>
#include <ampx/opset/shape_rules.hpp>

namespace ampx {

int64_t element_count(const Shape& shape) {
  // An empty tensor may have other dimensions whose product overflows (a
  // .npy file may say [147, 2^62, 0]): zero first, never multiplied.
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  return opset::dims_str(shape);  // one spelling in messages, frontend and op set
}

}  // namespace ampx
