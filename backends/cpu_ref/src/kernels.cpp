// make_kernel(): op lookup, the dtype rule, and the 16-bit emulation wrapper.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "common.hpp"
#include "convert.hpp"

namespace ampx::cpu_ref {
namespace detail {

using plugin_support::dtype_name;
using plugin_support::dtype_size;
using plugin_support::is_16bit_float;
using plugin_support::is_float_dtype;

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

enum class Kind {
  Compute,      // f32 / f16 / bf16
  Elementwise,  // f32 / f16 / bf16 / f64
  Integer,      // Elementwise, and also i64 / i32 (the importer's shape arithmetic)
  Data,         // any dtype, bit-exact copies
  Cast,
};

struct OpEntry {
  std::string_view name;
  Kind kind;
  Factory factory;
};

constexpr OpEntry kOps[] = {
    {"Conv2d", Kind::Compute, make_conv2d},
    {"MatMul", Kind::Compute, make_matmul},
    {"Gemm", Kind::Compute, make_gemm},
    {"BatchNorm", Kind::Compute, make_batchnorm},
    {"LayerNorm", Kind::Compute, make_layernorm},
    {"Softmax", Kind::Compute, make_softmax},
    {"Relu", Kind::Elementwise, make_relu},
    {"Sigmoid", Kind::Elementwise, make_sigmoid},
    {"Tanh", Kind::Elementwise, make_tanh},
    {"Gelu", Kind::Elementwise, make_gelu},
    {"Clip", Kind::Elementwise, make_clip},
    {"Add", Kind::Integer, make_add},
    {"Sub", Kind::Integer, make_sub},
    {"Mul", Kind::Integer, make_mul},
    {"Div", Kind::Integer, make_div},
    {"MaxPool", Kind::Compute, make_maxpool},
    {"AveragePool", Kind::Compute, make_avgpool},
    {"GlobalAveragePool", Kind::Compute, make_global_avgpool},
    {"ReduceMean", Kind::Compute, make_reduce_mean},
    {"ReduceSum", Kind::Compute, make_reduce_sum},
    {"Reshape", Kind::Data, make_reshape},
    {"Flatten", Kind::Data, make_flatten},
    {"Transpose", Kind::Data, make_transpose},
    {"Concat", Kind::Data, make_concat},
    {"Slice", Kind::Data, make_slice},
    {"Gather", Kind::Data, make_gather},
    {"Cast", Kind::Cast, make_cast},
    {"Dropout", Kind::Data, make_dropout},
    {"ConvTranspose", Kind::Compute, make_conv_transpose},
    {"LeakyRelu", Kind::Elementwise, make_leaky_relu},
    {"PRelu", Kind::Elementwise, make_prelu},
    {"HardSigmoid", Kind::Elementwise, make_hard_sigmoid},
    {"HardSwish", Kind::Elementwise, make_hard_swish},
    {"Erf", Kind::Elementwise, make_erf},
    {"Pow", Kind::Elementwise, make_pow},
    {"Sqrt", Kind::Elementwise, make_sqrt},
    {"Reciprocal", Kind::Elementwise, make_reciprocal},
    {"Exp", Kind::Elementwise, make_exp},
    {"Log", Kind::Elementwise, make_log},
    {"Neg", Kind::Integer, make_neg},
    {"LogSoftmax", Kind::Compute, make_log_softmax},
    {"ReduceMax", Kind::Compute, make_reduce_max},
    {"ArgMax", Kind::Compute, make_argmax},
    {"Split", Kind::Data, make_split},
    {"Expand", Kind::Data, make_expand},
    {"Pad", Kind::Data, make_pad},
    {"Resize", Kind::Compute, make_resize},
    {"Where", Kind::Integer, make_where},
    {"Equal", Kind::Integer, make_equal},
};

const OpEntry* find_op(std::string_view name) {
  for (const OpEntry& e : kOps)
    if (e.name == name) return &e;
  return nullptr;
}

[[noreturn]] void unsupported(const NodeView& v, const std::string& what) {
  throw UnsupportedNode(v.where() + ": " + what);
}

std::string tensor_label(const Ctx& c, size_t i) {
  return i < c.in.size() ? "input " + std::to_string(i)
                         : "output " + std::to_string(i - c.in.size());
}
const TensorInfo& tensor_at(const Ctx& c, size_t i) {
  return i < c.in.size() ? c.in[i] : c.out[i - c.in.size()];
}

// Tensors of a compute op that have a dtype of their own (docs/OPS.md):
// Where's condition and Equal's result are bool, ArgMax's result is i64.
ampx_dtype fixed_dtype(std::string_view op, size_t slot, size_t n_in) {
  if (op == "Where" && slot == 0) return AMPX_DTYPE_BOOL;
  if (op == "Equal" && slot == n_in) return AMPX_DTYPE_BOOL;
  if (op == "ArgMax" && slot == n_in) return AMPX_DTYPE_I64;
  return AMPX_DTYPE_INVALID;
}

bool is_int_dtype(ampx_dtype dt) {
  return dt == AMPX_DTYPE_I64 || dt == AMPX_DTYPE_I32;
}

// The dtype rule of docs/OPS.md: every tensor of a compute op is a float of
// one common dtype (Kind::Integer ops: or i64 / i32), except the fixed ones
// above. Returns that dtype.
ampx_dtype float_dtype(const Ctx& c, bool allow_f64, bool allow_int) {
  const size_t n = c.in.size() + c.out.size();
  ampx_dtype common = AMPX_DTYPE_INVALID;
  size_t first = 0;
  for (size_t i = 0; i < n; ++i) {
    const ampx_dtype dt = tensor_at(c, i).dtype;
    if (dtype_size(dt) == 0) c.fail(tensor_label(c, i) + " has an invalid dtype");
    if (const ampx_dtype fixed = fixed_dtype(c.v.op_type(), i, c.in.size());
        fixed != AMPX_DTYPE_INVALID) {
      if (dt != fixed)
        unsupported(
            c.v, tensor_label(c, i) + " is " + dtype_name(dt) + ", expected " + dtype_name(fixed));
      continue;
    }
    if (!is_float_dtype(dt) && !(allow_int && is_int_dtype(dt))) {
      unsupported(c.v, tensor_label(c, i) + " is " + dtype_name(dt) +
                           ", expected f32, f16 or bf16" + (allow_int ? " (or i64, i32)" : ""));
    }
    if (common == AMPX_DTYPE_INVALID) {
      common = dt;
      first = i;
    } else if (dt != common) {
      c.fail(tensor_label(c, i) + " is " + dtype_name(dt) + " but " + tensor_label(c, first) +
             " is " + dtype_name(common) + ": all float tensors of a node share one dtype");
    }
  }
  if (common == AMPX_DTYPE_F64 && !allow_f64) {
    unsupported(c.v, "dtype f64 is not handled by this op (f32, f16, bf16 only)");
  }
  return common;
}

// Data-movement ops: the data tensors share one dtype, any dtype; Gather's
// indices (input 1) are i64 or i32.
ampx_dtype data_dtype(const Ctx& c) {
  const bool gather = c.v.op_type() == "Gather";
  const size_t n = c.in.size() + c.out.size();
  ampx_dtype common = AMPX_DTYPE_INVALID;
  size_t first = 0;
  for (size_t i = 0; i < n; ++i) {
    const ampx_dtype dt = tensor_at(c, i).dtype;
    if (dtype_size(dt) == 0) c.fail(tensor_label(c, i) + " has an invalid dtype");
    if (gather && i == 1) {
      if (dt != AMPX_DTYPE_I64 && dt != AMPX_DTYPE_I32) {
        unsupported(c.v, std::string("indices are ") + dtype_name(dt) + ", expected i64 or i32");
      }
      continue;
    }
    if (common == AMPX_DTYPE_INVALID) {
      common = dt;
      first = i;
    } else if (dt != common) {
      c.fail(tensor_label(c, i) + " is " + dtype_name(dt) + " but " + tensor_label(c, first) +
             " is " + dtype_name(common) + ": data tensors of a node share one dtype");
    }
  }
  return common;
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

std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node) {
  using namespace detail;
  const NodeView v(node);
  const OpEntry* op = find_op(v.op_type());
  if (!op) unsupported(v, "unknown op type");
  Ctx ctx(v);
  switch (op->kind) {
    case Kind::Compute:
    case Kind::Elementwise:
    case Kind::Integer: {
      const ampx_dtype dt = float_dtype(ctx, op->kind != Kind::Compute, op->kind == Kind::Integer);
      if (dt == AMPX_DTYPE_INVALID) ctx.arity(1, 1, 1);  // no tensors at all
      if (is_16bit_float(dt)) {
        ctx.dtype = AMPX_DTYPE_F32;
        auto inner = op->factory(ctx);
        return std::make_unique<Emulated16>(std::move(inner), dt, ctx);
      }
      ctx.dtype = dt;
      return op->factory(ctx);
    }
    case Kind::Data:
      ctx.dtype = data_dtype(ctx);
      return op->factory(ctx);
    case Kind::Cast:
      return op->factory(ctx);
  }
  unsupported(v, "unknown op kind");
}

bool can_run(const ampx_node_desc& node, std::string* why) noexcept {
  try {
    (void)make_kernel(node);
    return true;
  } catch (const std::exception& e) {
    if (why) {
      try {
        *why = e.what();
      } catch (...) {
      }
    }
  } catch (...) {
    if (why) why->clear();
  }
  return false;
}

WorkEstimate estimate_work(const ampx_node_desc& node) noexcept {
  WorkEstimate w;
  try {
    using namespace detail;
    const NodeView v(node);
    Ctx c(v);
    const std::string_view op = v.op_type();
    double in_elems = 0, out_elems = 0, e16 = 0;
    for (const auto& t : c.in) {
      in_elems += static_cast<double>(t.numel);
      w.bytes += static_cast<double>(t.numel) * static_cast<double>(dtype_size(t.dtype));
      if (is_16bit_float(t.dtype)) e16 += static_cast<double>(t.numel);
    }
    for (const auto& t : c.out) {
      out_elems += static_cast<double>(t.numel);
      w.bytes += static_cast<double>(t.numel) * static_cast<double>(dtype_size(t.dtype));
      if (is_16bit_float(t.dtype)) e16 += static_cast<double>(t.numel);
    }
    const OpEntry* e = find_op(op);
    const bool data = e && (e->kind == Kind::Data || e->kind == Kind::Cast);
    w.elements_16bit = data ? 0 : e16;
    if (op == "Conv2d" && c.in.size() >= 2 && c.in[1].rank() == 4) {
      w.flops = 2 * out_elems * static_cast<double>(product(c.in[1].dims, 1));
    } else if (op == "MatMul" && c.in.size() >= 2 && c.in[0].rank() >= 2) {
      w.flops = 2 * out_elems * static_cast<double>(c.in[0].dims.back());
    } else if (op == "Gemm" && c.in.size() >= 2 && c.in[0].rank() == 2) {
      const int64_t k = v.get_int("transA", 0) ? c.in[0].dims[0] : c.in[0].dims[1];
      w.flops = 2 * out_elems * static_cast<double>(k) + out_elems;
    } else if (op == "MaxPool" || op == "AveragePool") {
      const auto ks = v.get_ints("kernel_shape", {1, 1});
      w.flops = out_elems * static_cast<double>(product(ks));
    } else if (op == "Softmax" || op == "LayerNorm" || op == "Gelu" || op == "Sigmoid" ||
               op == "Tanh") {
      w.flops = 10 * out_elems;
    } else if (data) {
      w.flops = 0;
    } else {
      w.flops = std::max(in_elems, out_elems);
    }
  } catch (...) {
    w = WorkEstimate{};
  }
  return w;
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

}  // namespace ampx::cpu_ref
