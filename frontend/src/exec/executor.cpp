#include <ampx/exec/executor.hpp>
#include <ampx/exec/memory_planner.hpp>
#include <ampx/exec/node_desc.hpp>

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace ampx {

namespace {
ampx_buffer_view make_view(ampx_buffer* buffer, uint64_t offset) {
  ampx_buffer_view v{};
  v.struct_size = sizeof(ampx_buffer_view);
  v.buffer = buffer;
  v.offset = offset;
  return v;
}
}  // namespace

Executor::Executor(const Graph& graph, const plugins::Device& device)
    : graph_(graph), device_(device) {
  const size_t nv = graph.num_values();
  static_buffers_.resize(nv);
  arena_offset_.assign(nv, 0);
  const auto order = graph.topological_order();

  // Constants: uploaded once.
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    const Value& val = graph.value(v);
    if (!val.is_constant()) continue;
    plugins::Buffer buf = device.allocate(val.byte_size());
    device.copy_to_device(buf, 0, *val.constant);
    stats_.constant_bytes += val.byte_size();
    static_buffers_[static_cast<size_t>(v)] = std::move(buf);
  }

  // Nodes fed only by static values are evaluated now, once (e.g. weight
  // Casts); the rest become steps.
  std::vector<NodeId> dynamic_nodes;
  for (NodeId id : order) {
    const Node& n = graph.node(id);
    bool all_static = !n.inputs.empty();
    for (ValueId v : n.inputs) all_static = all_static && static_buffers_[static_cast<size_t>(v)];
    if (!all_static) {
      dynamic_nodes.push_back(id);
      continue;
    }
    const LoweredNode lowered(graph, id);
    plugins::Kernel kernel = device.prepare(lowered.desc());
    std::vector<ampx_buffer_view> ins, outs;
    for (ValueId v : n.inputs)
      ins.push_back(make_view(static_buffers_[static_cast<size_t>(v)]->handle(), 0));
    for (ValueId v : n.outputs) {
      plugins::Buffer buf = device.allocate(graph.value(v).byte_size());
      outs.push_back(make_view(buf.handle(), 0));
      stats_.constant_bytes += graph.value(v).byte_size();
      static_buffers_[static_cast<size_t>(v)] = std::move(buf);
    }
    kernel.launch(ins, outs);
    ++stats_.folded_nodes;
  }
  device.synchronize();

  // Lifetimes of graph inputs and intermediates, in step indices.
  std::vector<int> first(nv, -1), last(nv, -1);
  for (ValueId v : graph.inputs()) first[static_cast<size_t>(v)] = last[static_cast<size_t>(v)] = 0;
  for (size_t s = 0; s < dynamic_nodes.size(); ++s) {
    const Node& n = graph.node(dynamic_nodes[s]);
    for (ValueId v : n.inputs) last[static_cast<size_t>(v)] = static_cast<int>(s);
    for (ValueId v : n.outputs)
      first[static_cast<size_t>(v)] = last[static_cast<size_t>(v)] = static_cast<int>(s);
  }
  const int end = static_cast<int>(dynamic_nodes.size());
  for (ValueId v : graph.outputs()) last[static_cast<size_t>(v)] = end;  // read after the run
  std::vector<BufferRequest> requests;
  std::vector<ValueId> request_value;
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    if (static_buffers_[static_cast<size_t>(v)] || first[static_cast<size_t>(v)] < 0) continue;
    requests.push_back(
        {graph.value(v).byte_size(), first[static_cast<size_t>(v)], last[static_cast<size_t>(v)]});
    request_value.push_back(v);
  }
  const MemoryPlan mem = plan_memory(requests);
  for (size_t i = 0; i < requests.size(); ++i)
    arena_offset_[static_cast<size_t>(request_value[i])] = mem.offsets[i];
  stats_.arena_bytes = mem.peak_bytes;
  stats_.no_reuse_bytes = mem.no_reuse_bytes;
  arena_ = device.allocate(std::max<uint64_t>(mem.peak_bytes, 1));

  steps_.reserve(dynamic_nodes.size());
  for (NodeId id : dynamic_nodes) {
    const Node& n = graph.node(id);
    const LoweredNode lowered(graph, id);
    Step step{device.prepare(lowered.desc()), {}, {}};
    for (ValueId v : n.inputs) step.inputs.push_back(view(v));
    for (ValueId v : n.outputs) step.outputs.push_back(view(v));
    steps_.push_back(std::move(step));
  }
  stats_.kernels = static_cast<int>(steps_.size());
  spdlog::debug("executor on {}: {} kernels, {} folded at load, arena {} B (no reuse {} B)",
                device.id(), stats_.kernels, stats_.folded_nodes, stats_.arena_bytes,
                stats_.no_reuse_bytes);
}

ampx_buffer_view Executor::view(ValueId v) const {
  if (const auto& b = static_buffers_[static_cast<size_t>(v)]) return make_view(b->handle(), 0);
  return make_view(arena_->handle(), arena_offset_[static_cast<size_t>(v)]);
}

std::vector<HostTensor> Executor::run(std::span<const HostTensor> inputs) {
  const auto graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size())
    throw std::invalid_argument("graph '" + graph_.name + "' takes " +
                                std::to_string(graph_inputs.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& val = graph_.value(graph_inputs[i]);
    if (inputs[i].type != val.type || inputs[i].data.size() != val.byte_size())
      throw std::invalid_argument(
          "input '" + val.name + "': expected " + std::string(dtype_name(val.type.dtype)) +
          shape_str(val.type.shape) + ", got " + std::string(dtype_name(inputs[i].type.dtype)) +
          shape_str(inputs[i].type.shape));
    device_.copy_to_device(*arena_, arena_offset_[static_cast<size_t>(graph_inputs[i])],
                           inputs[i].data);
  }
  for (Step& s : steps_) s.kernel.launch(s.inputs, s.outputs);
  device_.synchronize();
  std::vector<HostTensor> outputs;
  for (ValueId v : graph_.outputs()) {
    const Value& val = graph_.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    const auto& sb = static_buffers_[static_cast<size_t>(v)];
    if (sb)
      device_.copy_to_host(t.data, *sb, 0);
    else
      device_.copy_to_host(t.data, *arena_, arena_offset_[static_cast<size_t>(v)]);
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace ampx
