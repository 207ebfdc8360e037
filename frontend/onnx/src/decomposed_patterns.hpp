// Exporters without LayerNormalization/Gelu ops spell them out:
//   LayerNorm: ReduceMean - Sub - Pow(2) - ReduceMean - Add(eps) - Sqrt - Div
//              [- Mul(gamma) - Add(beta)]
//   GELU:      x * 0.5 * (1 + Erf(x / sqrt(2)))  (any association of the Muls)
// Recognising them gives one IR node whose 16-bit policy is decided once (a
// half-converted LayerNorm chain is the classic FP16 accuracy bug).
#pragma once

#include <ampx/ir/graph.hpp>

namespace ampx::onnx_io {

// Appends the fused nodes and points every consumer (and graph output) of a
// pattern's result at them; the pattern's nodes become dead. Returns the
// number of patterns fused.
int fuse_decomposed_patterns(Graph& graph);

// The graph without nodes no output depends on and without unused
// constants, in topological order. Graph inputs are all kept (a caller
// must still feed them).
Graph remove_dead_nodes(const Graph& graph);

}  // namespace ampx::onnx_io
