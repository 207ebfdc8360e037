#include "primitive_kernel.hpp"

#include "ampx/opset/work.hpp"
#include "ampx/reference/kernels.hpp"
#include "reorder_tally.hpp"

#include <utility>

namespace ampx::onednn {

using plugin_support::StatusError;

namespace {

bool same_tensor(const memory::desc& a, const memory::desc& b) {
  return a.dims() == b.dims() && a.data_type() == b.data_type();
}

bool plain_layout(const memory::desc& md) {
  return md == memory::desc(md.dims(), md.data_type(), dense_strides(md.dims()));
}

}  // namespace

PrimitiveKernel::PrimitiveKernel(std::shared_ptr<Context> ctx, const PrimitivePlan& plan,
                                 const plugin_support::NodeView& node, int threads)
    : ctx_(std::move(ctx)),
      threads_(threads),
      where_(node.where()),
      args_(plan.args),
      relayout_(plan.relayout) {
  for (size_t i = 0; i < node.num_inputs(); ++i)
    in_bytes_.push_back(plugin_support::byte_size(node.input(i)));
  for (size_t i = 0; i < node.num_outputs(); ++i)
    out_bytes_.push_back(plugin_support::byte_size(node.output(i)));
  try {
    main_ = prepare(plan.pd, &node);
    if (plan.then_add) {
      const void* data = plugin_support::NodeView::const_data(node.input(plan.then_input));
      if (!data) throw dnnl::error(dnnl_invalid_arguments, "the in-place operand is not constant");
      const memory::desc want = plan.then_add->src1_desc();
      const memory::desc given(want.dims(), want.data_type(), dense_strides(want.dims()));
      dnnl::memory user(given, ctx_->engine(), const_cast<void*>(data));
      then_operand_ = dnnl::memory(want, ctx_->engine());  // library-allocated: data may go
      ctx_->run(
          [&] {
            dnnl::reorder(user, then_operand_).execute(ctx_->stream(), user, then_operand_);
            ctx_->stream().wait();
            then_ = dnnl::primitive(plan.then_add->get());
            then_impl_ = describe_impl(*plan.then_add);
          },
          threads_);
    }
  } catch (const dnnl::error& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
  }
}

std::unique_ptr<PrimitiveKernel::Prepared> PrimitiveKernel::prepare(
    const dnnl::primitive_desc_base& pd, const plugin_support::NodeView* node) {
  const dnnl::engine& eng = ctx_->engine();
  auto p = std::make_unique<Prepared>();
  p->prim = dnnl::primitive(pd.get());
  p->impl = describe_impl(pd);
  const memory::desc scratch_md = pd.scratchpad_desc();
  p->scratch_bytes = scratch_md.get_size();
  if (p->scratch_bytes > 0) {
    p->scratch = dnnl::memory(scratch_md, eng, DNNL_MEMORY_NONE);
    p->args.emplace(DNNL_ARG_SCRATCHPAD, p->scratch);
  }
  for (const Arg& a : args_) {
    memory::desc want = pd.query_md(dnnl::query::exec_arg_md, a.dnnl_arg);
    if (want == memory::desc()) want = a.user_md;
    if (want != a.user_md && !a.output) {
      const void* constant =
          node ? plugin_support::NodeView::const_data(node->input(a.index)) : nullptr;
      if (constant) {  // weights: reorder once, now
        dnnl::memory user(a.user_md, eng, const_cast<void*>(constant));
        dnnl::memory staged(want, eng);  // library-allocated
        ctx_->run([&] {
          dnnl::reorder(user, staged).execute(ctx_->stream(), user, staged);
          ctx_->stream().wait();
        });
        constants_.emplace(a.dnnl_arg, staged);
        p->args.emplace(a.dnnl_arg, staged);
        continue;
      }
      if (auto it = constants_.find(a.dnnl_arg); it != constants_.end()) {
        // A variant shares the main primitive's reordered constant; its
        // const_data is gone by now.
        if (it->second.get_desc() != want)
          throw dnnl::error(dnnl_invalid_arguments, "constant in another layout");
        p->args.emplace(a.dnnl_arg, it->second);
        continue;
      }
    }
    Slot s{a.dnnl_arg,
           a.output,
           a.index,
           a.output ? out_bytes_[a.index] : in_bytes_[a.index],
           a.user_md,
           want,
           dnnl::memory(a.user_md, eng, DNNL_MEMORY_NONE),
           {},
           {},
           {},
           {}};
    if (want != a.user_md) {
      s.staged = dnnl::memory(want, eng);
      s.convert = a.output ? dnnl::reorder(s.staged, s.user) : dnnl::reorder(s.user, s.staged);
    }
    p->slots.push_back(std::move(s));
  }
  return p;
}

PrimitiveKernel::Prepared* PrimitiveKernel::variant_for(const memory::desc& src, int dnnl_arg) {
  for (auto& [md, v] : variants_)
    if (md == src) return v.get();
  std::unique_ptr<Prepared> v;
  // A layout padded to more than twice the tensor (one channel of 8 in
  // nChw8c: a 1-channel segmentation map) costs more to work in than the
  // write-back to plain does.
  const memory::desc dense(src.dims(), src.data_type(), dense_strides(src.dims()));
  if (src.get_size() > 2 * dense.get_size()) {
    variants_.emplace_back(src, nullptr);
    return nullptr;
  }
  try {
    ctx_->run(
        [&] {  // created under the launch's thread count, as the main one
          const dnnl::primitive_desc_base pd = relayout_(src);
          // Only a fast implementation that takes the shadow as it is beats
          // the reorders of the main primitive.
          if (!is_reference_impl(pd) && pd.query_md(dnnl::query::exec_arg_md, dnnl_arg) == src)
            v = prepare(pd, nullptr);
        },
        threads_);
  } catch (const dnnl::error&) {
  } catch (const NoPrimitive&) {
  }
  variants_.emplace_back(src, std::move(v));
  return variants_.back().second.get();
}

void PrimitiveKernel::run_tracked(std::span<const void* const> inputs,
                                  std::span<void* const> outputs,
                                  std::span<const bool> staged_output) {
  ctx_->count_kernel_run(true);
  try {
    Prepared* p = main_.get();
    LayoutStore& layouts = ctx_->layouts();
    // The op runs in any layout: follow the first input whose shadow is in
    // another layout than the main primitive wants.
    if (relayout_ && layouts.enabled()) {
      for (const Slot& s : main_->slots) {
        if (s.output) continue;
        const dnnl::memory cur = layouts.current(inputs[s.index], s.bytes);
        if (!cur || cur.get_desc() == s.want_md || !same_tensor(cur.get_desc(), s.want_md))
          continue;
        if (Prepared* v = variant_for(cur.get_desc(), s.dnnl_arg)) p = v;
        break;
      }
    }
    launch(*p, inputs, outputs, staged_output);
  } catch (const dnnl::error& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
  }
}

void PrimitiveKernel::launch(Prepared& p, std::span<const void* const> inputs,
                             std::span<void* const> outputs, std::span<const bool> staged_output) {
  LayoutStore& layouts = ctx_->layouts();
  const bool blocked = layouts.enabled();
  pre_.clear();
  post_.clear();
  // Round trips (LayoutStore::round_trip_source): whether a plain input was
  // a blocked value, handed on to the plain outputs.
  bool from_blocked = false;
  plain_outputs_.clear();
  for (Slot& s : p.slots) {
    const bool reordered = s.want_md != s.user_md;
    if (!s.output) {
      void* ptr = const_cast<void*>(inputs[s.index]);
      if (blocked) {
        const dnnl::memory cur = layouts.current(ptr, s.bytes);
        const memory::desc cur_md = cur ? cur.get_desc() : memory::desc();
        if (cur && cur_md == s.want_md) {  // the producer's layout: no reorder
          p.args[s.dnnl_arg] = cur;
          continue;
        }
        if (cur && reordered && same_tensor(cur_md, s.want_md)) {
          // One reorder from the shadow instead of two through plain.
          if (s.shadow_md != cur_md) {
            // Under the launch's thread count, as every primitive: made
            // under the caller's default, it ran a 2-thread region in a
            // threads=1 plugin (14 ms for a 2 MiB nhwc -> nChw16c reorder
            // on a loaded 2-core machine, 0.2 ms at one thread).
            ctx_->run([&] { s.from_shadow = dnnl::reorder(cur, s.staged); }, threads_);
            s.shadow_md = cur_md;
          }
          pre_.push_back({&s.from_shadow, cur, s.staged});
          p.args[s.dnnl_arg] = s.staged;
          layouts.count_launch_reorder();
          continue;
        }
        layouts.before_read(ptr, s.bytes);
      }
      s.user.set_data_handle(ptr);
      const bool source = blocked && layouts.round_trip_source(ptr, s.bytes);
      from_blocked = from_blocked || source;
      if (reordered) {
        pre_.push_back({&s.convert, s.user, s.staged});
        layouts.count_launch_reorder();
        if (source && !plain_layout(s.want_md)) layouts.count_round_trip();
      }
      p.args[s.dnnl_arg] = reordered ? s.staged : s.user;
    } else {
      void* ptr = outputs[s.index];
      const bool staged = staged_output[s.index];
      if (blocked && reordered && !staged) {  // stays in the primitive's layout
        p.args[s.dnnl_arg] = layouts.produce(ptr, s.bytes, s.user_md, s.want_md);
        continue;
      }
      // A staged output's other copies are the glue's business (after the run).
      if (!staged) {
        layouts.before_write(ptr, s.bytes);
        plain_outputs_.emplace_back(ptr, s.bytes);
      }
      s.user.set_data_handle(ptr);
      if (reordered) {
        post_.push_back({&s.convert, s.staged, s.user});
        layouts.count_launch_reorder();
      }
      p.args[s.dnnl_arg] = reordered ? s.staged : s.user;
    }
  }
  if (from_blocked)
    for (const auto& [ptr, bytes] : plain_outputs_) layouts.mark_round_trip_source(ptr, bytes);
  if (p.scratch_bytes > 0) p.scratch.set_data_handle(ctx_->scratchpad(p.scratch_bytes));
  last_ = &p;
  ctx_->launch(
      [&] {
        dnnl::stream& st = ctx_->stream();
        for (Conversion& c : pre_) {
          ctx_->count_executed(*c.reorder);
          execute_reorder(ctx_->reorder_totals(), *c.reorder, st, c.from, c.to);
        }
        ctx_->count_executed(p.prim);
        p.prim.execute(st, p.args);
        if (then_) {
          const dnnl::memory& y = p.args.at(DNNL_ARG_DST);
          ctx_->count_executed(then_);
          then_.execute(st,
                        {{DNNL_ARG_SRC_0, y}, {DNNL_ARG_SRC_1, then_operand_}, {DNNL_ARG_DST, y}});
        }
        for (Conversion& c : post_) {
          ctx_->count_executed(*c.reorder);
          execute_reorder(ctx_->reorder_totals(), *c.reorder, st, c.from, c.to);
        }
        st.wait();
      },
      threads_);
}

std::string PrimitiveKernel::implementation() const {
  const std::string& impl = (last_ ? *last_ : *main_).impl;
  return then_ ? impl + " + " + then_impl_ : impl;
}

int PrimitiveKernel::threads_for(const Context& ctx, const ampx_node_desc& node) {
  // About 20 us of one core's work: 1 MFLOP, or 256 KiB moved.
  const opset::WorkEstimate w = opset::estimate_work(node);
  return w.flops < 1e6 && w.bytes < 256.0 * 1024 ? 1 : ctx.threads();
}

}  // namespace ampx::onednn
