// ONNX's bit ops (docs/ONNX.md): BitShift (11+), BitwiseAnd/Or/Xor/Not (18+)
// and BitCast (26+) map onto the op set's ops of the same name. The op set
// checks the dtypes (integers; BitCast: the same width).
#include <fmt/format.h>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {

void bit_shift(Importer& im, const onnx::NodeProto& n) {
  const std::string dir = im.attr_string_or(n, "direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    im.fail(fmt::format("attribute 'direction' must be LEFT or RIGHT, got '{}'", dir));
  im.bind(n, 0, im.emit1("BitShift", {im.input(n, 0), im.input(n, 1)}, {{"direction", dir}}));
}

void bitwise_binary(Importer& im, const onnx::NodeProto& n) {
  im.bind(n, 0, im.emit1(n.op_type(), {im.input(n, 0), im.input(n, 1)}, {}));
}

void bitwise_not(Importer& im, const onnx::NodeProto& n) {
  im.bind(n, 0, im.emit1("BitwiseNot", {im.input(n, 0)}, {}));
}

void bit_cast(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const auto to = im.attr_int(n, "to");
  if (!to) im.fail("attribute 'to' is required");
  const auto dtype = dtype_from_onnx(static_cast<int32_t>(*to));
  if (!dtype)
    im.fail("bit cast to " + onnx_elem_type_name(static_cast<int32_t>(*to)) + " is not supported");
  if (*dtype == im.type(x).dtype) {
    im.bind(n, 0, x);
    return;
  }
  im.bind(n, 0, im.emit1("BitCast", {x}, {{"to", int64_t(to_c(*dtype))}}));
}

}  // namespace ampx::onnx_io
