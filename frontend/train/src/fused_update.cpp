#include <ampx/amp/node_desc.hpp>
#include <ampx/half.hpp>
#include <ampx/ir/attr_access.hpp>
#include <ampx/opset/multi_update.hpp>
#include <ampx/train/fused_update.hpp>

#include <cstring>
#include <map>

namespace ampx::train {

namespace {

LoweredUpdates not_fused(std::string why) {
  LoweredUpdates r;
  r.reason = std::move(why);
  return r;
}

// The update attributes the fused node carries over (the per-tensor ones;
// every update of a step has the same).
bool same_attrs(const Node& a, const Node& b) {
  return a.op == b.op && a.attrs == b.attrs;
}

}  // namespace

LoweredUpdates fuse_updates(const Graph& g, std::span<CapabilitySource* const> devices) {
  // The guard and the updates, in node order (the weights' order).
  NodeId guard = kNone;
  std::vector<NodeId> updates;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& n = g.node(id);
    if (n.op == OpType::kUpdateGuard) {
      if (guard != kNone) return not_fused("two UpdateGuard nodes");
      guard = id;
    } else if (n.op == OpType::kSgdUpdate || n.op == OpType::kAdamUpdate) {
      updates.push_back(id);
    }
  }
  if (guard == kNone || updates.empty()) return not_fused("no guarded updates");
  const Node& gn = g.node(guard);
  const Node& first = g.node(updates[0]);
  const bool adam = first.op == OpType::kAdamUpdate;
  const size_t hyper_slot = adam ? 4 : 2;
  const ValueId hyper_out = gn.outputs[0];
  if (gn.inputs.size() != updates.size() + 1) return not_fused("the guard reads other tensors");
  for (size_t k = 0; k < updates.size(); ++k) {
    const Node& u = g.node(updates[k]);
    if (!same_attrs(u, first)) return not_fused("the updates' attributes differ");
    if (u.device != gn.device) return not_fused("the updates run on several devices");
    if (u.inputs[hyper_slot] != hyper_out) return not_fused("an update reads another hyper");
    // The guard's gradient order is the fused node's: its sum's order.
    if (u.inputs[1] != gn.inputs[k + 1])
      return not_fused("the guard's gradients are in another order");
  }
  const size_t n = updates.size();
  const bool momentum = !adam && first.inputs.size() == 4;
  const size_t states = adam ? 2 : momentum ? 1 : 0;

  // Every Cast of an updated weight (a state input) to a 16-bit type on the
  // updates' device: its output becomes a copy the fused node writes.
  std::map<ValueId, size_t> weight_index;  // weight input -> k
  for (size_t k = 0; k < n; ++k) {
    const ValueId w = g.node(updates[k]).inputs[0];
    if (g.value(w).producer != kNone || g.value(w).is_constant())
      return not_fused("a weight is not a state input");
    weight_index.emplace(w, k);
  }
  struct Copy {
    NodeId cast;
    size_t weight;
  };
  std::vector<Copy> copies;
  std::vector<bool> drop(g.num_nodes(), false);
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& c = g.node(id);
    if (c.op != OpType::kCast || c.device != gn.device) continue;
    const auto it = weight_index.find(c.inputs[0]);
    const DType to = g.value(c.outputs[0]).type.dtype;
    if (it == weight_index.end() || (to != DType::kF16 && to != DType::kBF16)) continue;
    copies.push_back({id, it->second});
    drop[static_cast<size_t>(id)] = true;
  }

  LoweredUpdates r;
  Graph& out = r.graph;
  out.name = g.name;
  std::vector<ValueId> map(g.num_values(), kNone);
  for (ValueId v : g.inputs())
    map[static_cast<size_t>(v)] = out.add_input(g.value(v).name, g.value(v).type);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (g.value(v).is_constant())
      map[static_cast<size_t>(v)] =
          out.add_constant(g.value(v).name, g.value(v).type, g.value(v).constant);
  std::vector<ValueId> copy_in;
  for (const Copy& c : copies) {
    const Value& cv = g.value(g.node(c.cast).outputs[0]);
    copy_in.push_back(out.add_input(cv.name, cv.type));
    map[static_cast<size_t>(g.node(c.cast).outputs[0])] = copy_in.back();
  }

  // The fused node, operands as opset/multi_update.hpp lays them out.
  const opset::MultiUpdateLayout l{n, states, copies.size()};
  std::vector<ValueId> ins(l.num_inputs(), kNone);
  std::vector<TensorType> types(l.num_outputs());
  std::vector<ValueId> old_out(l.num_outputs(), kNone);  // the values they replace
  ins[0] = gn.inputs[0];
  types[0] = g.value(gn.outputs[0]).type;
  types[1] = g.value(gn.outputs[1]).type;
  old_out[0] = gn.outputs[0];
  old_out[1] = gn.outputs[1];
  for (size_t k = 0; k < n; ++k) {
    const Node& u = g.node(updates[k]);
    ins[l.w_in(k)] = u.inputs[0];
    ins[l.g_in(k)] = u.inputs[1];
    old_out[l.w_out(k)] = u.outputs[0];
    for (size_t s = 0; s < states; ++s) {
      // SgdUpdate: W, G, hyper, M; AdamUpdate: W, G, M, V, hyper.
      ins[l.state_in(s, k)] = u.inputs[adam ? 2 + s : 3];
      old_out[l.state_out(s, k)] = u.outputs[1 + s];
    }
  }
  std::vector<int64_t> copy_of;
  for (size_t j = 0; j < copies.size(); ++j)
    copy_of.push_back(static_cast<int64_t>(copies[j].weight));
  for (size_t o = 2; o < l.num_outputs(); ++o) {
    const size_t i = static_cast<size_t>(l.in_place_input(o));
    if (o < l.copy_out(0) || copies.empty()) types[o] = g.value(ins[i]).type;
  }
  for (size_t j = 0; j < copies.size(); ++j)
    types[l.copy_out(j)] = g.value(g.node(copies[j].cast).outputs[0]).type;
  AttrMap attrs = first.attrs;
  for (const char* a : {"clip_norm", "skip_nonfinite"})
    if (const auto it = gn.attrs.find(a); it != gn.attrs.end()) attrs[a] = it->second;
  attrs["copies"] = copy_of;
  const OpType op = adam ? OpType::kMultiAdamUpdate : OpType::kMultiSgdUpdate;

  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& nd = g.node(id);
    if (drop[static_cast<size_t>(id)] || nd.op == OpType::kSgdUpdate ||
        nd.op == OpType::kAdamUpdate)
      continue;
    if (id == guard) {
      std::vector<ValueId> mapped;
      for (size_t i = 0; i < ins.size(); ++i)
        mapped.push_back(i >= l.copy_in(0) && !copies.empty() ? copy_in[i - l.copy_in(0)]
                                                              : map[static_cast<size_t>(ins[i])]);
      const NodeId f = out.add_node("optimizer", op, std::move(mapped), types, attrs);
      out.node(f).device = gn.device;
      out.node(f).origin = std::string(op_name(gn.op)) + "+" + std::string(op_name(first.op)) +
                           " x" + std::to_string(n) +
                           (copies.empty() ? "" : "+Cast x" + std::to_string(copies.size()));
      const auto& fo = out.node(f).outputs;
      for (size_t o = 0; o < fo.size(); ++o) {
        if (old_out[o] != kNone) {
          map[static_cast<size_t>(old_out[o])] = fo[o];
          out.value(fo[o]).name = g.value(old_out[o]).name;
        } else {
          out.value(fo[o]).name =
              g.value(g.node(copies[o - l.copy_out(0)].cast).outputs[0]).name + "/next";
        }
      }
      // Ask the device.
      std::vector<DType> in_dt, out_dt;
      for (ValueId v : out.node(f).inputs) in_dt.push_back(out.value(v).type.dtype);
      for (ValueId v : out.node(f).outputs) out_dt.push_back(out.value(v).type.dtype);
      LoweredNode lowered;
      lowered.assign(out, out.node(f), in_dt, out_dt, false);
      CapabilitySource& caps = *devices[devices.size() == 1 ? 0 : static_cast<size_t>(gn.device)];
      const auto answer = caps.query(lowered.desc());
      if (answer.support == AMPX_SUPPORT_UNSUPPORTED)
        return not_fused(caps.device_id() + " does not run " + std::string(op_name(op)) +
                         (answer.note.empty() ? "" : ": " + answer.note));
      continue;
    }
    copy_node(out, g, nd, map);
  }
  for (ValueId v : g.outputs()) out.add_output(map[static_cast<size_t>(v)]);
  const NodeId fused = out.value(map[static_cast<size_t>(hyper_out)]).producer;
  for (size_t j = 0; j < copies.size(); ++j) {
    out.add_output(out.node(fused).outputs[l.copy_out(j)]);
    const ValueId w = ins[l.w_in(copies[j].weight)];
    size_t w_input = 0;
    while (g.inputs()[w_input] != w) ++w_input;
    r.copies.push_back({w_input,
                        out.value(copy_in[j]).type.dtype,
                        {g.inputs().size() + j, out.outputs().size() - 1}});
  }
  r.fused = true;
  r.casts_removed = static_cast<int>(copies.size());
  return r;
}

std::vector<std::byte> copy_bytes(DType dtype, std::span<const std::byte> weight) {
  const size_t count = weight.size() / sizeof(float);
  std::vector<std::byte> out(count * 2);
  for (size_t i = 0; i < count; ++i) {
    float f;
    std::memcpy(&f, weight.data() + i * 4, 4);
    const uint16_t h = dtype == DType::kBF16 ? float_to_bf16_bits(f) : float_to_f16_bits(f);
    std::memcpy(out.data() + i * 2, &h, 2);
  }
  return out;
}

}  // namespace ampx::train
