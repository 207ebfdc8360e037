#include "primitive_kernel.hpp"

#include <utility>

namespace ampx::onednn {

using plugin_support::StatusError;

PrimitiveKernel::PrimitiveKernel(std::shared_ptr<Context> ctx, const PrimitivePlan& plan,
                                 const plugin_support::NodeView& node)
    : ctx_(std::move(ctx)), where_(node.where()) {
  try {
    const dnnl::engine& eng = ctx_->engine();
    prim_ = dnnl::primitive(plan.pd.get());
    const memory::desc scratch_md = plan.pd.scratchpad_desc();
    scratch_bytes_ = scratch_md.get_size();
    if (scratch_bytes_ > 0) {
      scratch_ = dnnl::memory(scratch_md, eng, DNNL_MEMORY_NONE);
      args_.emplace(DNNL_ARG_SCRATCHPAD, scratch_);
    }
    for (const Arg& a : plan.args) {
      memory::desc want = plan.pd.query_md(dnnl::query::exec_arg_md, a.dnnl_arg);
      if (want == memory::desc()) want = a.user_md;
      const void* constant =
          a.output ? nullptr : plugin_support::NodeView::const_data(node.input(a.index));
      if (want == a.user_md) {
        dnnl::memory user(a.user_md, eng, DNNL_MEMORY_NONE);
        args_.emplace(a.dnnl_arg, user);
        bindings_.push_back({a.output, a.index, user});
        continue;
      }
      dnnl::memory staged(want, eng);  // library-allocated
      args_.emplace(a.dnnl_arg, staged);
      if (constant) {  // weights: reorder once, now
        dnnl::memory user(a.user_md, eng, const_cast<void*>(constant));
        ctx_->run([&] {
          dnnl::reorder(user, staged).execute(ctx_->stream(), user, staged);
          ctx_->stream().wait();
        });
        continue;
      }
      dnnl::memory user(a.user_md, eng, DNNL_MEMORY_NONE);
      bindings_.push_back({a.output, a.index, user});
      if (a.output) {
        post_.push_back({dnnl::reorder(staged, user), staged, user});
      } else {
        pre_.push_back({dnnl::reorder(user, staged), user, staged});
      }
    }
  } catch (const dnnl::error& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
  }
}

void PrimitiveKernel::run(std::span<const void* const> inputs, std::span<void* const> outputs) {
  try {
    for (Binding& b : bindings_) {
      b.user.set_data_handle(b.output ? outputs[b.index] : const_cast<void*>(inputs[b.index]));
    }
    if (scratch_bytes_ > 0) scratch_.set_data_handle(ctx_->scratchpad(scratch_bytes_));
    ctx_->run([&] {
      dnnl::stream& s = ctx_->stream();
      for (Conversion& c : pre_) c.reorder.execute(s, c.from, c.to);
      prim_.execute(s, args_);
      for (Conversion& c : post_) c.reorder.execute(s, c.from, c.to);
      s.wait();
    });
  } catch (const dnnl::error& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
  }
}

}  // namespace ampx::onednn
