// Which float dtypes a device runs natively, op by op: the planner's own
// question (CapabilitySource::query: "a real kernel for these dtypes?")
// asked of the probe's representative node instances (probe_catalog.hpp,
// its quick catalogue), nothing prepared, run or timed. What `ampx devices`
// and Python's ampx.devices() list as each device's `native`.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/capability/capability_source.hpp>

#include <string>
#include <vector>

namespace ampx::capability {

struct OpNativeDtypes {
  std::string op;                  // as in docs/OPS.md
  std::vector<ampx_dtype> native;  // of f32, f16, bf16, in that order
};

// The float dtypes the planner asks about, in the order they are listed.
inline constexpr ampx_dtype kNativeDtypesAsked[] = {AMPX_DTYPE_F32, AMPX_DTYPE_F16,
                                                    AMPX_DTYPE_BF16};

// One entry per op the probe's quick catalogue has a case for, in the op
// set's order (ops.inc); the other ops are absent, not "never native". A
// dtype is listed when `source` answers AMPX_SUPPORT_NATIVE for every case of
// the op in it (Conv2d has several shapes: native at each of them). A query
// that fails throws, as it does for the planner.
std::vector<OpNativeDtypes> native_dtypes(CapabilitySource& source);

}  // namespace ampx::capability
