// The training ops that take more than one oneDNN primitive, or host work
// around one (docs/OPS.md "Training ops"):
//
//   MaxPoolGrad        pooling forward_training (for the workspace: which
//                      cell won each window), then pooling_v2_backward
//   BatchNormTraining  batch_normalization_forward (forward_training: batch
//                      mean and population variance), then a loop over the
//                      channels for the running statistics and saved invstd
//   BatchNormGrad      a loop turning saved invstd into the variance oneDNN
//                      wants, then batch_normalization_backward (backward:
//                      dX, dScale, dBias)
//   LayerNormGrad      layer_normalization_forward (forward_training, for the
//                      row statistics the op recomputes from X), then
//                      layer_normalization_backward
//
// These kernels are tracked (host_plugin::HostCopyKernel): each node tensor
// goes through the layout store (layout_store.hpp) as PrimitiveKernel's do.
// An input whose shadow is in the primitive's layout is read as it is, one
// in another blocked layout is reordered from it, else the plain bytes
// (written back first); a blocked output becomes the tensor's shadow.
// BatchNormTraining, BatchNormGrad and MaxPoolGrad run in the layout of X's
// shadow (the producer's: nChw16c, nChw8c, nhwc), a variant of their
// primitives per layout made on first sight and checked for the thread
// count as at prepare (thread_check.hpp); tensors they read or write on the
// host (statistics, LayerNormGrad's parameter gradients) are plain.
#pragma once

#include <memory>
#include <unordered_map>

#include "ampx/reference/kernels.hpp"
#include "context.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {

// Whether v is one of the ops above (built by make_training_kernel).
bool is_multi_primitive_training_op(const plugin_support::NodeView& v);

// The primitive descriptors of such a node, for the capability answer: the
// one that decides it (a reference implementation if any of them is one).
// Throws NoPrimitive or dnnl::error as the op builders do.
PrimitivePlan plan_multi_primitive_training_op(const plugin_support::NodeView& v,
                                               const dnnl::engine& eng);

// The prepared kernel of such a node (primitives created now, under
// `threads`). Throws NoPrimitive or dnnl::error.
std::unique_ptr<reference::CpuKernel> make_training_kernel(std::shared_ptr<Context> ctx,
                                                           const plugin_support::NodeView& v,
                                                           int threads);

}  // namespace ampx::onednn
