// How a compiled model runs its ExecutionPlan (docs/SESSION.md).
//
// kCompiled: today's executor: fusion per device, kernels prepared once,
// one arena per device, weights uploaded once.
// kEager: PyNative's way, the seeds' comparison point: no fusion, no arena;
// at every run each node is lowered, its kernel prepared, its outputs given
// buffers of their own, launched and synchronised before the next.
#pragma once

namespace ampx {

enum class ExecutionMode { kCompiled, kEager };

}  // namespace ampx
