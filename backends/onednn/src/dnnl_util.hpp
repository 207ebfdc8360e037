// Small oneDNN helpers shared by the op builders: dtypes, dense memory
// descriptors of ampx tensors, and what an op builder returns.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ampx/backend_api.h"
#include "ampx/plugin_support.hpp"

namespace ampx::onednn {

using dims_t = dnnl::memory::dims;
using dnnl::memory;

// Thrown by an op builder when oneDNN has no primitive for the node as
// described (dtype, attribute value, broadcast pattern). The message is the
// capability note: short, without the node prefix.
class NoPrimitive : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// oneDNN data type of an ampx dtype; throws NoPrimitive for f64, i64, bool.
memory::data_type to_dnnl(ampx_dtype dt);

dims_t dims_of(const ampx_tensor_desc& t);
// Row-major strides of dims.
dims_t dense_strides(const dims_t& dims);
// A Reduce node's output dims with keepdims (the same bytes as without): X's
// dims with each of `axes` (all when empty; negative from the end) set to 1.
dims_t reduced_dims(const ampx_tensor_desc& x, std::span<const int64_t> axes);
// Dense row-major descriptor; a rank-0 tensor is described as [1].
memory::desc dense_md(const dims_t& dims, memory::data_type dt);
memory::desc dense_md(const ampx_tensor_desc& t);
// dims with leading 1s up to `rank`.
dims_t pad_rank(const dims_t& dims, size_t rank);
// The dims an eltwise primitive (forward or backward: all its tensors of
// one shape) is given. oneDNN 2.6's reference eltwise, the only
// implementation of an eltwise with a post-op (HardSigmoid's clip), walks
// MB x C x D x H x W: it writes nothing for a rank-1 destination and the
// wrong elements above rank 5, so the output kept whatever the buffer held.
// Rank 0, 1 and above 5 become [1, N] (the same bytes); ranks 2 to 5 stay
// as they are, so that a producer's blocked layout can still be followed.
dims_t eltwise_dims(const dims_t& dims);
// dense_md() of a tensor of an eltwise primitive, its dims through
// eltwise_dims().
memory::desc eltwise_md(const ampx_tensor_desc& t);
// The rank the broadcasting elementwise primitives (binary, prelu, the
// variadic Sum and Mean) are given at least, with leading 1s: a scalar or a
// vector is never handed to oneDNN as rank 0 or 1.
inline constexpr size_t kMinElementwiseRank = 2;
int64_t product(const dims_t& dims, size_t from = 0, size_t to = SIZE_MAX);
// Normalises a possibly negative axis against rank; throws NoPrimitive when
// out of range (the frontend has verified it, so this is a guard).
int normalize_axis(int64_t axis, int64_t rank);

// One argument of a primitive bound to a node tensor.
struct Arg {
  int dnnl_arg;          // DNNL_ARG_*
  bool output;           // node output (else input)
  size_t index;          // node input / output index
  memory::desc user_md;  // how the tensor lies in the ampx buffer
};

// What an op builder returns: the primitive descriptor (never the primitive:
// capability queries stop here) and how node tensors bind to its arguments.
// Arguments the primitive wants in another layout or dtype than user_md are
// reordered by the kernel (constants once at prepare).
struct PrimitivePlan {
  dnnl::primitive_desc_base pd;
  std::vector<Arg> args;
  // Ops whose primitive runs in any layout (eltwise, binary, BatchNorm,
  // pooling, resampling, concat): the same op's descriptor with its inputs
  // in the layout of `src` (one input's current blocked shadow: a
  // producer's layout; every input in that layout, see same_layout(), dst
  // following it or `any`), so that a chain of such nodes stays in one
  // layout instead of going through plain. Empty for the rest.
  std::function<dnnl::primitive_desc_base(const memory::desc& src)> relayout;
  // A binary primitive run after the main one, in place on its output
  // (DNNL_ARG_SRC_0 and DNNL_ARG_DST are the main primitive's dst memory),
  // DNNL_ARG_SRC_1 the constant node input `then_input`, reordered once at
  // prepare. oneDNN 2.6's deconvolution adds its own bias in a separate slow
  // pass (3x the deconvolution's time at 64 channels, 80 x 80); a
  // per-channel binary add in the output's layout runs at memory speed.
  std::optional<dnnl::binary::primitive_desc> then_add;
  size_t then_input = 0;
};

// A descriptor of `dims` in the same layout (format tag) as `layout`: plain,
// channels-last or channel-blocked by 8 or 16. Throws NoPrimitive for any
// other layout (the caller then has no variant for it).
memory::desc same_layout(const memory::desc& layout, const dims_t& dims);

// The attributes every op builder starts from: a user-managed scratchpad,
// so one buffer per stream (Context::scratchpad) serves every primitive
// instead of one library allocation each.
dnnl::primitive_attr plan_attr();

// The primitive's implementation is a reference one ("ref:any",
// "simple:any" pooling, "ref_int8:any", ...), i.e. no optimised kernel for
// these dtypes and layouts on this CPU.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// The primitive kind, its propagation kind where it has one, and oneDNN's
// implementation name, for kernel reports (profiles):
// "convolution_backward_weights jit:avx2", "reduction ref:any",
// "batch_normalization_forward_training bnorm_jit:avx2".
std::string describe_impl(const dnnl::primitive_desc_base& pd);

}  // namespace ampx::onednn
