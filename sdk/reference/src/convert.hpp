// Bulk conversions between 16-bit storage and f32 compute, exact both ways
// except the one round-to-nearest-even on the way back to 16 bits.
#pragma once

#include <cstdint>

#include "ampx/backend_api.h"

namespace ampx::reference::detail {

// dt is AMPX_DTYPE_F16 or AMPX_DTYPE_BF16. Splits large arrays over threads.
void widen_to_f32(ampx_dtype dt, const uint16_t* src, float* dst, int64_t n);
void round_from_f32(ampx_dtype dt, const float* src, uint16_t* dst, int64_t n);

}  // namespace ampx::reference::detail
