#include "concat_kernel.hpp"

#include <cstring>

#include "layout_store.hpp"

namespace ampx::onednn {

namespace ps = plugin_support;

ConcatKernel::ConcatKernel(std::shared_ptr<Context> ctx, const ps::NodeView& node)
    : ctx_(std::move(ctx)),
      dt_(memory::data_type::undef),
      out_dims_(dims_of(node.output(0))),
      axis_(normalize_axis(node.get_int("axis", 0), node.output(0).rank)),
      elem_(ps::dtype_size(node.output(0).dtype)),
      out_bytes_(ps::byte_size(node.output(0))) {
  try {
    dt_ = to_dnnl(node.output(0).dtype);
  } catch (const NoPrimitive&) {  // i64, bool: plain chunks only
  }
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    in_dims_.push_back(dims_of(node.input(i)));
    in_bytes_.push_back(ps::byte_size(node.input(i)));
  }
}

memory::desc ConcatKernel::common_blocked_layout(std::span<const void* const> inputs) {
  if (dt_ == memory::data_type::undef || axis_ != 1 || out_dims_.size() != 4) return {};
  LayoutStore& layouts = ctx_->layouts();
  memory::format_tag tag = memory::format_tag::undef;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const dnnl::memory cur = layouts.current(inputs[i], in_bytes_[i]);
    if (!cur) return {};
    srcs_.push_back(static_cast<const std::byte*>(cur.get_data_handle()));
    const memory::desc md = cur.get_desc();
    memory::format_tag t = memory::format_tag::undef;
    int64_t block = 0;
    for (auto [cand, b] :
         {std::pair{memory::format_tag::aBcd8b, 8}, std::pair{memory::format_tag::aBcd16b, 16}})
      if (md == memory::desc(in_dims_[i], dt_, cand)) t = cand, block = b;
    if (t == memory::format_tag::undef || in_dims_[i][1] % block != 0) return {};
    if (tag != memory::format_tag::undef && t != tag) return {};
    tag = t;
  }
  return memory::desc(out_dims_, dt_, tag);
}

void ConcatKernel::copy_chunks(std::span<const std::byte* const> srcs, std::byte* dst,
                               int64_t outer) const {
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < srcs.size(); ++i) {
      const size_t chunk = in_bytes_[i] / static_cast<size_t>(outer);
      std::memcpy(dst, srcs[i] + static_cast<size_t>(o) * chunk, chunk);
      dst += chunk;
    }
  }
}

void ConcatKernel::run_tracked(std::span<const void* const> inputs, std::span<void* const> outputs,
                               std::span<const bool> staged_output) {
  LayoutStore& layouts = ctx_->layouts();
  srcs_.clear();
  if (out_bytes_ == 0) return;
  if (layouts.enabled() && !staged_output[0]) {
    if (const memory::desc blocked = common_blocked_layout(inputs); blocked != memory::desc()) {
      const dnnl::memory out =
          layouts.produce(outputs[0], out_bytes_, dense_md(out_dims_, dt_), blocked);
      copy_chunks(srcs_, static_cast<std::byte*>(out.get_data_handle()), out_dims_[0]);
      return;
    }
  }
  srcs_.clear();  // common_blocked_layout() may have filled part of it
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (layouts.enabled()) layouts.before_read(inputs[i], in_bytes_[i]);
    srcs_.push_back(static_cast<const std::byte*>(inputs[i]));
  }
  if (layouts.enabled() && !staged_output[0]) layouts.before_write(outputs[0], out_bytes_);
  copy_chunks(srcs_, static_cast<std::byte*>(outputs[0]),
              product(out_dims_, 0, static_cast<size_t>(axis_)));
}

}  // namespace ampx::onednn
