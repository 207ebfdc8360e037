// make_kernel(): the op set's validation, op lookup, and the 16-bit emulation
// wrapper.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "ampx/opset/catalogue.hpp"
#include "ampx/opset/validate.hpp"
#include "common.hpp"
#include "convert.hpp"
#include "cpu_dispatch.hpp"

namespace ampx::reference {
namespace detail {

using plugin_support::is_16bit_float;

// ------------------------------------------------------------ shape helpers

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  const auto first = dims.begin() + static_cast<ptrdiff_t>(std::min(begin, dims.size()));
  const auto last = dims.begin() + static_cast<ptrdiff_t>(std::min(end, dims.size()));
  for (auto it = first; it < last; ++it) p *= *it;
  return p;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// -------------------------------------------------------------------- Ctx

namespace {
TensorInfo tensor_info(const NodeView& v, const ampx_tensor_desc& t, const char* what, size_t i) {
  TensorInfo info;
  info.dtype = t.dtype;
  info.dims.assign(t.dims, t.dims + t.rank);
  try {
    info.numel = plugin_support::element_count(t);
  } catch (const std::invalid_argument& e) {
    v.fail(std::string(what) + " " + std::to_string(i) + ": " + e.what());
  }
  return info;
}
}  // namespace

Ctx::Ctx(const NodeView& view) : v(view) {
  for (size_t i = 0; i < v.num_inputs(); ++i) in.push_back(tensor_info(v, v.input(i), "input", i));
  for (size_t i = 0; i < v.num_outputs(); ++i)
    out.push_back(tensor_info(v, v.output(i), "output", i));
}

void Ctx::arity(size_t min_in, size_t max_in, size_t n_out) const {
  if (in.size() < min_in || in.size() > max_in) {
    std::string want = min_in == max_in ? std::to_string(min_in)
                       : max_in == SIZE_MAX
                           ? "at least " + std::to_string(min_in)
                           : std::to_string(min_in) + (max_in == min_in + 1 ? " or " : " to ") +
                                 std::to_string(max_in);
    fail("has " + std::to_string(in.size()) + " inputs, expected " + want);
  }
  if (out.size() != n_out) {
    fail("has " + std::to_string(out.size()) + " outputs, expected " + std::to_string(n_out));
  }
}

void Ctx::rank(const TensorInfo& t, const std::string& what, int r) const {
  if (t.rank() != r) {
    fail(what + " has " + std::to_string(t.rank()) + " dims, expected " + std::to_string(r));
  }
}

void Ctx::min_rank(const TensorInfo& t, const std::string& what, int r) const {
  if (t.rank() < r) {
    fail(what + " has " + std::to_string(t.rank()) + " dims, expected at least " +
         std::to_string(r));
  }
}

void Ctx::dims(const TensorInfo& t, const std::string& what,
               const std::vector<int64_t>& want) const {
  if (t.dims != want)
    fail(what + " has shape " + dims_str(t.dims) + ", expected " + dims_str(want));
}

int64_t Ctx::axis(int64_t a, int64_t rank, const std::string& attr) const {
  if (a < -rank || a >= rank) {
    fail("attribute '" + attr + "' = " + std::to_string(a) + " is out of range for rank " +
         std::to_string(rank));
  }
  return a < 0 ? a + rank : a;
}

std::vector<int64_t> Ctx::ints_n(const char* name, size_t n, std::vector<int64_t> def) const {
  std::vector<int64_t> r = v.get_ints(name, std::move(def));
  if (r.size() != n) {
    fail("attribute '" + std::string(name) + "' has " + std::to_string(r.size()) +
         " values, expected " + std::to_string(n));
  }
  return r;
}

// ------------------------------------------------------- 16-bit emulation

namespace {

// Runs an f32 kernel on 16-bit tensors: widens every 16-bit input into f32
// scratch (exact), runs the f32 kernel, rounds every 16-bit output once
// (nearest even). This is the whole of "emulated" 16-bit.
class Emulated16 final : public CpuKernel {
 public:
  Emulated16(std::unique_ptr<CpuKernel> inner, ampx_dtype dt, const Ctx& ctx)
      : inner_(std::move(inner)), dt_(dt) {
    for (const auto& t : ctx.in) in_.push_back({t.dtype == dt, t.numel, {}});
    for (const auto& t : ctx.out) out_.push_back({t.dtype == dt, t.numel, {}});
  }

  void run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    in_ptrs_.assign(inputs.begin(), inputs.end());
    out_ptrs_.assign(outputs.begin(), outputs.end());
    for (size_t i = 0; i < in_.size(); ++i) {
      Slot& s = in_[i];
      if (!s.is16) continue;
      s.scratch.resize(static_cast<size_t>(s.numel));
      widen_to_f32(dt_, static_cast<const uint16_t*>(inputs[i]), s.scratch.data(), s.numel);
      in_ptrs_[i] = s.scratch.data();
    }
    for (size_t i = 0; i < out_.size(); ++i) {
      Slot& s = out_[i];
      if (!s.is16) continue;
      s.scratch.resize(static_cast<size_t>(s.numel));
      out_ptrs_[i] = s.scratch.data();
    }
    inner_->run(in_ptrs_, out_ptrs_);
    for (size_t i = 0; i < out_.size(); ++i) {
      Slot& s = out_[i];
      if (s.is16)
        round_from_f32(dt_, s.scratch.data(), static_cast<uint16_t*>(outputs[i]), s.numel);
    }
  }

 private:
  struct Slot {
    bool is16;
    int64_t numel;
    std::vector<float> scratch;  // allocated on first run, reused
  };
  std::unique_ptr<CpuKernel> inner_;
  ampx_dtype dt_;
  std::vector<Slot> in_, out_;
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
};

// ----------------------------------------------------------- op registry

struct OpEntry {
  std::string_view name;
  Factory factory;
};

constexpr OpEntry kOps[] = {
    {"Conv2d", make_conv2d},
    {"MatMul", make_matmul},
    {"Gemm", make_gemm},
    {"BatchNorm", make_batchnorm},
    {"LayerNorm", make_layernorm},
    {"RMSNorm", make_rmsnorm},
    {"Softmax", make_softmax},
    {"Relu", make_relu},
    {"Sigmoid", make_sigmoid},
    {"Tanh", make_tanh},
    {"Gelu", make_gelu},
    {"Clip", make_clip},
    {"Add", make_add},
    {"Sub", make_sub},
    {"Mul", make_mul},
    {"Div", make_div},
    {"MaxPool", make_maxpool},
    {"AveragePool", make_avgpool},
    {"GlobalAveragePool", make_global_avgpool},
    {"ReduceMean", make_reduce_mean},
    {"ReduceSum", make_reduce_sum},
    {"Reshape", make_reshape},
    {"Flatten", make_flatten},
    {"Transpose", make_transpose},
    {"Concat", make_concat},
    {"Slice", make_slice},
    {"Gather", make_gather},
    {"Cast", make_cast},
    {"Dropout", make_dropout},
    {"ConvTranspose", make_conv_transpose},
    {"LeakyRelu", make_leaky_relu},
    {"PRelu", make_prelu},
    {"HardSigmoid", make_hard_sigmoid},
    {"HardSwish", make_hard_swish},
    {"Erf", make_erf},
    {"Pow", make_pow},
    {"Sqrt", make_sqrt},
    {"Reciprocal", make_reciprocal},
    {"Exp", make_exp},
    {"Log", make_log},
    {"Neg", make_neg},
    {"LogSoftmax", make_log_softmax},
    {"ReduceMax", make_reduce_max},
    {"ArgMax", make_argmax},
    {"Split", make_split},
    {"Expand", make_expand},
    {"Pad", make_pad},
    {"Resize", make_resize},
    {"Where", make_where},
    {"Equal", make_equal},
    {"Floor", make_floor},
    {"Ceil", make_ceil},
    {"Round", make_round},
    {"Abs", make_abs},
    {"Softplus", make_softplus},
    {"Mish", make_mish},
    {"Sin", make_sin},
    {"Cos", make_cos},
    {"Tan", make_tan},
    {"Asin", make_asin},
    {"Acos", make_acos},
    {"Atan", make_atan},
    {"Sinh", make_sinh},
    {"Cosh", make_cosh},
    {"Asinh", make_asinh},
    {"Acosh", make_acosh},
    {"Atanh", make_atanh},
    {"Less", make_less},
    {"Greater", make_greater},
    {"LessOrEqual", make_less_or_equal},
    {"GreaterOrEqual", make_greater_or_equal},
    {"Not", make_not},
    {"And", make_and},
    {"Or", make_or},
    {"Min", make_min},
    {"Max", make_max},
    {"Sum", make_sum},
    {"Mean", make_mean},
    {"ReduceMin", make_reduce_min},
    {"ReduceProd", make_reduce_prod},
    {"ReduceL2", make_reduce_l2},
    {"ReduceSumSquare", make_reduce_sum_square},
    {"ReduceLogSumExp", make_reduce_log_sum_exp},
    {"ArgMin", make_argmin},
    {"Mod", make_mod},
    {"CumSum", make_cum_sum},
    {"CumProd", make_cum_sum},
    {"TopK", make_top_k},
    {"GatherElements", make_gather_elements},
    {"GatherND", make_gather_nd},
    {"ScatterND", make_scatter_nd},
    {"Attention", make_attention},
    {"RotaryEmbedding", make_rotary_embedding},
    {"BitShift", make_bit_shift},
    {"BitwiseAnd", make_bitwise_and},
    {"BitwiseOr", make_bitwise_or},
    {"BitwiseXor", make_bitwise_xor},
    {"BitwiseNot", make_bitwise_not},
    {"BitCast", make_bit_cast},
    {"GridSample", make_grid_sample},
    {"LinearAttention", make_linear_attention},
    {"MaxPoolIndices", make_maxpool_indices},
    {"Det", make_det},
    {"Col2Im", make_col2im},
    {"LSTM", make_recurrent},
    {"GRU", make_recurrent},
    {"RNN", make_recurrent},
    {"ReluGrad", make_relu_grad},
    {"SigmoidGrad", make_sigmoid_grad},
    {"TanhGrad", make_tanh_grad},
    {"GeluGrad", make_gelu_grad},
    {"ClipGrad", make_clip_grad},
    {"SoftmaxGrad", make_softmax_grad},
    {"LayerNormGrad", make_layernorm_grad},
    {"BatchNormTraining", make_batchnorm_training},
    {"BatchNormGrad", make_batchnorm_grad},
    {"Conv2dGradWeight", make_conv2d_grad_weight},
    {"MaxPoolGrad", make_maxpool_grad},
    {"AveragePoolGrad", make_avgpool_grad},
    {"SliceGrad", make_slice_grad},
    {"GatherGrad", make_gather_grad},
    {"DropoutTraining", make_dropout_training},
    {"SoftmaxCrossEntropy", make_softmax_cross_entropy},
    {"SoftmaxCrossEntropyGrad", make_softmax_cross_entropy_grad},
    {"SgdUpdate", make_sgd_update},
    {"AdamUpdate", make_adam_update},
    {"UpdateGuard", make_update_guard},
    {"MultiSgdUpdate", make_multi_update},
    {"MultiAdamUpdate", make_multi_update},
    {"TensorStats", make_tensor_stats},
};

const OpEntry* find_op(std::string_view name) {
  for (const OpEntry& e : kOps)
    if (e.name == name) return &e;
  return nullptr;
}

[[noreturn]] void unsupported(const NodeView& v, const std::string& what) {
  throw UnsupportedNode(v.where() + ": " + what);
}

std::atomic<int> g_threads_override{0};

int default_threads() {
  if (const char* env = std::getenv("AMPX_CPU_REF_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

}  // namespace
}  // namespace detail

// ------------------------------------------------------------- public API

std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node, const KernelOptions& options) {
  using namespace detail;
  // The op set decides what a valid node is; the factories below only
  // derive their kernel's parameters from a node that passed.
  const ampx_dtype dt = opset::validate(node, options);
  const NodeView v(node);
  const OpEntry* op = find_op(v.op_type());
  if (!op) unsupported(v, "no reference kernel for this op");
  Ctx ctx(v);
  switch (opset::find_op(v.op_type())->dtype_rule) {
    case opset::DtypeRule::kCompute:
    case opset::DtypeRule::kElementwise:
    case opset::DtypeRule::kInteger:
      if (is_16bit_float(dt)) {
        ctx.dtype = AMPX_DTYPE_F32;
        auto inner = op->factory(ctx);
        return std::make_unique<Emulated16>(std::move(inner), dt, ctx);
      }
      ctx.dtype = dt;
      return op->factory(ctx);
    case opset::DtypeRule::kData:
      ctx.dtype = dt;
      return op->factory(ctx);
    case opset::DtypeRule::kCast:
      return op->factory(ctx);
  }
  unsupported(v, "unknown dtype rule");
}

bool can_run(const ampx_node_desc& node, std::string* why, const KernelOptions& options) noexcept {
  return opset::succeeds([&] { (void)make_kernel(node, options); }, why);
}

int max_threads() noexcept {
  const int o = detail::g_threads_override.load(std::memory_order_relaxed);
  if (o >= 1) return o;
  static const int def = detail::default_threads();
  return def;
}

void set_max_threads(int n) noexcept {
  detail::g_threads_override.store(n >= 1 ? n : 0, std::memory_order_relaxed);
}

namespace {
std::atomic<ParallelRunner> g_runner{nullptr};
}  // namespace

void set_parallel_runner(ParallelRunner runner) noexcept {
  g_runner.store(runner, std::memory_order_relaxed);
}

ParallelRunner parallel_runner() noexcept {
  return g_runner.load(std::memory_order_relaxed);
}

namespace {
std::atomic<bool> g_avx2_allowed{true};
}  // namespace

void allow_avx2(bool allowed) noexcept {
  g_avx2_allowed.store(allowed, std::memory_order_relaxed);
}

bool detail::use_avx2() noexcept {
#ifdef AMPX_REFERENCE_HAVE_AVX2_CLONES
  static const bool cpu = [] {
    const char* isa = std::getenv("AMPX_CPU_REF_ISA");
    return __builtin_cpu_supports("avx2") && !(isa && std::string_view(isa) == "baseline");
  }();
  return cpu && g_avx2_allowed.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

}  // namespace ampx::reference
