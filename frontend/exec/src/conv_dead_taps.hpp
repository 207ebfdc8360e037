// Kernel taps of a convolution that never touch the input.
//
// With a dilation as large as the input (DeepLab's ASPP: dilation 24 and 36
// on a 14 x 14 map, padding equal to the dilation), every output position
// sees the outer taps of the 3 x 3 kernel only in the zero padding: they
// multiply zeros. Cropping the kernel to the taps that can touch the input,
// and the padding with it, gives the same output with a smaller kernel (a
// 1 x 1 one there, 9 x fewer multiplications) on every backend.
#pragma once

#include <ampx/ir/attribute.hpp>
#include <ampx/ir/shape.hpp>

#include <cstdint>
#include <optional>

namespace ampx {

// The live window of one spatial dimension: taps [first, last] of the
// kernel, and the padding of the cropped kernel.
struct LiveTaps {
  int64_t first = 0, last = 0;
  int64_t pad_begin = 0, pad_end = 0;
};

struct ConvCrop {
  LiveTaps h, w;
  AttrMap attrs;  // the convolution's attributes for the cropped kernel
};

// For Conv2d with input [N, C, H, W], weight [M, C/g, KH, KW] and `attrs`:
// the crop when some edge taps are dead and the cropped convolution has the
// same output shape with non-negative padding; nullopt when nothing is dead.
std::optional<ConvCrop> crop_dead_taps(const Shape& x, const Shape& w, const AttrMap& attrs);

}  // namespace ampx
