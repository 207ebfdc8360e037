// ONNX ops imported as an op-set op they are a form of (docs/ONNX.md):
// CastLike is a Cast to its second input's element type, which the import
// knows.
#include <fmt/format.h>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

// CastLike 15+ (19: `saturate`, 25: `round_mode`, both for the float8 and
// float4 types ampx does not have): a Cast to target_type's element type,
// nothing when it is X's already. A type ampx does not have is refused
// where the model declares it (an input or initializer).
void cast_like(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const DType to = im.type(im.input(n, 1)).dtype;
  if (to == im.type(x).dtype) {
    im.bind(n, 0, x);
    return;
  }
  im.bind(n, 0, im.emit1("Cast", {x}, {{"to", int64_t(to_c(to))}}));
}

}  // namespace ampx::onnx_io
