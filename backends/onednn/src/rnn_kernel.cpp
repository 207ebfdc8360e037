#include "rnn_kernel.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ampx/half.hpp"
#include "ampx/opset/recurrent.hpp"
#include "ampx/opset/work.hpp"
#include "dnnl_util.hpp"
#include "primitive_kernel.hpp"

namespace ampx::onednn {

namespace ps = plugin_support;
using opset::RecurrentActivation;
using opset::RecurrentKind;
using opset::RecurrentSpec;
using tag = memory::format_tag;

namespace {

// oneDNN's LSTM gate g (i, f, c~, o) is ONNX's gate kLstmGate[g] (i, o, f, c).
constexpr int kLstmGate[4] = {0, 2, 3, 1};
// oneDNN's peephole row p (i, f, o) is ONNX's P row kLstmPeephole[p] (i, o, f).
constexpr int kLstmPeephole[3] = {0, 2, 1};

// The node's dimensions and attributes, read once.
struct Geometry {
  RecurrentSpec s;
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1, G = 1;
  int64_t bias_gates = 1;  // oneDNN's: G, or 4 for lbr_gru (u' holds Rb_h)
  int lens_slot = -1;      // input index of sequence_lens, -1 when absent
  ampx_dtype dtype = AMPX_DTYPE_F32;
  bool lstm() const { return s.kind == RecurrentKind::kLstm; }
  bool lbr() const { return s.kind == RecurrentKind::kGru && s.linear_before_reset; }
};

Geometry geometry(const ps::NodeView& v) {
  Geometry g;
  g.s = opset::recurrent_spec(v);
  const ampx_tensor_desc& x = v.input(0);
  g.T = x.dims[0];
  g.N = x.dims[1];
  g.I = x.dims[2];
  g.H = g.s.hidden;
  g.D = g.s.directions;
  g.G = g.s.gates;
  g.bias_gates = g.lbr() ? 4 : g.G;
  const size_t fixed = g.lstm() ? 7 : 5;
  if (v.num_inputs() > fixed) g.lens_slot = static_cast<int>(fixed);
  g.dtype = x.dtype;
  return g;
}

int64_t length_at(const void* lens, ampx_dtype dt, int64_t n) {
  return dt == AMPX_DTYPE_I64 ? static_cast<const int64_t*>(lens)[n]
                              : static_cast<const int32_t*>(lens)[n];
}

// Every sequence runs all T steps (a length outside [0, T] is the loop's
// error to report).
bool full_lengths(const void* lens, ampx_dtype dt, int64_t N, int64_t T) {
  for (int64_t n = 0; n < N; ++n)
    if (length_at(lens, dt, n) != T) return false;
  return true;
}

// Why oneDNN's primitives cannot compute this node as described; "" when
// they can.
std::string misfit(const ps::NodeView& v, const Geometry& g) {
  using F = RecurrentActivation::Fn;
  const RecurrentSpec& s = g.s;
  if (s.clip > 0) return "clip has no oneDNN form";
  if (s.input_forget) return "input_forget has no oneDNN form";
  for (int d = 0; d < s.directions; ++d) {
    switch (s.kind) {
      case RecurrentKind::kLstm:
        if (s.f(d, 0).fn != F::kSigmoid || s.f(d, 1).fn != F::kTanh || s.f(d, 2).fn != F::kTanh)
          return "activations other than Sigmoid, Tanh, Tanh";
        break;
      case RecurrentKind::kGru:
        if (s.f(d, 0).fn != F::kSigmoid || s.f(d, 1).fn != F::kTanh)
          return "activations other than Sigmoid, Tanh";
        break;
      case RecurrentKind::kRnn: {
        const F f = s.f(d, 0).fn;
        if (f != F::kTanh && f != F::kRelu && f != F::kSigmoid)
          return "an activation other than Tanh, Relu, Sigmoid";
        if (f != s.f(0, 0).fn) return "different activations per direction";
        break;
      }
    }
  }
  if (g.T == 0 || g.N == 0 || g.I == 0 || g.H == 0) return "an empty tensor";
  if (g.lens_slot >= 0) {
    const ampx_tensor_desc& l = v.input(static_cast<size_t>(g.lens_slot));
    const void* lens = ps::NodeView::const_data(l);
    if (lens && !full_lengths(lens, l.dtype, g.N, g.T))
      return "sequence_lens shorter than seq_length";
  }
  return "";
}

// The primitive descriptor and the memory descriptors of its arguments.
struct Plan {
  dnnl::primitive_desc_base pd;
  memory::desc x, state, w_user, r_user, w, r, bias, peephole, y;
};

Plan plan(const Geometry& g, const dnnl::engine& eng) {
  const memory::data_type dt = to_dnnl(g.dtype), f32 = memory::data_type::f32;
  const int64_t T = g.T, N = g.N, I = g.I, H = g.H, D = g.D, G = g.G;
  Plan p;
  p.x = memory::desc({T, N, I}, dt, tag::tnc);
  p.state = memory::desc({1, D, N, H}, dt, tag::ldnc);  // initial_h/c, Y_h, Y_c
  p.w_user = memory::desc({1, D, I, G, H}, dt, tag::ldgoi);
  p.r_user = memory::desc({1, D, H, G, H}, dt, tag::ldgoi);
  const memory::desc w_any({1, D, I, G, H}, dt, tag::any), r_any({1, D, H, G, H}, dt, tag::any);
  p.bias = memory::desc({1, D, g.bias_gates, H}, f32, tag::ldgo);
  p.y = memory::desc({T, N, D * H}, dt, tag::tnc);
  const auto dir = D == 2        ? dnnl::rnn_direction::bidirectional_concat
                   : g.s.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                 : dnnl::rnn_direction::unidirectional_left2right;
  const auto fwd = dnnl::prop_kind::forward_inference;
  const dnnl::primitive_attr attr = plan_attr();
  switch (g.s.kind) {
    case RecurrentKind::kLstm: {
      p.peephole = memory::desc({1, D, 3, H}, f32, tag::ldgo);
      const dnnl::lstm_forward::desc d(fwd, dir, p.x, p.state, p.state, w_any, r_any, p.peephole,
                                       p.bias, p.y, p.state, p.state);
      p.pd = dnnl::lstm_forward::primitive_desc(d, attr, eng);
      break;
    }
    case RecurrentKind::kGru:
      if (g.lbr()) {
        const dnnl::lbr_gru_forward::desc d(fwd, dir, p.x, p.state, w_any, r_any, p.bias, p.y,
                                            p.state);
        p.pd = dnnl::lbr_gru_forward::primitive_desc(d, attr, eng);
      } else {
        const dnnl::gru_forward::desc d(fwd, dir, p.x, p.state, w_any, r_any, p.bias, p.y, p.state);
        p.pd = dnnl::gru_forward::primitive_desc(d, attr, eng);
      }
      break;
    case RecurrentKind::kRnn: {
      using F = RecurrentActivation::Fn;
      const F f = g.s.f(0, 0).fn;
      const dnnl::algorithm alg = f == F::kTanh   ? dnnl::algorithm::eltwise_tanh
                                  : f == F::kRelu ? dnnl::algorithm::eltwise_relu
                                                  : dnnl::algorithm::eltwise_logistic;
      const dnnl::vanilla_rnn_forward::desc d(fwd, alg, dir, p.x, p.state, w_any, r_any, p.bias,
                                              p.y, p.state);
      p.pd = dnnl::vanilla_rnn_forward::primitive_desc(d, attr, eng);
      break;
    }
  }
  p.w = p.pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_WEIGHTS_LAYER);
  p.r = p.pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_WEIGHTS_ITER);
  return p;
}

// The primitive forks and joins a few times per step (the recurrent GEMM,
// the cell), so a step's work, not the node's, decides: one thread below
// 1 MFLOP per step and direction (PrimitiveKernel::threads_for's bound),
// else the plugin's count. An LSTM of hidden 64 and batch 1 ran 16 steps in
// 0.04 ms on one thread and 9 ms on two on this project's loaded 2-core
// machine.
int threads_for(const Context& ctx, const ps::NodeView& v, const Geometry& g) {
  const double per_step =
      opset::estimate_work(v.desc()).flops / static_cast<double>(std::max<int64_t>(1, g.T * g.D));
  return per_step < 1e6 ? 1 : PrimitiveKernel::threads_for(ctx, v.desc());
}

float load(const void* p, ampx_dtype dt, int64_t i) {
  if (dt == AMPX_DTYPE_F32) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return dt == AMPX_DTYPE_BF16 ? bf16_bits_to_float(h) : f16_bits_to_float(h);
}

std::string dtype_word(const ps::NodeView& v) {
  bool h = false, b = false;
  host_plugin::node_uses_16bit(v.desc(), &h, &b);
  return b ? "bf16" : h ? "f16" : "f32";
}

// A node the primitive does not fit: the loop, counted.
class CountedLoop final : public reference::CpuKernel {
 public:
  CountedLoop(std::shared_ptr<Context> ctx, std::unique_ptr<reference::CpuKernel> loop)
      : ctx_(std::move(ctx)), loop_(std::move(loop)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    loop_->run(in, out);
    ctx_->count_recurrent_run(false);
  }

 private:
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<reference::CpuKernel> loop_;
};

class RecurrentKernel final : public reference::CpuKernel {
 public:
  RecurrentKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v,
                  std::unique_ptr<reference::CpuKernel> loop, int threads)
      : ctx_(std::move(ctx)),
        loop_(std::move(loop)),
        g_(geometry(v)),
        threads_(threads),
        where_(v.where()),
        esize_(static_cast<size_t>(ps::dtype_size(g_.dtype))) {
    const dnnl::engine& eng = ctx_->engine();
    const Plan p = plan(g_, eng);
    if (g_.lens_slot >= 0) lens_dtype_ = v.input(static_cast<size_t>(g_.lens_slot)).dtype;
    const memory::desc scratch_md = p.pd.scratchpad_desc();
    scratch_bytes_ = scratch_md.get_size();
    if (scratch_bytes_ > 0) scratch_ = dnnl::memory(scratch_md, eng, DNNL_MEMORY_NONE);
    x_ = dnnl::memory(p.x, eng, DNNL_MEMORY_NONE);
    h0_ = dnnl::memory(p.state, eng, DNNL_MEMORY_NONE);
    yh_ = dnnl::memory(p.state, eng, DNNL_MEMORY_NONE);
    // Y is dst_layer itself for one direction; two are concatenated per
    // row by oneDNN, [T, N, 2H], and copied out to [T, 2, N, H].
    y_ = g_.D == 2 ? dnnl::memory(p.y, eng) : dnnl::memory(p.y, eng, DNNL_MEMORY_NONE);
    w_user_ = dnnl::memory(p.w_user, eng, DNNL_MEMORY_NONE);
    r_user_ = dnnl::memory(p.r_user, eng, DNNL_MEMORY_NONE);
    w_ = dnnl::memory(p.w, eng);  // library-allocated, in the primitive's layout
    r_ = dnnl::memory(p.r, eng);
    bias_ = dnnl::memory(p.bias, eng);
    if (g_.lstm()) {
      c0_ = dnnl::memory(p.state, eng, DNNL_MEMORY_NONE);
      yc_ = dnnl::memory(p.state, eng, DNNL_MEMORY_NONE);
      peephole_ = dnnl::memory(p.peephole, eng);
      // ONNX's gate order differs: W and R are repacked before the reorder.
      w_pack_.resize(static_cast<size_t>(g_.D * g_.G * g_.H * g_.I) * esize_);
      r_pack_.resize(static_cast<size_t>(g_.D * g_.G * g_.H * g_.H) * esize_);
    }
    args_ = {{DNNL_ARG_SRC_LAYER, x_},    {DNNL_ARG_SRC_ITER, h0_}, {DNNL_ARG_WEIGHTS_LAYER, w_},
             {DNNL_ARG_WEIGHTS_ITER, r_}, {DNNL_ARG_BIAS, bias_},   {DNNL_ARG_DST_LAYER, y_},
             {DNNL_ARG_DST_ITER, yh_}};
    if (g_.lstm()) {
      args_.emplace(DNNL_ARG_SRC_ITER_C, c0_);
      args_.emplace(DNNL_ARG_WEIGHTS_PEEPHOLE, peephole_);
      args_.emplace(DNNL_ARG_DST_ITER_C, yc_);
    }
    if (scratch_bytes_ > 0) args_.emplace(DNNL_ARG_SCRATCHPAD, scratch_);
    // Constant weights, biases and peepholes are converted once, now
    // (const_data is borrowed for this call); the others at every run.
    const void* wc = ps::NodeView::const_data(v.input(1));
    const void* rc = ps::NodeView::const_data(v.input(2));
    const void* bc = ps::NodeView::const_data(v.input(3));
    const void* pc = g_.lstm() ? ps::NodeView::const_data(v.input(6)) : nullptr;
    w_per_run_ = !wc;
    r_per_run_ = !rc;
    b_per_run_ = !bc;
    p_per_run_ = g_.lstm() && !pc;
    ctx_->run(
        [&] {
          // oneDNN fixes a primitive's threads at creation (PrimitiveKernel).
          prim_ = dnnl::primitive(p.pd.get());
          impl_ = describe_impl(p.pd);
          w_reorder_ = dnnl::reorder(w_user_, w_);
          r_reorder_ = dnnl::reorder(r_user_, r_);
          convert(wc, rc, bc, pc);
          ctx_->stream().wait();
        },
        threads_);
  }

  std::string implementation() const override {
    return last_ran_loop_ ? loop_->implementation() : impl_;
  }
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    if (g_.lens_slot >= 0 &&
        !full_lengths(in[static_cast<size_t>(g_.lens_slot)], lens_dtype_, g_.N, g_.T)) {
      loop_->run(in, out);
      ctx_->count_recurrent_run(false);
      last_ran_loop_ = true;
      return;
    }
    last_ran_loop_ = false;
    try {
      ctx_->launch(
          [&] {
            convert(w_per_run_ ? in[1] : nullptr, r_per_run_ ? in[2] : nullptr,
                    b_per_run_ ? in[3] : nullptr, p_per_run_ ? in[6] : nullptr);
            x_.set_data_handle(const_cast<void*>(in[0]));
            h0_.set_data_handle(const_cast<void*>(in[4]));
            if (g_.D == 1) y_.set_data_handle(out[0]);
            yh_.set_data_handle(out[1]);
            if (g_.lstm()) {
              c0_.set_data_handle(const_cast<void*>(in[5]));
              yc_.set_data_handle(out[2]);
            }
            if (scratch_bytes_ > 0) scratch_.set_data_handle(ctx_->scratchpad(scratch_bytes_));
            prim_.execute(ctx_->stream(), args_);
            ctx_->stream().wait();
          },
          threads_);
    } catch (const dnnl::error& e) {
      throw ps::StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
    }
    if (g_.D == 2) {
      // [T, N, 2, H] -> [T, 2, N, H]
      const auto* src = static_cast<const unsigned char*>(y_.get_data_handle());
      auto* dst = static_cast<unsigned char*>(out[0]);
      const size_t row = static_cast<size_t>(g_.H) * esize_;
      for (int64_t t = 0; t < g_.T; ++t)
        for (int64_t n = 0; n < g_.N; ++n)
          for (int64_t d = 0; d < 2; ++d)
            std::memcpy(dst + static_cast<size_t>((t * 2 + d) * g_.N + n) * row,
                        src + static_cast<size_t>((t * g_.N + n) * 2 + d) * row, row);
    }
    ctx_->count_recurrent_run(true);
  }

 private:
  // ONNX's W, R, B, P (those not null) into the primitive's weights, bias
  // and peepholes. Reorders are enqueued on the stream; the caller waits.
  void convert(const void* w, const void* r, const void* b, const void* p) {
    dnnl::stream& s = ctx_->stream();
    if (w) reorder_weights(w, g_.I, w_pack_, w_user_, w_, w_reorder_, s);
    if (r) reorder_weights(r, g_.H, r_pack_, r_user_, r_, r_reorder_, s);
    const int64_t D = g_.D, H = g_.H, GH = g_.G * g_.H;
    if (b) {
      auto* bias = static_cast<float*>(bias_.get_data_handle());
      for (int64_t d = 0; d < D; ++d) {
        const int64_t wb = d * 2 * GH, rb = wb + GH;  // Wb, then Rb
        for (int64_t gate = 0; gate < g_.bias_gates; ++gate) {
          float* out = bias + (d * g_.bias_gates + gate) * H;
          const int64_t src = g_.lstm() ? kLstmGate[gate] : gate;
          for (int64_t k = 0; k < H; ++k) {
            if (g_.lbr() && gate == 2)  // o: Wb_h only
              out[k] = load(b, g_.dtype, wb + 2 * H + k);
            else if (g_.lbr() && gate == 3)  // u': Rb_h, inside the reset product
              out[k] = load(b, g_.dtype, rb + 2 * H + k);
            else
              out[k] = load(b, g_.dtype, wb + src * H + k) + load(b, g_.dtype, rb + src * H + k);
          }
        }
      }
    }
    if (p) {
      auto* peep = static_cast<float*>(peephole_.get_data_handle());
      for (int64_t d = 0; d < D; ++d)
        for (int64_t row = 0; row < 3; ++row)
          for (int64_t k = 0; k < H; ++k)
            peep[(d * 3 + row) * H + k] = load(p, g_.dtype, (d * 3 + kLstmPeephole[row]) * H + k);
    }
  }

  // W [D, G·H, cols] (ONNX) is ldgoi; LSTM's gate blocks are put in
  // oneDNN's order first.
  void reorder_weights(const void* src, int64_t cols, std::vector<unsigned char>& pack,
                       dnnl::memory& user, dnnl::memory& want, dnnl::reorder& reorder,
                       dnnl::stream& s) {
    const void* from = src;
    if (g_.lstm()) {
      const size_t block = static_cast<size_t>(g_.H * cols) * esize_;
      const auto* in = static_cast<const unsigned char*>(src);
      for (int64_t d = 0; d < g_.D; ++d)
        for (int64_t gate = 0; gate < 4; ++gate)
          std::memcpy(pack.data() + static_cast<size_t>(d * 4 + gate) * block,
                      in + static_cast<size_t>(d * 4 + kLstmGate[gate]) * block, block);
      from = pack.data();
    }
    user.set_data_handle(const_cast<void*>(from));
    reorder.execute(s, user, want);
  }

  std::shared_ptr<Context> ctx_;
  std::unique_ptr<reference::CpuKernel> loop_;
  Geometry g_;
  int threads_;
  std::string where_;
  std::string impl_;            // describe_impl() of the primitive
  bool last_ran_loop_ = false;  // the last run had shorter sequences: the loop
  size_t esize_;
  ampx_dtype lens_dtype_ = AMPX_DTYPE_I64;
  bool w_per_run_ = true, r_per_run_ = true, b_per_run_ = true, p_per_run_ = false;
  dnnl::primitive prim_;
  dnnl::reorder w_reorder_, r_reorder_;
  dnnl::memory x_, h0_, c0_, w_user_, r_user_, w_, r_, bias_, peephole_, y_, yh_, yc_, scratch_;
  size_t scratch_bytes_ = 0;
  std::vector<unsigned char> w_pack_, r_pack_;
  std::unordered_map<int, dnnl::memory> args_;
};

}  // namespace

bool is_recurrent_op(std::string_view op) noexcept {
  return op == "LSTM" || op == "GRU" || op == "RNN";
}

host_plugin::CapabilityAnswer answer_recurrent(const ps::NodeView& v, const Context& ctx,
                                               double fast_flops, double slow_flops) {
  const bool uses16 = host_plugin::node_uses_16bit(v.desc());
  const std::string what = dtype_word(v) + " " + std::string(v.op_type());
  host_plugin::CapabilityAnswer a;
  std::string why;
  try {
    const Geometry g = geometry(v);
    why = misfit(v, g);
    if (why.empty()) {
      const Plan p = plan(g, ctx.engine());
      // "ref:any" by name: oneDNN's gemm-based RNN (see rnn_kernel.hpp).
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = "oneDNN " + std::string(p.pd.impl_info_str()) + " RNN (gemm-based)";
      if (g.lens_slot >= 0 && !ps::NodeView::const_data(v.input(static_cast<size_t>(g.lens_slot))))
        a.note += "; a run with shorter sequence_lens: plain loop";
      a.cost_us = host_plugin::cost_hint_us(v.desc(), fast_flops, false);
      return a;
    }
  } catch (const NoPrimitive& e) {
    why = e.what();
  } catch (const dnnl::error&) {
    why = "no oneDNN RNN primitive on " + ctx.isa();
  }
  a.reference_kernel = true;
  if (uses16) {
    a.support = AMPX_SUPPORT_EMULATED;
    a.note = what + ": " + why + "; emulated by the reference kernels (f32 compute)";
  } else {
    a.support = AMPX_SUPPORT_NATIVE;
    a.note = what + ": " + why + "; plain loop";
  }
  a.cost_us = host_plugin::cost_hint_us(v.desc(), slow_flops, uses16);
  return a;
}

int recurrent_threads(const Context& ctx, const ps::NodeView& v) {
  return threads_for(ctx, v, geometry(v));
}

std::unique_ptr<reference::CpuKernel> make_recurrent_loop(
    std::shared_ptr<Context> ctx, std::unique_ptr<reference::CpuKernel> loop) {
  return std::make_unique<CountedLoop>(std::move(ctx), std::move(loop));
}

std::unique_ptr<reference::CpuKernel> make_recurrent_kernel(
    std::shared_ptr<Context> ctx, const ps::NodeView& v, std::unique_ptr<reference::CpuKernel> loop,
    int threads) {
  try {
    return std::make_unique<RecurrentKernel>(std::move(ctx), v, std::move(loop), threads);
  } catch (const dnnl::error& e) {
    throw ps::StatusError(AMPX_STATUS_INTERNAL, v.where() + ": oneDNN: " + e.what());
  }
}

}  // namespace ampx::onednn
