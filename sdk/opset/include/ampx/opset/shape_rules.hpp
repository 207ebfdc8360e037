// Shape arithmetic the op set's rules share, with ONNX's semantics: NumPy
// broadcasting, window sizes of Conv/Pool, Slice's clamping of starts and
// ends. Overflow-safe for any int64 attribute value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampx::opset {

using Dims = std::vector<int64_t>;

// "[1x3x32x32]"; "[]" for a scalar.
std::string dims_str(const Dims& dims);

// NumPy broadcasting of two shapes; nullopt when incompatible.
std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b);

// Output size of a window op along one axis. ceil_mode rounds up, but a
// window must start inside the (left-padded) input, as in ONNX. 0 when the
// dilated window is larger than the padded input.
int64_t window_out(int64_t in, int64_t kernel, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                   int64_t dilation, bool ceil_mode);

// One axis of an ONNX Slice after normalisation: negative starts/ends count
// from the end, then both are clamped into the axis ([0, dim] for a positive
// step, [-1, dim - 1] for a negative one). `start` is the first element read
// (meaningful when length > 0). step must not be 0.
struct SliceAxis {
  int64_t start = 0;
  int64_t length = 0;
};
SliceAxis slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim);

}  // namespace ampx::opset
