#include "policy.hpp"

#include "ampx/opset/catalogue.hpp"

#include <sstream>
#include <string_view>

#include "attention_kernel.hpp"
#include "concat_kernel.hpp"
#include "loop_kernel.hpp"
#include "ops.hpp"
#include "pool_kernel.hpp"
#include "primitive_kernel.hpp"
#include "reduce_loop.hpp"
#include "rnn_kernel.hpp"
#include "thread_check.hpp"
#include "train_kernels.hpp"

namespace ampx::onednn {
namespace {

namespace ps = ampx::plugin_support;

// Cost hints (the capability database measures the real thing): optimised
// oneDNN kernels at ~50 GFLOP/s, reference ones and loops at ~2 GFLOP/s.
constexpr double kFastFlops = 50e9, kSlowFlops = 2e9;

// "bf16" / "f16" when the node touches 16-bit floats, else "f32" etc.
std::string node_dtype(const ps::NodeView& v) {
  bool h = false, b = false;
  host_plugin::node_uses_16bit(v.desc(), &h, &b);
  if (b) return "bf16";
  if (h) return "f16";
  return v.num_inputs() ? ps::dtype_name(v.input(0).dtype) : "f32";
}

// A pool whose windows oneDNN cannot express (ops_norm_pool.cpp: an
// AveragePool counting padding whose ceil_mode windows hang past it, which
// oneDNN would divide by the whole kernel) runs the reference loop.
bool pool_loop_on_no_primitive(std::string_view op) {
  return op == "AveragePool" || op == "MaxPool";
}

}  // namespace

std::string node_signature(const ampx_node_desc& node) {
  const ps::NodeView v(node);
  std::ostringstream s;
  s.precision(17);
  s << v.op_type();
  // Whether an input is a constant changes the answer (a Pow by a constant
  // scalar is an eltwise primitive, by a tensor a loop): part of the key.
  auto tensor = [&](const ampx_tensor_desc& t) {
    s << '|' << (ps::NodeView::const_data(t) ? "c" : "") << static_cast<int>(t.dtype) << ':';
    for (int32_t i = 0; i < t.rank; ++i) s << t.dims[i] << ',';
  };
  for (size_t i = 0; i < v.num_inputs(); ++i) tensor(v.input(i));
  s << "->";
  for (size_t i = 0; i < v.num_outputs(); ++i) tensor(v.output(i));
  for (size_t i = 0; i < v.num_attrs(); ++i) {
    const ampx_attr& a = v.attr_at(i);
    s << '|' << a.name << '=' << static_cast<int>(a.kind) << ':';
    switch (a.kind) {
      case AMPX_ATTR_INT:
        s << a.i;
        break;
      case AMPX_ATTR_FLOAT:
        s << a.f;
        break;
      case AMPX_ATTR_INTS:
        for (size_t j = 0; j < a.count; ++j) s << a.ints[j] << ',';
        break;
      case AMPX_ATTR_FLOATS:
        for (size_t j = 0; j < a.count; ++j) s << a.floats[j] << ',';
        break;
      case AMPX_ATTR_STRING:
        s << (a.s ? a.s : "");
        break;
    }
  }
  return s.str();
}

OnednnPolicy::OnednnPolicy(const Options& opts) : ctx_(std::make_shared<Context>(opts)) {
  run_reference_loops_on_openmp(*ctx_);
}

host_plugin::CapabilityAnswer OnednnPolicy::answer(const ampx_node_desc& node) const {
  const std::string key = node_signature(node);
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  host_plugin::CapabilityAnswer a = measure(node);
  std::lock_guard lock(mu_);
  cache_.emplace(key, a);
  return a;
}

host_plugin::CapabilityAnswer OnednnPolicy::measure(const ampx_node_desc& node) const {
  const ps::NodeView v(node);
  const bool uses16 = host_plugin::node_uses_16bit(node);
  host_plugin::CapabilityAnswer a;
  // LSTM, GRU, RNN: oneDNN's RNN primitives where they fit, else the loop
  // (rnn_kernel.hpp).
  if (is_recurrent_op(v.op_type())) return answer_recurrent(v, *ctx_, kFastFlops, kSlowFlops);
  // Attention: two matmul primitives around an f32 softmax loop where both
  // are jit, else the loop (attention_kernel.hpp).
  if (v.op_type() == "Attention") return answer_attention(v, *ctx_, kFastFlops, kSlowFlops);
  // The other later ONNX ops (opset::is_reference_only) and the training
  // ops: a primitive where oneDNN has a fast one, else the reference loop
  // (f32 native, 16-bit emulated), never `unsupported` where the reference
  // kernels run the node.
  const bool loop_fallback =
      opset::is_training_op(v.op_type()) || opset::is_reference_only(v.op_type());
  if (opset::is_data_movement(v.op_type())) {
    // GatherElements, GatherND, ScatterND: the loop, where the reference
    // kernels take the node (ScatterND reduces only in f32/f64/i32/i64).
    if (opset::is_reference_only(v.op_type()) && !reference::can_run(node, &a.note)) {
      a.support = AMPX_SUPPORT_UNSUPPORTED;
      return a;
    }
    // Bytes moved, exact in any dtype (16-bit moves half the bytes of f32):
    // native. The oneDNN reorder or concat where oneDNN has one (in f32
    // also its generic copy, which reads blocked activations as they are);
    // in 16-bit without a fast one, the loop.
    a.support = AMPX_SUPPORT_NATIVE;
    a.note = "data movement: plain loop, exact in any dtype";
    a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, false);
    if (runs_as_loop(v)) return a;
    if (v.op_type() == "Concat") {  // concat_kernel.hpp
      a.note = "data movement: chunk copies in the producers' layout";
      a.cost_us = host_plugin::cost_hint_us(node, kFastFlops, false);
      return a;
    }
    try {
      const PrimitivePlan plan = plan_primitive(v, ctx_->engine());
      const std::string impl = plan.pd.impl_info_str();
      const bool fast = !is_reference_impl(plan.pd);
      if (fast || !uses16) {
        a.note = "oneDNN " + impl;
        if (fast) a.cost_us = host_plugin::cost_hint_us(node, kFastFlops, false);
        return a;
      }
    } catch (const NoPrimitive&) {
    } catch (const dnnl::error&) {
    }
    a.reference_kernel = true;
    return a;
  }
  if (runs_as_loop(v)) {
    a.support = uses16 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE;
    a.note = uses16 ? "plain loop, 16-bit widened" : "plain loop";
    a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, uses16);
    return a;
  }
  const std::string what = node_dtype(v) + " " + std::string(v.op_type());
  bool no_primitive = false;
  try {
    const PrimitivePlan plan = plan_primitive(v, ctx_->engine());
    const std::string impl = plan.pd.impl_info_str();
    if (is_reference_impl(plan.pd) && loop_fallback) {
      // oneDNN's reference kernel of a training op (softmax backward below
      // AVX-512) or a later ONNX op (ReduceL2 on AVX2, a 16-bit Round)
      // computes what the reference loop does, only slower: the loop,
      // answered as before the primitives (f32 native, 16-bit widened).
      a.support = uses16 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE;
      a.note = what + ": oneDNN has " + impl + " only on " + ctx_->isa() + "; plain loop instead";
      a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, uses16);
      a.reference_kernel = true;
      return a;
    }
    if (is_reference_impl(plan.pd) && reduce_loop_fits(v)) {
      // ReduceSum / ReduceMean over axes oneDNN's jit reduction does not
      // take (anything but trailing ones: the bias gradients of a training
      // step): its ref:any is slow, the plugin's loop is not
      // (reduce_loop.hpp). f32 native, 16-bit widened as the loops.
      a.support = uses16 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE;
      a.note = what + ": oneDNN has " + impl + " only on " + ctx_->isa() +
               "; vectorised loop instead" + (uses16 ? ", 16-bit widened" : "");
      a.cost_us = host_plugin::cost_hint_us(node, kFastFlops, uses16);
      a.reference_kernel = true;
      return a;
    }
    if (is_reference_impl(plan.pd)) {
      a.support = AMPX_SUPPORT_EMULATED;
      a.note = what + ": " + impl + " only on " + ctx_->isa();
      a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, uses16);
    } else {
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = "oneDNN " + impl;
      a.cost_us = host_plugin::cost_hint_us(node, kFastFlops, false);
    }
  } catch (const NoPrimitive& e) {
    a.support = AMPX_SUPPORT_UNSUPPORTED;
    a.note = what + ": " + e.what();
    no_primitive = true;
  } catch (const dnnl::error& e) {
    a.support = AMPX_SUPPORT_UNSUPPORTED;
    a.note = what + ": no oneDNN implementation on " + ctx_->isa() + " (" + e.what() + ")";
  }
  // A training op whose backward primitive oneDNN cannot create for this
  // node (a rank or attribute its primitive lacks) runs on the reference
  // loop as before the primitives were wired in, f32 native (16-bit: below,
  // as any other node); so does a later ONNX op's, and a pool's that
  // oneDNN cannot express (pool_loop_on_no_primitive()).
  if (a.support == AMPX_SUPPORT_UNSUPPORTED && !uses16 &&
      (loop_fallback || (no_primitive && pool_loop_on_no_primitive(v.op_type()))) &&
      reference::can_run(node, nullptr)) {
    a.support = AMPX_SUPPORT_NATIVE;
    a.note += "; plain loop instead";
    a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, false);
    a.reference_kernel = true;
    return a;
  }
  // A 16-bit node oneDNN cannot run here still runs, on the reference
  // kernels (16-bit storage, f32 compute): `emulated`, and priced as such.
  // This is what a capability-blind O2 plan gets on this CPU.
  if (a.support == AMPX_SUPPORT_UNSUPPORTED && uses16 && reference::can_run(node, nullptr)) {
    a.support = AMPX_SUPPORT_EMULATED;
    a.note += reduce_loop_fits(v) ? "; vectorised loop, 16-bit widened"
                                  : "; emulated by the reference kernels (f32 compute)";
    a.cost_us = host_plugin::cost_hint_us(node, kSlowFlops, true);
    a.reference_kernel = true;
  }
  return a;
}

std::unique_ptr<reference::CpuKernel> OnednnPolicy::make_kernel(const ampx_node_desc& node) const {
  const ps::NodeView v(node);
  // The reference kernel factory validates the node against docs/OPS.md
  // (malformed: invalid_argument; no kernel at all: UnsupportedNode) and is
  // the kernel itself for the loop ops.
  auto loop = std::make_unique<LoopKernel>(ctx_, reference::make_kernel(node));
  if (runs_as_loop(v)) return loop;
  const host_plugin::CapabilityAnswer a = answer(node);
  if (a.support == AMPX_SUPPORT_UNSUPPORTED)
    throw reference::UnsupportedNode(v.where() + ": " + a.note);
  if (v.op_type() == "Concat") return std::make_unique<ConcatKernel>(ctx_, v);
  // Every kernel below is built for a thread count by a maker, which
  // make_thread_count_free() may call twice: docs/OPS.md's thread-count
  // promise (thread_check.hpp).
  if (is_recurrent_op(v.op_type())) {  // the RNN primitive, or the loop (rnn_kernel.hpp)
    if (a.reference_kernel) return make_recurrent_loop(ctx_, std::move(loop));
    return make_thread_count_free(*ctx_, v, recurrent_threads(*ctx_, v), [&](int threads) {
      return make_recurrent_kernel(
          ctx_, v, std::make_unique<LoopKernel>(ctx_, reference::make_kernel(node)), threads);
    });
  }
  if (v.op_type() == "Attention") {  // the matmuls and the softmax loop, or the loop
    if (a.reference_kernel) return loop;
    return make_thread_count_free(
        *ctx_, v, PrimitiveKernel::threads_for(*ctx_, node),
        [&](int threads) { return make_attention_kernel(ctx_, v, threads); },
        [&](size_t slot, void* p) { return fill_attention_input(v, slot, p); });
  }
  if (a.reference_kernel && reduce_loop_fits(v))
    return std::make_unique<ReduceLoopKernel>(ctx_, v, PrimitiveKernel::threads_for(*ctx_, node));
  if (a.reference_kernel) return loop;
  try {
    // oneDNN fixes a primitive's thread count when it is created: under the
    // launch's thread setting, or a threads=1 plugin would run 2-thread
    // regions (and wake idle OpenMP workers) at every launch.
    const auto make = [&](int threads) -> std::unique_ptr<reference::CpuKernel> {
      if (is_multi_primitive_training_op(v)) return make_training_kernel(ctx_, v, threads);
      std::unique_ptr<host_plugin::HostCopyKernel> kernel;
      ctx_->run(
          [&] {
            kernel = std::make_unique<PrimitiveKernel>(ctx_, plan_primitive(v, ctx_->engine()), v,
                                                       threads);
          },
          threads);
      const std::string_view op = v.op_type();
      // pool_kernel.hpp's loop walks undilated windows; a dilated pool runs
      // the primitive alone.
      const bool dilated =
          v.has_attr("dilations") && v.get_ints("dilations") != std::vector<int64_t>{1, 1};
      if ((op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") && !dilated)
        return std::make_unique<BlockedPoolKernel>(ctx_, v, std::move(kernel), threads);
      return kernel;
    };
    return make_thread_count_free(*ctx_, v, PrimitiveKernel::threads_for(*ctx_, node), make);
  } catch (const NoPrimitive& e) {
    // A training op or a later ONNX op falls back to its loop rather than
    // failing (measure()); so does a pool oneDNN cannot express.
    if (opset::is_training_op(v.op_type()) || opset::is_reference_only(v.op_type()) ||
        pool_loop_on_no_primitive(v.op_type()))
      return loop;
    throw reference::UnsupportedNode(v.where() + ": " + e.what());
  } catch (const dnnl::error& e) {
    if (opset::is_training_op(v.op_type()) || opset::is_reference_only(v.op_type())) return loop;
    throw ps::StatusError(AMPX_STATUS_INTERNAL, v.where() + ": oneDNN: " + e.what());
  }
}

host_plugin::ConversionTotals OnednnPolicy::conversions() const {
  return ctx_->reorder_totals();
}

std::string OnednnPolicy::plugin_note() const {
  LayoutStore& layouts = ctx_->layouts();
  std::string note = "ISA " + ctx_->isa() + ", " + ctx_->runtime() + " runtime, " +
                     std::to_string(ctx_->threads()) + " threads, " +
                     (layouts.enabled() ? "blocked" : "plain") + " activations";
  // The default (bits independent of the thread count) goes unsaid; its
  // waiver is shown wherever the devices are (`ampx devices`).
  if (ctx_->determinism() == Determinism::kFastest) note += ", determinism off";
  if (ctx_->debug_counters()) {
    const ReorderCounts c = layouts.counts();
    note += "; activation reorders: " + std::to_string(c.total()) + " (launch " +
            std::to_string(c.launch) + ", materialised " + std::to_string(c.materialised) +
            ", round trips " + std::to_string(c.round_trips) + ")";
    note += "; recurrent runs: primitive " + std::to_string(ctx_->recurrent_primitive_runs()) +
            ", loop " + std::to_string(ctx_->recurrent_loop_runs());
    note += "; kernel runs: primitive " + std::to_string(ctx_->primitive_runs()) + ", loop " +
            std::to_string(ctx_->loop_runs());
    // Only when there are any: the note holds 255 bytes, and a hot path
    // should have none (the loops run what oneDNN has only a reference
    // implementation for).
    if (ctx_->reference_launches() > 0)
      note += "; reference launches " + std::to_string(ctx_->reference_launches());
    // The note holds 255 bytes: these two short, at the end.
    note += ctx_->determinism() == Determinism::kFastest
                ? std::string("; unchecked")
                : "; checked " + std::to_string(ctx_->thread_checks()) + ", pinned " +
                      std::to_string(ctx_->pinned_to_one_thread());
    note += "; launch threads " + std::to_string(ctx_->last_launch_threads());
  }
  return note;
}

void OnednnPolicy::describe_device(ampx_device_props& p) const {
  const std::string model = host_plugin::cpu_model_name();
  ps::copy_cstr(p.name, model);
  ps::copy_cstr(p.driver_version, "oneDNN " + ctx_->version());
  ps::copy_cstr(p.fingerprint, std::string("onednn/") + kPluginVersion + "/onednn-" +
                                   ctx_->version() + "/" + ctx_->isa() + "/" +
                                   host_plugin::fingerprint_token(model));
}

}  // namespace ampx::onednn
