#include "train_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "ampx/half.hpp"
#include "ampx/host_plugin.hpp"
#include "layout_store.hpp"
#include "ops.hpp"
#include "reorder_tally.hpp"
#include "thread_check.hpp"

namespace ampx::onednn {

namespace ps = plugin_support;
using dnnl::algorithm;
using dnnl::normalization_flags;
using dnnl::prop_kind;

namespace {

const normalization_flags kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

// ------------------------------------------------------------ building blocks

bool plain_layout(const memory::desc& md) {
  return md == memory::desc(md.dims(), md.data_type(), dense_strides(md.dims()));
}

// What a kernel's ports found while binding one launch: whether a plain
// input held a value that was blocked (LayoutStore::round_trip_source), and
// the outputs written plain, which then hold one too.
struct Binding {
  bool from_blocked = false;
  std::vector<std::pair<void*, uint64_t>> plain_outputs;
};

// One node tensor as one primitive argument `want` (layout and dtype),
// through the layout store (layout_store.hpp), as PrimitiveKernel's slots:
// an input whose current shadow is in `want` is used as it is; one whose
// shadow is in another layout of the same tensor is reordered straight from
// it; otherwise the plain bytes (written back first) are reordered in where
// `want` differs. An output in a non-plain layout becomes the tensor's
// shadow (the plain bytes go stale) unless it is staged; else it is
// reordered out to the plain bytes after the primitive.
class Port {
 public:
  Port() = default;
  Port(Context& ctx, const memory::desc& user, const memory::desc& want, uint64_t bytes,
       bool output)
      : ctx_(&ctx),
        want_(want == memory::desc() ? user : want),
        bytes_(bytes),
        user_(user, ctx.engine(), DNNL_MEMORY_NONE) {
    if (want_ == user) return;
    staged_ = dnnl::memory(want_, ctx.engine());  // library-allocated, kept between runs
    convert_ = output ? dnnl::reorder(staged_, user_) : dnnl::reorder(user_, staged_);
  }

  // Before the launch, outside the stream's run: where the primitive's
  // memory comes from.
  void bind_in(const void* p, Binding& b) {
    LayoutStore& ls = ctx_->layouts();
    pending_ = nullptr;
    if (ls.enabled()) {
      const dnnl::memory cur = ls.current(p, bytes_);
      if (cur) {
        const memory::desc md = cur.get_desc();
        if (md == want_) {  // the producer's layout: no reorder
          mem_ = cur;
          return;
        }
        if (staged_ && md.dims() == want_.dims()) {  // one reorder from the shadow
          if (md != shadow_md_) {
            ctx_->run([&] { from_shadow_ = dnnl::reorder(cur, staged_); });
            shadow_md_ = md;
          }
          from_ = cur;
          pending_ = &from_shadow_;
          mem_ = staged_;
          ls.count_launch_reorder();
          return;
        }
      }
    }
    ls.before_read(p, bytes_);
    user_.set_data_handle(const_cast<void*>(p));
    const bool source = ls.enabled() && ls.round_trip_source(p, bytes_);
    b.from_blocked = b.from_blocked || source;
    mem_ = user_;
    if (!staged_) return;
    from_ = user_;
    pending_ = &convert_;
    mem_ = staged_;
    ls.count_launch_reorder();
    if (source && !plain_layout(want_)) ls.count_round_trip();
  }
  void bind_out(void* p, bool staged, Binding& b) {
    LayoutStore& ls = ctx_->layouts();
    flush_ = false;
    if (ls.enabled() && staged_ && !staged && !plain_layout(want_)) {
      mem_ = ls.produce(p, bytes_, user_.get_desc(), want_);
      return;
    }
    // A staged output's other copies are the glue's business (after the run).
    if (!staged) {
      ls.before_write(p, bytes_);
      b.plain_outputs.emplace_back(p, bytes_);
    }
    user_.set_data_handle(p);
    mem_ = staged_ ? staged_ : user_;
    if (staged_) {
      flush_ = true;
      ls.count_launch_reorder();
    }
  }
  // In the launch: an input's memory, reordered now where bind_in said so.
  dnnl::memory in(dnnl::stream& s) {
    if (pending_) {
      ctx_->count_executed(*pending_);
      execute_reorder(ctx_->reorder_totals(), *pending_, s, from_, mem_);
    }
    return mem_;
  }
  dnnl::memory out() const { return mem_; }
  void flush(dnnl::stream& s) {
    if (!flush_) return;
    ctx_->count_executed(convert_);
    execute_reorder(ctx_->reorder_totals(), convert_, s, staged_, user_);
  }

 private:
  Context* ctx_ = nullptr;
  memory::desc want_;
  uint64_t bytes_ = 0;
  dnnl::memory user_, staged_;
  dnnl::reorder convert_;
  memory::desc shadow_md_;  // the layout from_shadow_ was made for
  dnnl::reorder from_shadow_;
  // This launch's binding.
  dnnl::memory from_, mem_;
  dnnl::reorder* pending_ = nullptr;
  bool flush_ = false;
};

// A primitive of a multi-step kernel and its scratchpad argument (the
// Context's one buffer per stream, plan_attr()).
class Step {
 public:
  Step() = default;
  Step(const dnnl::primitive_desc_base& pd, Context& ctx) : ctx_(&ctx), prim_(pd.get()) {
    const memory::desc md = pd.scratchpad_desc();
    bytes_ = md.get_size();
    if (bytes_ > 0) scratch_ = dnnl::memory(md, ctx.engine(), DNNL_MEMORY_NONE);
  }
  size_t scratch_bytes() const noexcept { return bytes_; }
  void execute(dnnl::stream& s, std::unordered_map<int, dnnl::memory> args, void* scratch) {
    if (bytes_ > 0) {
      scratch_.set_data_handle(scratch);
      args.emplace(DNNL_ARG_SCRATCHPAD, scratch_);
    }
    ctx_->count_executed(prim_);  // debug_counters=1's reference launches
    prim_.execute(s, args);
  }

 private:
  Context* ctx_ = nullptr;
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
// one scratchpad for all steps, and oneDNN errors named after the node. A
// tracked kernel (host_plugin::HostCopyKernel): bind() settles every node
// tensor with the layout store before the launch (Port), launch() runs the
// steps.
class MultiStepKernel : public host_plugin::HostCopyKernel {
 public:
  std::string implementation() const override { return impl_; }
  void run_tracked(std::span<const void* const> in, std::span<void* const> out,
                   std::span<const bool> staged) final {
    try {
      Binding b;
      bind(in, out, staged, b);
      if (b.from_blocked)
        for (const auto& [p, bytes] : b.plain_outputs)
          ctx_->layouts().mark_round_trip_source(p, bytes);
      ctx_->launch(
          [&] {
            dnnl::stream& s = ctx_->stream();
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
      : ctx_(std::move(ctx)), threads_(threads), where_(v.where()) {
    for (size_t i = 0; i < v.num_inputs(); ++i) {
      in_bytes_.push_back(ps::byte_size(v.input(i)));
      in_dtypes_.push_back(v.input(i).dtype);
    }
    for (size_t i = 0; i < v.num_outputs(); ++i) out_bytes_.push_back(ps::byte_size(v.output(i)));
  }
  // Creates the primitive under `threads` (the launch's count unless given:
  // oneDNN fixes it at creation, see PrimitiveKernel) and sizes the shared
  // scratchpad.
  Step step(const dnnl::primitive_desc_base& pd, int threads = 0) {
    Step st;
    ctx_->run([&] { st = Step(pd, *ctx_); }, threads > 0 ? threads : threads_);
    scratch_bytes_ = std::max(scratch_bytes_, st.scratch_bytes());
    impl_ += (impl_.empty() ? "" : " + ") + describe_impl(pd);
    return st;
  }
  // A Port of node input / output i.
  Port in_port(size_t i, const memory::desc& user, const memory::desc& want) {
    return Port(*ctx_, user, want, in_bytes_[i], false);
  }
  Port out_port(size_t i, const memory::desc& user, const memory::desc& want) {
    return Port(*ctx_, user, want, out_bytes_[i], true);
  }
  // Node tensors the kernel reads or writes on the host, as plain bytes.
  void host_read(std::span<const void* const> in, size_t i) {
    ctx_->layouts().before_read(in[i], in_bytes_[i]);
  }
  void host_write(std::span<void* const> out, std::span<const bool> staged, size_t i) {
    if (!staged[i]) ctx_->layouts().before_write(out[i], out_bytes_[i]);
  }
  Context& ctx() { return *ctx_; }
  const dnnl::engine& eng() const { return ctx_->engine(); }
  int threads() const noexcept { return threads_; }
  const std::string& where() const noexcept { return where_; }
  // The names step() has joined since the last call, and a fresh start.
  std::string take_implementation() { return std::exchange(impl_, {}); }
  virtual void bind(std::span<const void* const> in, std::span<void* const> out,
                    std::span<const bool> staged, Binding& b) = 0;
  virtual void launch(dnnl::stream& s, void* scratch, std::span<const void* const> in,
                      std::span<void* const> out) = 0;

  std::vector<uint64_t> in_bytes_, out_bytes_;
  std::vector<ampx_dtype> in_dtypes_;

 private:
  std::shared_ptr<Context> ctx_;
  int threads_;
  std::string where_;
  size_t scratch_bytes_ = 0;
  std::string impl_;  // the steps' describe_impl(), joined by " + "
};

// A kernel whose primitives run in the layout of a producer's blocked
// shadow (the convolution before a BatchNorm): a variant V of its steps and
// ports per layout, made on first sight of it (none for a layout oneDNN has
// only a reference implementation for, or padded to more than twice the
// tensor), `plain_` otherwise. A variant made at more than one thread is
// checked as make_thread_count_free() checks a kernel at prepare (its bits
// at one thread, on drawn inputs; thread_check.hpp), so that following a
// layout never gives up docs/OPS.md's thread-count promise.
template <typename V>
class LayoutFollowingKernel : public MultiStepKernel {
 protected:
  using MultiStepKernel::MultiStepKernel;
  // The variant for node tensors in `data` (dims and dtype of the node's
  // activation); nullptr where the primitive is a reference one. Throws
  // dnnl::error.
  virtual std::unique_ptr<V> make_variant(const memory::desc& data, int threads) = 0;

  void init(const memory::desc& plain) {
    plain_md_ = plain;
    plain_ = make_named(plain, threads());
    if (!plain_) throw dnnl::error(dnnl_unimplemented, "no primitive in the plain layout");
  }
  // The primitives of the variant the last launch ran (before any: the
  // plain one's), not those of every variant made so far.
  std::string implementation() const final {
    const auto it = names_.find(ran_ ? ran_ : plain_.get());
    return it == names_.end() ? std::string() : it->second;
  }
  // The variant following the shadow of node input i, if any.
  V& follow(std::span<const void* const> in, std::initializer_list<size_t> sources) {
    if (checking_) return *checking_;
    ran_ = &select(in, sources);
    return *ran_;
  }

 private:
  V& select(std::span<const void* const> in, std::initializer_list<size_t> sources) {
    LayoutStore& ls = ctx().layouts();
    if (!ls.enabled()) return *plain_;
    for (size_t i : sources) {
      const dnnl::memory cur = ls.current(in[i], in_bytes_[i]);
      if (!cur) continue;
      const memory::desc md = cur.get_desc();
      if (md == plain_md_ || md.dims() != plain_md_.dims() ||
          md.data_type() != plain_md_.data_type())
        continue;
      if (V* v = variant_for(md)) return *v;
    }
    return *plain_;
  }
  // make_variant(), its steps' names kept for implementation().
  std::unique_ptr<V> make_named(const memory::desc& md, int threads) {
    (void)take_implementation();
    std::unique_ptr<V> v = make_variant(md, threads);
    std::string name = take_implementation();
    if (v) names_[v.get()] = std::move(name);
    return v;
  }

  V* variant_for(const memory::desc& md) {
    for (auto& [m, v] : variants_)
      if (m == md) return v.get();
    std::unique_ptr<V> v;
    if (md.get_size() <= 2 * plain_md_.get_size()) {
      try {
        v = make_named(md, threads());
        if (v && threads() > 1 && ctx().determinism() == Determinism::kThreadCountFree)
          v = checked(std::move(v), md);
      } catch (const dnnl::error&) {
        v.reset();
      } catch (const NoPrimitive&) {  // same_layout(): a layout it does not know
        v.reset();
      }
    }
    variants_.emplace_back(md, std::move(v));
    return variants_.back().second.get();
  }

  // The threaded variant if its bits equal its one-thread build's on drawn
  // inputs (thread_check.hpp's draws and comparison), else the latter.
  std::unique_ptr<V> checked(std::unique_ptr<V> many, const memory::desc& md) {
    std::unique_ptr<V> one = make_named(md, 1);
    if (!one) return many;
    std::vector<std::vector<std::byte>> store;
    std::vector<const void*> in;
    std::vector<void*> out[2];
    for (size_t i = 0; i < in_bytes_.size(); ++i) {
      auto& w = store.emplace_back(in_bytes_[i] + 8);
      (void)fill_drawn(in_dtypes_[i], in_bytes_[i] / ps::dtype_size(in_dtypes_[i]), i, w.data());
      in.push_back(w.data());
    }
    for (auto& o : out)
      for (uint64_t bytes : out_bytes_) o.push_back(store.emplace_back(bytes + 8).data());
    std::vector<unsigned char> all_staged(out_bytes_.size() + 1, 1);
    const std::span<const bool> staged(reinterpret_cast<const bool*>(all_staged.data()),
                                       out_bytes_.size());
    {
      const Context::Uncounted quiet(ctx());  // these runs are not the node's
      checking_ = many.get();
      run_tracked(in, out[0], staged);
      checking_ = one.get();
      run_tracked(in, out[1], staged);
      checking_ = nullptr;
    }
    if (first_differing_output(ctx(), out[0], out[1], out_bytes_) < 0) return many;
    ps::plugin_log(ctx().log_level(), ps::LogLevel::info, "onednn",
                   where() + ": on one thread in a producer's blocked layout: its bits at " +
                       std::to_string(threads()) + " threads differ from one thread's");
    return one;
  }

  memory::desc plain_md_;
  std::unique_ptr<V> plain_;
  std::vector<std::pair<memory::desc, std::unique_ptr<V>>> variants_;
  V* checking_ = nullptr;  // the variant a check's run takes
  V* ran_ = nullptr;       // the variant the last launch took
  std::unordered_map<const V*, std::string> names_;
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

struct MaxPoolGradVariant {
  Step fwd, bwd;
  Port x, dy, dx;
  dnnl::memory y, ws;
};

// dX of a max pool: oneDNN's backward routes each window's dY to the cell
// recorded in the forward's workspace (the first maximum), so the forward
// runs again here, in forward_training, only for that workspace; its output
// is discarded. In the layout of X's shadow where it has one (the ReLU
// before the pool), so that dX reaches the ReLU's backward in it.
class MaxPoolGradKernel final : public LayoutFollowingKernel<MaxPoolGradVariant> {
 public:
  MaxPoolGradKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : LayoutFollowingKernel(std::move(ctx), v, threads),
        x_md_(dense_md(v.input(1))),
        y_md_(dense_md(v.input(0))),
        geometry_(pool_grad_geometry(v, dims_of(v.input(1)), dims_of(v.input(0)))),
        plain_pds_(maxpool_grad_pds(v, eng())) {
    init(x_md_);
  }

 private:
  std::unique_ptr<MaxPoolGradVariant> make_variant(const memory::desc& data, int threads) override {
    auto v = std::make_unique<MaxPoolGradVariant>();
    // The descriptors too under `threads`: oneDNN's jit pooling fixes its
    // work split when the descriptor is made.
    ctx().run(
        [&] {
          MaxPoolGradPds p = plain_pds_;
          if (data != x_md_) {
            const memory::desc y = same_layout(data, y_md_.dims());
            p.fwd = pool_grad_forward_pd(geometry_, data, y, eng());
            p.bwd = pool_grad_backward_pd(geometry_, p.fwd, data, y, eng());
            if (is_reference_impl(p.fwd) || is_reference_impl(p.bwd)) {
              v.reset();
              return;
            }
          }
          v->fwd = step(p.fwd, threads);
          v->bwd = step(p.bwd, threads);
          v->x = in_port(1, x_md_, p.fwd.src_desc());
          v->dy = in_port(0, y_md_, p.bwd.diff_dst_desc());
          v->dx = out_port(0, x_md_, p.bwd.diff_src_desc());
          v->y = dnnl::memory(p.fwd.dst_desc(), eng());
          v->ws = dnnl::memory(p.fwd.workspace_desc(), eng());
        },
        threads);
    return v;
  }
  void bind(std::span<const void* const> in, std::span<void* const> out,
            std::span<const bool> staged, Binding& b) override {
    v_ = &follow(in, {1});
    v_->x.bind_in(in[1], b);
    v_->dy.bind_in(in[0], b);
    v_->dx.bind_out(out[0], staged[0], b);
  }
  void launch(dnnl::stream& s, void* scratch, std::span<const void* const>,
              std::span<void* const>) override {
    MaxPoolGradVariant& v = *v_;
    v.fwd.execute(s, {{DNNL_ARG_SRC, v.x.in(s)}, {DNNL_ARG_DST, v.y}, {DNNL_ARG_WORKSPACE, v.ws}},
                  scratch);
    v.bwd.execute(s,
                  {{DNNL_ARG_DIFF_DST, v.dy.in(s)},
                   {DNNL_ARG_WORKSPACE, v.ws},
                   {DNNL_ARG_DIFF_SRC, v.dx.out()}},
                  scratch);
    v.dx.flush(s);
  }

  memory::desc x_md_, y_md_;
  PoolGradGeometry geometry_;
  MaxPoolGradPds plain_pds_;
  MaxPoolGradVariant* v_ = nullptr;
};

// ---------------------------------------------------------- BatchNormTraining

// `data`: X's (and Y's) descriptor, plain or a producer's blocked layout.
dnnl::batch_normalization_forward::primitive_desc bn_training_pd(const memory::desc& data,
                                                                 const dnnl::engine& eng,
                                                                 float eps) {
  return dnnl::batch_normalization_forward::primitive_desc(
      dnnl::batch_normalization_forward::desc(prop_kind::forward_training, data, eps, kScaleShift),
      plan_attr(), eng);
}

struct BnTrainingVariant {
  Step fwd;
  Port x, scale, shift, y;
  dnnl::memory mean, var;
};

// Y from the primitive (batch statistics), in the layout of X's shadow
// where it has one; the outputs oneDNN does not produce (running statistics
// with momentum, ONNX's convention, and invstd) from its f32 batch mean and
// population variance, per channel.
class BatchNormTrainingKernel final : public LayoutFollowingKernel<BnTrainingVariant> {
 public:
  BatchNormTrainingKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : LayoutFollowingKernel(std::move(ctx), v, threads),
        dt_(v.output(1).dtype),
        channels_(v.input(0).dims[1]),
        eps_(static_cast<float>(v.get_float("epsilon", 1e-5))),
        momentum_(static_cast<float>(v.get_float("momentum", 0.9))),
        x_md_(dense_md(v.input(0))),
        scale_md_(dense_md(v.input(1))),
        shift_md_(dense_md(v.input(2))) {
    init(x_md_);
  }

 private:
  std::unique_ptr<BnTrainingVariant> make_variant(const memory::desc& data, int threads) override {
    auto v = std::make_unique<BnTrainingVariant>();
    ctx().run(
        [&] {
          const auto pd = bn_training_pd(data, eng(), eps_);
          if (data != x_md_ && is_reference_impl(pd)) {
            v.reset();
            return;
          }
          v->fwd = step(pd, threads);
          v->x = in_port(0, x_md_, pd.src_desc());
          v->scale = in_port(1, scale_md_, arg_md(pd, DNNL_ARG_SCALE));
          v->shift = in_port(2, shift_md_, arg_md(pd, DNNL_ARG_SHIFT));
          v->y = out_port(0, x_md_, pd.dst_desc());
          v->mean = dnnl::memory(pd.mean_desc(), eng());
          v->var = dnnl::memory(pd.variance_desc(), eng());
        },
        threads);
    return v;
  }
  void bind(std::span<const void* const> in, std::span<void* const> out,
            std::span<const bool> staged, Binding& b) override {
    v_ = &follow(in, {0});
    v_->x.bind_in(in[0], b);
    v_->scale.bind_in(in[1], b);
    v_->shift.bind_in(in[2], b);
    host_read(in, 3);
    host_read(in, 4);
    v_->y.bind_out(out[0], staged[0], b);
    for (size_t i = 1; i < 5; ++i) host_write(out, staged, i);
  }
  void launch(dnnl::stream& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    BnTrainingVariant& v = *v_;
    v.fwd.execute(s,
                  {{DNNL_ARG_SRC, v.x.in(s)},
                   {DNNL_ARG_SCALE, v.scale.in(s)},
                   {DNNL_ARG_SHIFT, v.shift.in(s)},
                   {DNNL_ARG_MEAN, v.mean},
                   {DNNL_ARG_VARIANCE, v.var},
                   {DNNL_ARG_DST, v.y.out()}},
                  scratch);
    v.y.flush(s);
    s.wait();  // the statistics are read on the host next
    const auto* mean = static_cast<const float*>(v.mean.get_data_handle());
    const auto* var = static_cast<const float*>(v.var.get_data_handle());
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
  memory::desc x_md_, scale_md_, shift_md_;
  BnTrainingVariant* v_ = nullptr;
};

// -------------------------------------------------------------- BatchNormGrad

struct BatchNormGradPds {
  dnnl::batch_normalization_forward::primitive_desc fwd;  // the hint only
  dnnl::batch_normalization_backward::primitive_desc bwd;
};

// The op takes saved invstd where oneDNN takes a variance and adds its
// epsilon: with epsilon 0 the variance 1/invstd^2 gives back invstd. dY,
// X and dX in `data`: plain, or a producer's blocked layout.
BatchNormGradPds bn_grad_pds(const memory::desc& data, const dnnl::engine& eng) {
  BatchNormGradPds p{bn_training_pd(data, eng, 0.0f), {}};
  p.bwd = dnnl::batch_normalization_backward::primitive_desc(
      dnnl::batch_normalization_backward::desc(prop_kind::backward, data, data, 0.0f, kScaleShift),
      plan_attr(), eng, p.fwd);
  return p;
}

memory::desc bn_grad_data(const ps::NodeView& v) {
  return dense_md(v.input(1));
}

struct BnGradVariant {
  Step bwd;
  Port dy, x, scale, dx, dscale, dshift;
  dnnl::memory mean, var, zero_shift;
};

class BatchNormGradKernel final : public LayoutFollowingKernel<BnGradVariant> {
 public:
  BatchNormGradKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : LayoutFollowingKernel(std::move(ctx), v, threads),
        dt_(v.input(3).dtype),
        channels_(v.input(1).dims[1]),
        data_md_(bn_grad_data(v)),
        scale_md_(dense_md(v.input(2))),
        dscale_md_(dense_md(v.output(1))),
        dshift_md_(dense_md(v.output(2))) {
    init(data_md_);
  }

 private:
  std::unique_ptr<BnGradVariant> make_variant(const memory::desc& data, int threads) override {
    auto v = std::make_unique<BnGradVariant>();
    ctx().run(
        [&] {
          const BatchNormGradPds p = bn_grad_pds(data, eng());
          if (data != data_md_ && is_reference_impl(p.bwd)) {
            v.reset();
            return;
          }
          v->bwd = step(p.bwd, threads);
          v->dy = in_port(0, data_md_, p.bwd.diff_dst_desc());
          v->x = in_port(1, data_md_, p.bwd.src_desc());
          v->scale = in_port(2, scale_md_, arg_md(p.bwd, DNNL_ARG_SCALE));
          v->dx = out_port(0, data_md_, p.bwd.diff_src_desc());
          v->dscale = out_port(1, dscale_md_, arg_md(p.bwd, DNNL_ARG_DIFF_SCALE));
          v->dshift = out_port(2, dshift_md_, arg_md(p.bwd, DNNL_ARG_DIFF_SHIFT));
          v->mean = dnnl::memory(arg_md(p.bwd, DNNL_ARG_MEAN), eng());
          v->var = dnnl::memory(arg_md(p.bwd, DNNL_ARG_VARIANCE), eng());
          v->zero_shift = zero_memory(arg_md(p.bwd, DNNL_ARG_SHIFT), eng());
        },
        threads);
    return v;
  }
  // X's layout is the forward's (its producer's); dY follows it.
  void bind(std::span<const void* const> in, std::span<void* const> out,
            std::span<const bool> staged, Binding& b) override {
    v_ = &follow(in, {1, 0});
    v_->dy.bind_in(in[0], b);
    v_->x.bind_in(in[1], b);
    v_->scale.bind_in(in[2], b);
    host_read(in, 3);
    host_read(in, 4);
    v_->dx.bind_out(out[0], staged[0], b);
    v_->dscale.bind_out(out[1], staged[1], b);
    v_->dshift.bind_out(out[2], staged[2], b);
  }
  void launch(dnnl::stream& s, void* scratch, std::span<const void* const> in,
              std::span<void* const>) override {
    BnGradVariant& v = *v_;
    auto* mean = static_cast<float*>(v.mean.get_data_handle());
    auto* var = static_cast<float*>(v.var.get_data_handle());
    for (int64_t c = 0; c < channels_; ++c) {
      mean[c] = load(in[3], dt_, c);
      const double is = load(in[4], dt_, c);
      var[c] = static_cast<float>(1.0 / (is * is));
    }
    v.bwd.execute(s,
                  {{DNNL_ARG_DIFF_DST, v.dy.in(s)},
                   {DNNL_ARG_SRC, v.x.in(s)},
                   {DNNL_ARG_SCALE, v.scale.in(s)},
                   {DNNL_ARG_SHIFT, v.zero_shift},
                   {DNNL_ARG_MEAN, v.mean},
                   {DNNL_ARG_VARIANCE, v.var},
                   {DNNL_ARG_DIFF_SRC, v.dx.out()},
                   {DNNL_ARG_DIFF_SCALE, v.dscale.out()},
                   {DNNL_ARG_DIFF_SHIFT, v.dshift.out()}},
                  scratch);
    v.dx.flush(s);
    v.dscale.flush(s);
    v.dshift.flush(s);
  }

  ampx_dtype dt_;
  int64_t channels_;
  memory::desc data_md_, scale_md_, dscale_md_, dshift_md_;
  BnGradVariant* v_ = nullptr;
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
    x_ = in_port(1, p.data, p.fwd.src_desc());
    // The backward reads X again: the same bytes, its own staging if any.
    xb_ = in_port(1, p.data, p.bwd.src_desc());
    dy_ = in_port(0, p.data, p.bwd.diff_dst_desc());
    scale_ = in_port(2, p.vec, arg_md(p.bwd, DNNL_ARG_SCALE));
    dx_ = out_port(0, p.data, p.bwd.diff_src_desc());
    y_ = dnnl::memory(p.fwd.dst_desc(), eng());
    mean_ = dnnl::memory(p.fwd.mean_desc(), eng());
    var_ = dnnl::memory(p.fwd.variance_desc(), eng());
    discarded_dscale_ = dnnl::memory(arg_md(p.bwd, DNNL_ARG_DIFF_SCALE), eng());
    inv_.resize(static_cast<size_t>(rows_));
  }

 private:
  // dY and X are read on the host too (parameter_grads), as plain bytes.
  void bind(std::span<const void* const> in, std::span<void* const> out,
            std::span<const bool> staged, Binding& b) override {
    host_read(in, 0);
    host_read(in, 1);
    x_.bind_in(in[1], b);
    xb_.bind_in(in[1], b);
    dy_.bind_in(in[0], b);
    scale_.bind_in(in[2], b);
    dx_.bind_out(out[0], staged[0], b);
    host_write(out, staged, 1);
    host_write(out, staged, 2);
  }
  void launch(dnnl::stream& s, void* scratch, std::span<const void* const> in,
              std::span<void* const> out) override {
    const dnnl::memory scale = scale_.in(s);
    fwd_.execute(s,
                 {{DNNL_ARG_SRC, x_.in(s)},
                  {DNNL_ARG_SCALE, scale},
                  {DNNL_ARG_DST, y_},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_}},
                 scratch);
    bwd_.execute(s,
                 {{DNNL_ARG_SRC, xb_.in(s)},
                  {DNNL_ARG_DIFF_DST, dy_.in(s)},
                  {DNNL_ARG_SCALE, scale},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_},
                  {DNNL_ARG_DIFF_SRC, dx_.out()},
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
    p.pd =
        bn_training_pd(dense_md(v.input(0)), eng, static_cast<float>(v.get_float("epsilon", 1e-5)));
  } else if (op == "BatchNormGrad") {
    const BatchNormGradPds q = bn_grad_pds(bn_grad_data(v), eng);
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
