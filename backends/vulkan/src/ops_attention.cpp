// The transformer ops: RotaryEmbedding (rotary.comp), Attention
// (attention.comp: a workgroup per query row) and LinearAttention
// (linear_attention.comp: the state's columns walked token by token). All
// arithmetic f32 in every variant, as cpu_ref's (16-bit widened, outputs
// rounded once).
#include <cmath>
#include <string>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

// 0 absent, 1 i32, 2 i64: how the shaders read an index input.
int32_t index_kind(const NodeView& v, size_t i, const char* what) {
  if (v.num_inputs() <= i) return 0;
  const ampx_dtype dt = v.input(i).dtype;
  if (dt == AMPX_DTYPE_I64) return 2;
  if (dt == AMPX_DTYPE_I32) return 1;
  throw Unsupported(std::string(what) + " is " + plugin_support::dtype_name(dt) +
                    ": the kernel reads i64 or i32");
}

}  // namespace

OpPlan plan_rotary_embedding(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const bool rank4 = x.size() == 4;
  const int64_t H = rank4 ? x[1] : v.get_int("num_heads", 1);
  const int64_t S = rank4 ? x[2] : x[1];
  const int64_t D = rank4 ? x[3] : x[2] / H;
  const int64_t r = v.get_int("rotary_embedding_dim", 0);
  const int64_t R = r == 0 ? D : r;
  const int32_t pos = index_kind(v, 3, "position_ids");
  const int64_t n = numel(x);
  OpPlan plan;
  if (n == 0) return plan;
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("rotary", var), static_cast<uint64_t>(n));
  d.params = {i32(n),
              i32(S),
              i32(H),
              i32(D),
              i32(R),
              rank4 ? 1 : 0,
              v.get_int("interleaved", 0) != 0 ? 1 : 0,
              pos,
              pos ? i32(dims_of(v.input(1))[0]) : 0};
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, es), pos ? in_ref(3, 4) : in_ref(0, es),
               out_ref(0, es)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace ampx::vulkan
