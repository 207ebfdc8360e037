#include "train_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "ampx/half.hpp"
#include "ops.hpp"

namespace ampx::onednn {

namespace ps = plugin_support;
using dnnl::algorithm;
using dnnl::normalization_flags;
using dnnl::prop_kind;

namespace {

const normalization_flags kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

// ------------------------------------------------------------ building blocks

// A launch's stream, and the context that counts what it executes
// (Context::count_executed, debug_counters=1).
struct Exec {
  dnnl::stream& stream;
  Context& ctx;
  void run(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
    ctx.count_executed(p);
    p.execute(stream, args);
  }
  void wait() { stream.wait(); }
};

// One node tensor as one primitive argument: the buffer itself when the
// primitive takes plain row-major in the node's dtype, else a staged memory
// in the primitive's layout and dtype, reordered in before the primitive
// (inputs) or out after it (outputs).
class Port {
 public:
  Port() = default;
  Port(const memory::desc& user, const memory::desc& want, const dnnl::engine& eng, bool output)
      : user_(user, eng, DNNL_MEMORY_NONE), output_(output) {
    if (want == memory::desc() || want == user) return;
    staged_ = dnnl::memory(want, eng);  // library-allocated, kept between runs
    reorder_ = output ? dnnl::reorder(staged_, user_) : dnnl::reorder(user_, staged_);
  }
  // The memory the primitive reads: an input's bytes at p, reordered now
  // when the primitive wants them in another layout or dtype.
  dnnl::memory in(const void* p, Exec& s) {
    user_.set_data_handle(const_cast<void*>(p));
    if (!staged_) return user_;
    s.run(reorder_, {{DNNL_ARG_FROM, user_}, {DNNL_ARG_TO, staged_}});
    return staged_;
  }
  // The memory the primitive writes for the output at p; flush() moves it
  // there after the primitive.
  dnnl::memory out(void* p) {
    user_.set_data_handle(p);
    return staged_ ? staged_ : user_;
  }
  void flush(Exec& s) {
    if (output_ && staged_) s.run(reorder_, {{DNNL_ARG_FROM, staged_}, {DNNL_ARG_TO, user_}});
  }

 private:
  dnnl::memory user_, staged_;
  dnnl::reorder reorder_;
  bool output_ = false;
};

// A primitive of a multi-step kernel and its scratchpad argument (the
// Context's one buffer per stream, plan_attr()).
class Step {
 public:
  Step() = default;
  Step(const dnnl::primitive_desc_base& pd, const dnnl::engine& eng) : prim_(pd.get()) {
    const memory::desc md = pd.scratchpad_desc();
    bytes_ = md.get_size();
    if (bytes_ > 0) scratch_ = dnnl::memory(md, eng, DNNL_MEMORY_NONE);
  }
  size_t scratch_bytes() const noexcept { return bytes_; }
  void execute(Exec& s, std::unordered_map<int, dnnl::memory> args, void* scratch) {
    if (bytes_ > 0) {
      scratch_.set_data_handle(scratch);
      args.emplace(DNNL_ARG_SCRATCHPAD, scratch_);
    }
    s.run(prim_, args);
  }

 private:
  dnnl::primitive prim_;
  dnnl::memory scratch_;
  size_t bytes_ = 0;
};

memory::desc arg_md(const dnnl::primitive_desc_base& pd, int arg) {
  return pd.query_md(dnnl::query::exec_arg_md, arg);
}

// A reference implementation among the steps decides the answer.
dnnl::primitive_desc_base decisive(const dnnl::primitive_desc_base& a,
                                   const dnnl::primitive_desc_base& b) {
  return is_reference_impl(a) ? a : b;
}

// With use_shift, oneDNN 2.6's normalization backward wants a SHIFT argument
// too (it does not change dX); the forward run only for statistics adds
// zero.
dnnl::memory zero_memory(const memory::desc& md, const dnnl::engine& eng) {
  dnnl::memory m(md, eng);
  std::memset(m.get_data_handle(), 0, md.get_size());
  return m;
}

// Element i of a [C] node vector in f32, and back (16-bit rounded once).
float load(const void* p, ampx_dtype dt, int64_t i) {
  if (dt == AMPX_DTYPE_F32) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return dt == AMPX_DTYPE_BF16 ? bf16_bits_to_float(h) : f16_bits_to_float(h);
}
void store(void* p, ampx_dtype dt, int64_t i, float f) {
  if (dt == AMPX_DTYPE_F32) {
    static_cast<float*>(p)[i] = f;
  } else {
    static_cast<uint16_t*>(p)[i] =
        dt == AMPX_DTYPE_BF16 ? float_to_bf16_bits(f) : float_to_f16_bits(f);
  }
}

// The base of the kernels below: the context, the launch's thread count,
// one scratchpad for all steps, and oneDNN errors named after the node.
class MultiStepKernel : public reference::CpuKernel {
 public:
  void run(std::span<const void* const> in, std::span<void* const> out) final {
    try {
      ctx_->launch(
          [&] {
            Exec s{ctx_->stream(), *ctx_};
            void* scratch = scratch_bytes_ ? ctx_->scratchpad(scratch_bytes_) : nullptr;
            launch(s, scratch, in, out);
            s.wait();
          },
          threads_);
    } catch (const dnnl::error& e) {
      throw ps::StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
    }
  }

 protected:
  MultiStepKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : ctx_(std::move(ctx)), threads_(threads), where_(v.where()) {}
  // Creates the primitive under the launch's thread count (oneDNN fixes it
  // at creation, see PrimitiveKernel) and sizes the shared scratchpad.
  Step step(const dnnl::primitive_desc_base& pd) {
    Step st;
    ctx_->run([&] { st = Step(pd, ctx_->engine()); }, threads_);
    scratch_bytes_ = std::max(scratch_bytes_, st.scratch_bytes());
    return st;
  }
  const dnnl::engine& eng() const { return ctx_->engine(); }
  virtual void launch(Exec& s, void* scratch, std::span<const void* const> in,
                      std::span<void* const> out) = 0;

 private:
  std::shared_ptr<Context> ctx_;
  int threads_;
  std::string where_;
  size_t scratch_bytes_ = 0;
};

// ---------------------------------------------------------------- MaxPoolGrad

struct MaxPoolGradPds {
  dnnl::pooling_v2_forward::primitive_desc fwd;
  dnnl::pooling_v2_backward::primitive_desc bwd;
};

// Plain NCHW first; where that is a reference implementation (simple_nchw on
// AVX2), the channel-blocked layouts oneDNN's jit pooling wants, as plan_pool.
MaxPoolGradPds maxpool_grad_pds(const ps::NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &dy = v.input(0), &x = v.input(1);
  const dims_t xd = dims_of(x), yd = dims_of(dy);
  const PoolGradGeometry g = pool_grad_geometry(v, xd, yd);
  const memory::desc x_md = dense_md(x), y_md = dense_md(dy);
  auto make = [&](const memory::desc& xm, const memory::desc& ym) {
    MaxPoolGradPds p{pool_grad_forward_pd(g, xm, ym, eng), {}};
    p.bwd = pool_grad_backward_pd(g, p.fwd, xm, ym, eng);
    return p;
  };
  MaxPoolGradPds p = make(x_md, y_md);
  if (!is_reference_impl(p.fwd) && !is_reference_impl(p.bwd)) return p;
  for (auto tag : {memory::format_tag::nChw16c, memory::format_tag::nChw8c}) {
    try {
      MaxPoolGradPds q =
          make(memory::desc(xd, x_md.data_type(), tag), memory::desc(yd, y_md.data_type(), tag));
      if (!is_reference_impl(q.fwd) && !is_reference_impl(q.bwd)) return q;
    } catch (const dnnl::error&) {
    }
  }
  return p;
}

// dX of a max pool: oneDNN's backward routes each window's dY to the cell
// recorded in the forward's workspace (the first maximum), so the forward
// runs again here, in forward_training, only for that workspace; its output
// is discarded.
class MaxPoolGradKernel final : public MultiStepKernel {
 public:
  MaxPoolGradKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : MultiStepKernel(std::move(ctx), v, threads) {
    const MaxPoolGradPds p = maxpool_grad_pds(v, eng());
    fwd_ = step(p.fwd);
    bwd_ = step(p.bwd);
    x_ = Port(dense_md(v.input(1)), p.fwd.src_desc(), eng(), false);
    dy_ = Port(dense_md(v.input(0)), p.bwd.diff_dst_desc(), eng(), false);
    dx_ = Port(dense_md(v.output(0)), p.bwd.diff_src_desc(), eng(), true);
    y_ = dnnl::memory(p.fwd.dst_desc(), eng());
    ws_ = dnnl::memory(p.fwd.workspace_desc(), eng());
  }

 private:
  void launch(Exec& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    fwd_.execute(s,
                 {{DNNL_ARG_SRC, x_.in(in[1], s)}, {DNNL_ARG_DST, y_}, {DNNL_ARG_WORKSPACE, ws_}},
                 scratch);
    bwd_.execute(s,
                 {{DNNL_ARG_DIFF_DST, dy_.in(in[0], s)},
                  {DNNL_ARG_WORKSPACE, ws_},
                  {DNNL_ARG_DIFF_SRC, dx_.out(out[0])}},
                 scratch);
    dx_.flush(s);
  }

  Step fwd_, bwd_;
  Port x_, dy_, dx_;
  dnnl::memory y_, ws_;
};

// ---------------------------------------------------------- BatchNormTraining

dnnl::batch_normalization_forward::primitive_desc bn_training_pd(const ps::NodeView& v,
                                                                 const dnnl::engine& eng,
                                                                 float eps) {
  return dnnl::batch_normalization_forward::primitive_desc(
      dnnl::batch_normalization_forward::desc(prop_kind::forward_training, dense_md(v.input(0)),
                                              eps, kScaleShift),
      plan_attr(), eng);
}

// Y from the primitive (batch statistics); the outputs oneDNN does not
// produce (running statistics with momentum, ONNX's convention, and invstd)
// from its f32 batch mean and population variance, per channel.
class BatchNormTrainingKernel final : public MultiStepKernel {
 public:
  BatchNormTrainingKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : MultiStepKernel(std::move(ctx), v, threads),
        dt_(v.output(1).dtype),
        channels_(v.input(0).dims[1]),
        eps_(static_cast<float>(v.get_float("epsilon", 1e-5))),
        momentum_(static_cast<float>(v.get_float("momentum", 0.9))) {
    const auto pd = bn_training_pd(v, eng(), eps_);
    fwd_ = step(pd);
    x_ = Port(dense_md(v.input(0)), pd.src_desc(), eng(), false);
    scale_ = Port(dense_md(v.input(1)), arg_md(pd, DNNL_ARG_SCALE), eng(), false);
    shift_ = Port(dense_md(v.input(2)), arg_md(pd, DNNL_ARG_SHIFT), eng(), false);
    y_ = Port(dense_md(v.output(0)), pd.dst_desc(), eng(), true);
    mean_ = dnnl::memory(pd.mean_desc(), eng());
    var_ = dnnl::memory(pd.variance_desc(), eng());
  }

 private:
  void launch(Exec& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    fwd_.execute(s,
                 {{DNNL_ARG_SRC, x_.in(in[0], s)},
                  {DNNL_ARG_SCALE, scale_.in(in[1], s)},
                  {DNNL_ARG_SHIFT, shift_.in(in[2], s)},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_},
                  {DNNL_ARG_DST, y_.out(out[0])}},
                 scratch);
    y_.flush(s);
    s.wait();  // the statistics are read on the host next
    const auto* mean = static_cast<const float*>(mean_.get_data_handle());
    const auto* var = static_cast<const float*>(var_.get_data_handle());
    for (int64_t c = 0; c < channels_; ++c) {
      const float rm = load(in[3], dt_, c), rv = load(in[4], dt_, c);
      store(out[1], dt_, c, momentum_ * rm + (1.0f - momentum_) * mean[c]);
      store(out[2], dt_, c, momentum_ * rv + (1.0f - momentum_) * var[c]);
      store(out[3], dt_, c, mean[c]);
      // As the reference: 1 / sqrt(var + eps) in double, rounded once.
      store(out[4], dt_, c,
            static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps_)));
    }
  }

  ampx_dtype dt_;
  int64_t channels_;
  float eps_, momentum_;
  Step fwd_;
  Port x_, scale_, shift_, y_;
  dnnl::memory mean_, var_;
};

// -------------------------------------------------------------- BatchNormGrad

struct BatchNormGradPds {
  dnnl::batch_normalization_forward::primitive_desc fwd;  // the hint only
  dnnl::batch_normalization_backward::primitive_desc bwd;
};

// The op takes saved invstd where oneDNN takes a variance and adds its
// epsilon: with epsilon 0 the variance 1/invstd^2 gives back invstd.
BatchNormGradPds bn_grad_pds(const ps::NodeView& v, const dnnl::engine& eng) {
  BatchNormGradPds p{bn_training_pd(v, eng, 0.0f), {}};
  const memory::desc dy_md = dense_md(v.input(0)), x_md = dense_md(v.input(1));
  p.bwd = dnnl::batch_normalization_backward::primitive_desc(
      dnnl::batch_normalization_backward::desc(prop_kind::backward, dy_md, x_md, 0.0f, kScaleShift),
      plan_attr(), eng, p.fwd);
  return p;
}

class BatchNormGradKernel final : public MultiStepKernel {
 public:
  BatchNormGradKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : MultiStepKernel(std::move(ctx), v, threads),
        dt_(v.input(3).dtype),
        channels_(v.input(1).dims[1]) {
    const BatchNormGradPds p = bn_grad_pds(v, eng());
    bwd_ = step(p.bwd);
    dy_ = Port(dense_md(v.input(0)), p.bwd.diff_dst_desc(), eng(), false);
    x_ = Port(dense_md(v.input(1)), p.bwd.src_desc(), eng(), false);
    scale_ = Port(dense_md(v.input(2)), arg_md(p.bwd, DNNL_ARG_SCALE), eng(), false);
    dx_ = Port(dense_md(v.output(0)), p.bwd.diff_src_desc(), eng(), true);
    dscale_ = Port(dense_md(v.output(1)), arg_md(p.bwd, DNNL_ARG_DIFF_SCALE), eng(), true);
    dshift_ = Port(dense_md(v.output(2)), arg_md(p.bwd, DNNL_ARG_DIFF_SHIFT), eng(), true);
    mean_ = dnnl::memory(arg_md(p.bwd, DNNL_ARG_MEAN), eng());
    var_ = dnnl::memory(arg_md(p.bwd, DNNL_ARG_VARIANCE), eng());
    zero_shift_ = zero_memory(arg_md(p.bwd, DNNL_ARG_SHIFT), eng());
  }

 private:
  void launch(Exec& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    auto* mean = static_cast<float*>(mean_.get_data_handle());
    auto* var = static_cast<float*>(var_.get_data_handle());
    for (int64_t c = 0; c < channels_; ++c) {
      mean[c] = load(in[3], dt_, c);
      const double is = load(in[4], dt_, c);
      var[c] = static_cast<float>(1.0 / (is * is));
    }
    bwd_.execute(s,
                 {{DNNL_ARG_DIFF_DST, dy_.in(in[0], s)},
                  {DNNL_ARG_SRC, x_.in(in[1], s)},
                  {DNNL_ARG_SCALE, scale_.in(in[2], s)},
                  {DNNL_ARG_SHIFT, zero_shift_},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_},
                  {DNNL_ARG_DIFF_SRC, dx_.out(out[0])},
                  {DNNL_ARG_DIFF_SCALE, dscale_.out(out[1])},
                  {DNNL_ARG_DIFF_SHIFT, dshift_.out(out[2])}},
                 scratch);
    dx_.flush(s);
    dscale_.flush(s);
    dshift_.flush(s);
  }

  ampx_dtype dt_;
  int64_t channels_;
  Step bwd_;
  Port dy_, x_, scale_, dx_, dscale_, dshift_;
  dnnl::memory mean_, var_, zero_shift_;
};

// -------------------------------------------------------------- LayerNormGrad

// The op normalises over the dims from `axis` on: oneDNN's layer norm over
// the last dim of the 2-D view [rows, cols] (as plan_layernorm).
struct LayerNormGradPds {
  dnnl::layer_normalization_forward::primitive_desc fwd;
  dnnl::layer_normalization_backward::primitive_desc bwd;
  memory::desc data, vec;  // [rows, cols] and [cols], the node dtype
  int64_t rows = 0, cols = 0;
  float eps = 0.0f;
};

LayerNormGradPds ln_grad_pds(const ps::NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(1);
  const memory::data_type dt = to_dnnl(x.dtype);
  const int axis = normalize_axis(v.get_int("axis", -1), x.rank);
  const dims_t xd = dims_of(x);
  LayerNormGradPds p;
  p.eps = static_cast<float>(v.get_float("epsilon", 1e-5));
  p.rows = product(xd, 0, static_cast<size_t>(axis));
  p.cols = product(xd, static_cast<size_t>(axis));
  p.data = dense_md({p.rows, p.cols}, dt);
  p.vec = dense_md({p.cols}, dt);
  // The forward runs for its statistics only (its dst is discarded), with
  // the backward's flags so that it is the backward's hint. oneDNN's dScale
  // sums over the rows in per-thread partials, so its bits changed with the
  // thread count (docs/OPS.md "Determinism" forbids that): the kernel sums
  // dScale and dBias itself and discards oneDNN's. (2.6 has no
  // backward_data, dX alone, with a scale.)
  p.fwd = dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(prop_kind::forward_training, p.data, p.eps,
                                              normalization_flags::use_scale),
      plan_attr(), eng);
  p.bwd = dnnl::layer_normalization_backward::primitive_desc(
      dnnl::layer_normalization_backward::desc(prop_kind::backward, p.data, p.data, p.eps,
                                               normalization_flags::use_scale),
      plan_attr(), eng, p.fwd);
  return p;
}

class LayerNormGradKernel final : public MultiStepKernel {
 public:
  LayerNormGradKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : MultiStepKernel(std::move(ctx), v, threads), dt_(v.input(1).dtype) {
    const LayerNormGradPds p = ln_grad_pds(v, eng());
    rows_ = p.rows;
    cols_ = p.cols;
    eps_ = p.eps;
    fwd_ = step(p.fwd);
    bwd_ = step(p.bwd);
    x_ = Port(p.data, p.fwd.src_desc(), eng(), false);
    // The backward reads X again: the same bytes, its own staging if any.
    xb_ = Port(p.data, p.bwd.src_desc(), eng(), false);
    dy_ = Port(p.data, p.bwd.diff_dst_desc(), eng(), false);
    scale_ = Port(p.vec, arg_md(p.bwd, DNNL_ARG_SCALE), eng(), false);
    dx_ = Port(p.data, p.bwd.diff_src_desc(), eng(), true);
    y_ = dnnl::memory(p.fwd.dst_desc(), eng());
    mean_ = dnnl::memory(p.fwd.mean_desc(), eng());
    var_ = dnnl::memory(p.fwd.variance_desc(), eng());
    discarded_dscale_ = dnnl::memory(arg_md(p.bwd, DNNL_ARG_DIFF_SCALE), eng());
    inv_.resize(static_cast<size_t>(rows_));
  }

 private:
  void launch(Exec& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    const dnnl::memory scale = scale_.in(in[2], s);
    fwd_.execute(s,
                 {{DNNL_ARG_SRC, x_.in(in[1], s)},
                  {DNNL_ARG_SCALE, scale},
                  {DNNL_ARG_DST, y_},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_}},
                 scratch);
    bwd_.execute(s,
                 {{DNNL_ARG_SRC, xb_.in(in[1], s)},
                  {DNNL_ARG_DIFF_DST, dy_.in(in[0], s)},
                  {DNNL_ARG_SCALE, scale},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_},
                  {DNNL_ARG_DIFF_SRC, dx_.out(out[0])},
                  {DNNL_ARG_DIFF_SCALE, discarded_dscale_}},
                 scratch);
    dx_.flush(s);
    s.wait();  // the statistics are read on the host next
    parameter_grads(in[0], in[1], out[1], out[2]);
  }

  // dScale = sum over rows of dY * xhat, dBias = sum of dY, per column, each
  // summed in row order (as the reference kernel): threads split the
  // columns, never a column's sum, so the bits do not depend on their count.
  void parameter_grads(const void* dy, const void* x, void* dscale, void* dbias) {
    const auto* mean = static_cast<const float*>(mean_.get_data_handle());
    const auto* var = static_cast<const float*>(var_.get_data_handle());
    for (int64_t r = 0; r < rows_; ++r)
      inv_[static_cast<size_t>(r)] = 1.0f / std::sqrt(var[r] + eps_);
    constexpr int64_t kBlock = 64;  // columns per task: rows stream through it
    const int64_t blocks = (cols_ + kBlock - 1) / kBlock;
#ifdef AMPX_ONEDNN_HAVE_OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t c0 = b * kBlock, c1 = std::min(cols_, c0 + kBlock);
      float ds[kBlock] = {}, db[kBlock] = {};
      for (int64_t r = 0; r < rows_; ++r) {
        const float m = mean[r], is = inv_[static_cast<size_t>(r)];
        for (int64_t c = c0; c < c1; ++c) {
          const float g = load(dy, dt_, r * cols_ + c);
          ds[c - c0] += g * (load(x, dt_, r * cols_ + c) - m) * is;
          db[c - c0] += g;
        }
      }
      for (int64_t c = c0; c < c1; ++c) {
        store(dscale, dt_, c, ds[c - c0]);
        store(dbias, dt_, c, db[c - c0]);
      }
    }
  }

  ampx_dtype dt_;
  int64_t rows_ = 0, cols_ = 0;
  float eps_ = 0.0f;
  Step fwd_, bwd_;
  Port x_, xb_, dy_, scale_, dx_;
  dnnl::memory y_, mean_, var_, discarded_dscale_;
  std::vector<float> inv_;
};

}  // namespace

bool is_multi_primitive_training_op(const ps::NodeView& v) {
  const std::string_view op = v.op_type();
  return op == "MaxPoolGrad" || op == "BatchNormTraining" || op == "BatchNormGrad" ||
         op == "LayerNormGrad";
}

PrimitivePlan plan_multi_primitive_training_op(const ps::NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  PrimitivePlan p;
  if (op == "MaxPoolGrad") {
    const MaxPoolGradPds q = maxpool_grad_pds(v, eng);
    p.pd = decisive(q.fwd, q.bwd);
  } else if (op == "BatchNormTraining") {
    p.pd = bn_training_pd(v, eng, static_cast<float>(v.get_float("epsilon", 1e-5)));
  } else if (op == "BatchNormGrad") {
    const BatchNormGradPds q = bn_grad_pds(v, eng);
    p.pd = q.bwd;
  } else if (op == "LayerNormGrad") {
    const LayerNormGradPds q = ln_grad_pds(v, eng);
    p.pd = decisive(q.fwd, q.bwd);
  } else {
    throw NoPrimitive("not a multi-primitive training op: " + std::string(op));
  }
  return p;
}

std::unique_ptr<reference::CpuKernel> make_training_kernel(std::shared_ptr<Context> ctx,
                                                           const ps::NodeView& v, int threads) {
  const std::string_view op = v.op_type();
  std::unique_ptr<reference::CpuKernel> k;
  // Every primitive of the kernel, the Ports' reorders included, is created
  // under the launch's thread count: oneDNN fixes it at creation, and a
  // reorder made under the default ran 2-thread regions in a threads=1
  // plugin, whose spinning OpenMP workers took 10x the digits-cnn step.
  Context& c = *ctx;
  c.run(
      [&] {
        if (op == "MaxPoolGrad") k = std::make_unique<MaxPoolGradKernel>(ctx, v, threads);
        if (op == "BatchNormTraining")
          k = std::make_unique<BatchNormTrainingKernel>(ctx, v, threads);
        if (op == "BatchNormGrad") k = std::make_unique<BatchNormGradKernel>(ctx, v, threads);
        if (op == "LayerNormGrad") k = std::make_unique<LayerNormGradKernel>(ctx, v, threads);
      },
      threads);
  if (!k) throw NoPrimitive("not a multi-primitive training op: " + std::string(op));
  return k;
}

}  // namespace ampx::onednn
