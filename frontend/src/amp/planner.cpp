#include <ampx/amp/planner.hpp>
#include <ampx/amp/precision_cut.hpp>
#include <ampx/exec/node_desc.hpp>

#include <array>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ampx {

std::string_view intent_reason_name(IntentReason r) {
  switch (r) {
    case IntentReason::kLevelO0:
      return "level-O0";
    case IntentReason::kWhiteList:
      return "white-list";
    case IntentReason::kNotWhiteListed:
      return "not-white-listed";
    case IntentReason::kBlackList:
      return "black-list";
    case IntentReason::kLevelDefault:
      return "policy";
    case IntentReason::kOverride:
      return "override";
    case IntentReason::kFollowsInput:
      return "follows-input";
    case IntentReason::kPromote:
      return "promote";
    case IntentReason::kNotFloat:
      return "not-float";
    case IntentReason::kExplicitCast:
      return "explicit-cast";
  }
  return "?";
}

std::string_view effective_reason_name(EffectiveReason r) {
  switch (r) {
    case EffectiveReason::kAsIntended:
      return "as-intended";
    case EffectiveReason::kNoNativeKernel:
      return "no-native-kernel";
    case EffectiveReason::kUnsupported16:
      return "unsupported-16bit";
    case EffectiveReason::kForcedEmulated:
      return "forced-emulated";
    case EffectiveReason::kCost:
      return "cost";
  }
  return "?";
}

std::string NodePlan::reason() const {
  if (effective_reason != EffectiveReason::kAsIntended)
    return std::string(effective_reason_name(effective_reason));
  return std::string(intent_reason_name(intent_reason));
}

namespace {

using OpSet = std::array<bool, kOpTypeCount>;

OpSet to_set(const std::vector<OpType>& ops) {
  OpSet s{};
  for (OpType op : ops) s[static_cast<size_t>(op)] = true;
  return s;
}

// Builds the rewritten graph: values keep a "home" version (the dtype their
// producer emits) and at most one Cast per (value, target dtype), always
// taken from the home version, so Cast->Cast chains cannot arise.
class Rewriter {
 public:
  // Without `build_graph` only the decisions are kept (home dtypes and the
  // Cast records); plan.graph stays empty.
  Rewriter(const Graph& src, AmpPlan& plan, bool build_graph)
      : src_(src),
        plan_(plan),
        build_(build_graph),
        home_(src.num_values(), kNone),
        home_dtype_(src.num_values(), DType::kInvalid) {
    for (ValueId v = 0; v < static_cast<ValueId>(src.num_values()); ++v)
      home_dtype_[static_cast<size_t>(v)] = src.value(v).type.dtype;
    if (!build_) return;
    Graph& pg = plan_.graph;
    pg.name = src.name;
    // Room for a Cast on about a quarter of the values without regrowing.
    pg.reserve(src.num_nodes() + src.num_values() / 4, src.num_values() * 5 / 4);
    for (ValueId v : src.inputs())
      home_[static_cast<size_t>(v)] = pg.add_input(src.value(v).name, src.value(v).type);
    for (ValueId v = 0; v < static_cast<ValueId>(src.num_values()); ++v) {
      const Value& val = src.value(v);
      if (val.is_constant())
        home_[static_cast<size_t>(v)] = pg.add_constant(val.name, val.type, val.constant);
    }
  }

  DType home_dtype(ValueId v) const { return home_dtype_[static_cast<size_t>(v)]; }
  ValueId home(ValueId v) const { return home_[static_cast<size_t>(v)]; }

  // `v` (a source value) in dtype `d`, inserting a Cast at most once.
  ValueId as(ValueId v, DType d) {
    const ValueId h = home(v);
    const DType from = home_dtype(v);
    if (from == d) return h;
    const uint64_t key = (static_cast<uint64_t>(v) << 8) | static_cast<uint64_t>(d);
    if (auto it = cast_cache_.find(key); it != cast_cache_.end()) return it->second;
    const Value& sv = src_.value(v);
    std::string name = fresh(sv.name + ".to_" + std::string(dtype_name(d)));
    ValueId out = kNone;
    if (build_) {
      const NodeId id = plan_.graph.add_node(name, OpType::kCast, {h}, {{d, sv.type.shape}},
                                             {{"to", static_cast<int64_t>(d)}});
      out = plan_.graph.node(id).outputs[0];
    }
    plan_.casts.push_back(CastRecord{std::move(name), sv.name, from, d, sv.is_constant()});
    cast_cache_.emplace(key, out);
    return out;
  }

  // Adds source node `n` reading `inputs`. Its float outputs take `compute`
  // (the dtype rule of docs/OPS.md); other outputs keep their dtype. No
  // re-inference: the node is the source node with dtypes changed, and the
  // tests verify planned graphs.
  void add(const Node& n, std::vector<ValueId> inputs, DType compute, bool float_node) {
    for (ValueId v : n.outputs) {
      const DType t = src_.value(v).type.dtype;
      home_dtype_[static_cast<size_t>(v)] = float_node && is_float(t) ? compute : t;
    }
    if (!build_) return;
    Graph& pg = plan_.graph;
    std::vector<TensorType> out_types;
    out_types.reserve(n.outputs.size());
    for (ValueId v : n.outputs) {
      TensorType t = src_.value(v).type;
      if (float_node && is_float(t.dtype)) t.dtype = compute;
      out_types.push_back(std::move(t));
    }
    const NodeId id = pg.add_node(n.name, n.op, std::move(inputs), std::move(out_types), n.attrs);
    pg.node(id).origin = n.origin;
    const auto& outs = pg.node(id).outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      pg.value(outs[i]).name = src_.value(n.outputs[i]).name;
      home_[static_cast<size_t>(n.outputs[i])] = outs[i];
    }
  }

 private:
  // A name no source node or value has. Generated names all contain ".to_",
  // so only source names containing it can collide: the index holds just
  // those (usually none), built on the first Cast.
  std::string fresh(const std::string& base) {
    if (!names_built_) {
      auto note = [&](const std::string& name) {
        if (name.find(".to_") != std::string::npos) taken_.insert(name);
      };
      for (const Value& v : src_.values()) note(v.name);
      for (const Node& n : src_.nodes()) note(n.name);
      names_built_ = true;
    }
    std::string name = base;
    for (int i = 1; taken_.contains(name); ++i) name = base + "_" + std::to_string(i);
    taken_.insert(owned_names_.emplace_back(name));
    return name;
  }

  const Graph& src_;
  AmpPlan& plan_;
  bool build_;
  std::vector<ValueId> home_;  // in plan_.graph; kNone without build_
  std::vector<DType> home_dtype_;
  std::unordered_map<uint64_t, ValueId> cast_cache_;
  bool names_built_ = false;
  std::unordered_set<std::string_view> taken_;  // views into src_ and owned_names_
  std::deque<std::string> owned_names_;         // deque: stable addresses
};

// Capability answers memoised by node signature (op, dtypes, shapes,
// attributes; never the name): a plugin answers for a node instance, so two
// nodes with one signature get one answer, and large graphs of repeated
// blocks cost one plugin call per distinct signature.
class MemoizedQuery {
 public:
  explicit MemoizedQuery(CapabilitySource& source) : source_(source) {}

  CapabilitySource::Answer operator()(const ampx_node_desc& d) {
    key_.clear();
    append(d.op_type, std::strlen(d.op_type) + 1);
    auto tensors = [&](const ampx_tensor_desc* t, size_t n) {
      append(&n, sizeof n);
      for (size_t i = 0; i < n; ++i) {
        append(&t[i].dtype, sizeof t[i].dtype);
        append(&t[i].rank, sizeof t[i].rank);
        append(t[i].dims, sizeof(int64_t) * static_cast<size_t>(t[i].rank));
      }
    };
    tensors(d.inputs, d.num_inputs);
    tensors(d.outputs, d.num_outputs);
    for (size_t i = 0; i < d.num_attrs; ++i) {
      const ampx_attr& a = d.attrs[i];
      append(a.name, std::strlen(a.name) + 1);
      append(&a.kind, sizeof a.kind);
      append(&a.i, sizeof a.i);
      append(&a.f, sizeof a.f);
      append(&a.count, sizeof a.count);
      if (a.kind == AMPX_ATTR_INTS) append(a.ints, sizeof(int64_t) * a.count);
      if (a.kind == AMPX_ATTR_FLOATS) append(a.floats, sizeof(double) * a.count);
      if (a.kind == AMPX_ATTR_STRING) append(a.s, std::strlen(a.s) + 1);
    }
    if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
    auto answer = source_.query(d);
    cache_.emplace(key_, answer);
    return answer;
  }

 private:
  void append(const void* p, size_t n) { key_.append(static_cast<const char*>(p), n); }

  CapabilitySource& source_;
  std::string key_;  // reused: a hit allocates nothing
  std::unordered_map<std::string, CapabilitySource::Answer> cache_;
};

bool touches_float(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (is_float(g.value(v).type.dtype)) return true;
  for (ValueId v : n.outputs)
    if (is_float(g.value(v).type.dtype)) return true;
  return false;
}

// The node's source dtypes with every float dtype replaced by `d`.
void dtypes_as(const Graph& g, const Node& n, DType d, std::vector<DType>& ins,
               std::vector<DType>& outs) {
  ins.clear();
  outs.clear();
  auto conv = [&](DType t) { return is_float(t) ? d : t; };
  for (ValueId v : n.inputs) ins.push_back(conv(g.value(v).type.dtype));
  for (ValueId v : n.outputs) outs.push_back(conv(g.value(v).type.dtype));
}

// The policy and capability pass. `demoted` (by source NodeId, may be
// null): nodes the cost step keeps in f32 although they are native.
AmpPlan plan_decisions(const Graph& g, const AmpPolicy& policy, CapabilitySource& device,
                       const PlanOptions& options, const std::vector<bool>* demoted) {
  if (!is_16bit_float(policy.half))
    throw std::invalid_argument("16-bit dtype must be f16 or bf16, got " +
                                std::string(dtype_name(policy.half)));
  AmpPlan plan;
  plan.device_id = device.device_id();
  plan.policy = policy;
  const bool custom_white = policy.white_list.has_value();
  const bool custom_black = policy.black_list.has_value();
  const OpSet white = to_set(custom_white ? *policy.white_list : default_white_list());
  const OpSet black = to_set(custom_black ? *policy.black_list : default_black_list());
  std::vector<bool> override_used(policy.overrides.size(), false);

  Rewriter rw(g, plan, options.build_graph);
  std::unordered_map<std::string, int32_t> note_ids;
  auto intern_note = [&](const std::string& note) {
    auto [it, added] = note_ids.try_emplace(note, static_cast<int32_t>(plan.notes.size()));
    if (added) plan.notes.push_back(note);
    return it->second;
  };
  MemoizedQuery query(device);
  LoweredNode lowered;
  const auto order = g.topological_order();
  plan.nodes.reserve(order.size());
  std::vector<DType> ins, outs;

  for (NodeId id : order) {
    const Node& n = g.node(id);
    NodePlan np;
    np.node = id;
    np.name = n.name;
    np.op = n.op;
    np.origin = n.origin;
    const size_t op_index = static_cast<size_t>(n.op);
    np.is_float_node = n.op != OpType::kCast && touches_float(g, n);

    if (!np.is_float_node) {
      np.intent_reason =
          n.op == OpType::kCast ? IntentReason::kExplicitCast : IntentReason::kNotFloat;
      np.intended = np.effective = g.value(n.outputs.at(0)).type.dtype;
    } else {
      // 1. Policy.
      bool want16 = false;
      switch (policy.level) {
        case AmpLevel::kO0:
          np.intent_reason = IntentReason::kLevelO0;
          break;
        case AmpLevel::kO1:
          want16 = white[op_index];
          np.intent_reason = want16 ? IntentReason::kWhiteList : IntentReason::kNotWhiteListed;
          break;
        case AmpLevel::kO2:
          want16 = !black[op_index];
          np.intent_reason = want16 ? IntentReason::kLevelDefault : IntentReason::kBlackList;
          break;
        case AmpLevel::kO3:
          want16 = true;
          np.intent_reason = IntentReason::kLevelDefault;
          break;
        case AmpLevel::kAuto: {
          AutoClass cls = op_schema(n.op).auto_class;
          // A custom list replaces the default one: ops it no longer names
          // fall back to following their inputs.
          if (custom_white && cls == AutoClass::kWhite) cls = AutoClass::kFollow;
          if (custom_black && cls == AutoClass::kBlack) cls = AutoClass::kFollow;
          if (custom_white && white[op_index]) cls = AutoClass::kWhite;
          if (custom_black && black[op_index]) cls = AutoClass::kBlack;
          if (cls == AutoClass::kWhite) {
            want16 = true;
            np.intent_reason = IntentReason::kWhiteList;
          } else if (cls == AutoClass::kBlack) {
            np.intent_reason = IntentReason::kBlackList;
          } else {
            // Activations decide; constants (weights) adapt to them.
            int n16 = 0, nfloat = 0;
            bool first_is_16 = false;
            for (ValueId v : n.inputs) {
              const Value& val = g.value(v);
              if (val.is_constant() || !is_float(val.type.dtype)) continue;
              const bool is16 = is_16bit_float(rw.home_dtype(v));
              if (nfloat == 0) first_is_16 = is16;
              ++nfloat;
              n16 += is16 ? 1 : 0;
            }
            if (cls == AutoClass::kPromote) {
              want16 = nfloat > 0 && n16 == nfloat;
              np.intent_reason = IntentReason::kPromote;
            } else {
              want16 = first_is_16;
              np.intent_reason = IntentReason::kFollowsInput;
            }
          }
          break;
        }
      }
      for (size_t i = policy.overrides.size(); i-- > 0;) {
        if (policy.overrides[i].matches(n.name)) {
          override_used[i] = true;
          want16 = policy.overrides[i].force_16bit;
          np.intent_reason = IntentReason::kOverride;
          break;
        }
      }
      // Mark every matching override used, not only the winner.
      for (size_t i = 0; i < policy.overrides.size(); ++i)
        if (policy.overrides[i].matches(n.name)) override_used[i] = true;
      np.intended = want16 ? policy.half : DType::kF32;
      np.effective = DType::kF32;

      // 2. What the device really has for exactly this node in 16-bit.
      if (want16) {
        dtypes_as(g, n, policy.half, ins, outs);
        lowered.assign(g, n, ins, outs, false);
        const auto answer = query(lowered.desc());
        np.support_16bit = answer.support;
        if (!answer.note.empty()) np.note = intern_note(answer.note);
        if (answer.support == AMPX_SUPPORT_NATIVE && demoted &&
            (*demoted)[static_cast<size_t>(id)]) {
          np.effective_reason = EffectiveReason::kCost;
        } else if (answer.support == AMPX_SUPPORT_NATIVE) {
          np.effective = policy.half;
          np.effective_reason = EffectiveReason::kAsIntended;
        } else if (answer.support == AMPX_SUPPORT_EMULATED && options.capability_blind) {
          np.effective = policy.half;
          np.effective_reason = EffectiveReason::kForcedEmulated;
        } else {
          np.effective_reason = answer.support == AMPX_SUPPORT_EMULATED
                                    ? EffectiveReason::kNoNativeKernel
                                    : EffectiveReason::kUnsupported16;
        }
      }
    }

    // 3. The host never assumes support: the variant that will run must be
    // answered too (16-bit native was just answered).
    if (!(np.is_float_node && is_16bit_float(np.effective))) {
      if (np.is_float_node) {
        dtypes_as(g, n, np.effective, ins, outs);
      } else {
        ins.clear();
        outs.clear();
        for (ValueId v : n.inputs) ins.push_back(rw.home_dtype(v));
        for (ValueId v : n.outputs) outs.push_back(g.value(v).type.dtype);
      }
      lowered.assign(g, n, ins, outs, false);
      const auto answer = query(lowered.desc());
      if (answer.support == AMPX_SUPPORT_UNSUPPORTED)
        throw std::runtime_error("node '" + n.name + "' (" + std::string(op_name(n.op)) +
                                 "): device " + plan.device_id + " cannot run it in " +
                                 std::string(dtype_name(np.effective)) +
                                 (answer.note.empty() ? "" : ": " + answer.note));
    }

    // 4. Rewrite with Casts where an input's home dtype differs.
    std::vector<ValueId> new_inputs;
    if (options.build_graph) new_inputs.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
      if (np.is_float_node && is_float(g.value(v).type.dtype))
        new_inputs.push_back(rw.as(v, np.effective));
      else
        new_inputs.push_back(rw.home(v));
    }
    rw.add(n, std::move(new_inputs), np.effective, np.is_float_node);
    plan.nodes.push_back(std::move(np));
  }

  for (size_t i = 0; i < policy.overrides.size(); ++i)
    if (!override_used[i])
      throw std::invalid_argument("override '" + policy.overrides[i].pattern +
                                  "' matches no node in graph '" + g.name + "'");

  // Graph outputs keep their dtypes.
  for (ValueId v : g.outputs()) {
    const ValueId out = rw.as(v, g.value(v).type.dtype);
    if (options.build_graph) plan.graph.add_output(out);
  }

  PlanSummary& s = plan.summary;
  s.nodes = static_cast<int>(plan.nodes.size());
  for (const auto& np : plan.nodes) {
    s.float_nodes += np.is_float_node ? 1 : 0;
    const bool i16 = np.is_float_node && is_16bit_float(np.intended);
    const bool e16 = np.is_float_node && is_16bit_float(np.effective);
    s.intended_16bit += i16 ? 1 : 0;
    s.effective_16bit += e16 ? 1 : 0;
    const bool by_cost = np.effective_reason == EffectiveReason::kCost;
    s.kept_fp32_no_native += (i16 && !e16 && !by_cost) ? 1 : 0;
    s.kept_fp32_cost += by_cost ? 1 : 0;
  }
  s.casts = static_cast<int>(plan.casts.size());
  for (const auto& c : plan.casts) s.casts_on_constants += c.on_constant ? 1 : 0;
  return plan;
}

// The node with every float tensor in dtype `d` (other tensors as in the
// source graph), lowered for a cost query.
double node_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g, const Node& n,
                 DType d) {
  std::vector<DType> ins, outs;
  dtypes_as(g, n, d, ins, outs);
  lowered.assign(g, n, ins, outs, false);
  return cost.node_us(lowered.desc());
}

double cast_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g, ValueId v,
                 DType from, DType to) {
  const Node cast{"cast", OpType::kCast, {v}, {v}, {{"to", static_cast<int64_t>(to)}}, {}};
  const DType in[] = {from}, out[] = {to};
  lowered.assign(g, cast, in, out, false);
  return cost.node_us(lowered.desc());
}

// Nodes whose inputs are all weights (or computed from weights only): the
// executor evaluates them once at load.
std::vector<bool> load_time_nodes(const Graph& g) {
  std::vector<bool> constant(g.num_values(), false), at_load(g.num_nodes(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    constant[static_cast<size_t>(v)] = g.value(v).is_constant();
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    bool all = !n.inputs.empty();
    for (ValueId v : n.inputs) all = all && constant[static_cast<size_t>(v)];
    at_load[static_cast<size_t>(id)] = all;
    for (ValueId v : n.outputs) constant[static_cast<size_t>(v)] = all;
  }
  return at_load;
}

// Which native 16-bit nodes to keep 16-bit, for the whole graph at once
// (precision_cut.hpp). `first` is the plan without cost decisions.
std::vector<bool> choose_by_cost(const Graph& g, const AmpPlan& first, DType half,
                                 capability::CostModel& cost) {
  using P = PrecisionCutProblem;
  std::vector<int> cand(g.num_nodes(), P::kFixedF32);  // label per source node
  std::vector<NodeId> cand_node;
  PrecisionCutProblem problem;
  LoweredNode lowered;
  const std::vector<bool> at_load = load_time_nodes(g);
  std::vector<bool> float_node(g.num_nodes(), false);
  for (const NodePlan& np : first.nodes) {
    float_node[static_cast<size_t>(np.node)] = np.is_float_node;
    if (!np.is_float_node) continue;
    if (!is_16bit_float(np.effective)) continue;
    const Node& n = g.node(np.node);
    double t32 = node_time(cost, lowered, g, n, DType::kF32);
    double t16 = node_time(cost, lowered, g, n, half);
    if (t32 < 0 || t16 < 0) t32 = t16 = 0;  // unknown: a tie, which keeps 16-bit
    cand[static_cast<size_t>(np.node)] = static_cast<int>(cand_node.size());
    cand_node.push_back(np.node);
    problem.time_f32.push_back(t32);
    problem.time_16.push_back(t16);
  }
  if (cand_node.empty()) return std::vector<bool>(g.num_nodes(), false);

  auto label_of_dtype = [](DType d) { return is_16bit_float(d) ? P::kFixed16 : P::kFixedF32; };
  std::vector<std::vector<int>> consumers(g.num_values());
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    if (!float_node[static_cast<size_t>(id)]) continue;  // explicit Casts read any dtype
    for (ValueId v : g.node(id).inputs) consumers[static_cast<size_t>(v)].push_back(id);
  }
  std::vector<std::vector<int>> output_uses(g.num_values());
  for (ValueId v : g.outputs())
    output_uses[static_cast<size_t>(v)].push_back(label_of_dtype(g.value(v).type.dtype));
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& val = g.value(v);
    if (!is_float(val.type.dtype) || val.is_constant()) continue;
    if (val.producer != kNone && at_load[static_cast<size_t>(val.producer)]) continue;
    P::ValueTerm term;
    if (val.producer == kNone) {
      term.producer = label_of_dtype(val.type.dtype);
    } else {
      const int c = cand[static_cast<size_t>(val.producer)];
      term.producer = c >= 0 ? c : label_of_dtype(val.type.dtype);
      // A non-candidate float node produces f32 in a cost-aware plan.
      if (c < 0 && float_node[static_cast<size_t>(val.producer)]) term.producer = P::kFixedF32;
    }
    bool touches_candidate = term.producer >= 0;
    for (NodeId c : consumers[static_cast<size_t>(v)]) {
      const int label = cand[static_cast<size_t>(c)];
      term.consumers.push_back(label >= 0 ? label : P::kFixedF32);
      touches_candidate = touches_candidate || label >= 0;
    }
    for (int u : output_uses[static_cast<size_t>(v)]) term.consumers.push_back(u);
    if (!touches_candidate) continue;
    term.cast_to_16 = std::max(0.0, cast_time(cost, lowered, g, v, DType::kF32, half));
    term.cast_to_f32 = std::max(0.0, cast_time(cost, lowered, g, v, half, DType::kF32));
    problem.values.push_back(std::move(term));
  }
  const PrecisionCutResult r = solve_precision_cut(problem);
  std::vector<bool> demoted(g.num_nodes(), false);
  for (size_t i = 0; i < cand_node.size(); ++i)
    demoted[static_cast<size_t>(cand_node[i])] = !r.use_16bit[i];
  return demoted;
}

}  // namespace

void predict_plan(AmpPlan& plan, capability::CostModel& cost) {
  LoweredNode lowered;
  const Graph& pg = plan.graph;
  const std::vector<bool> at_load = load_time_nodes(pg);
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < plan.nodes.size(); ++i) by_name.emplace(plan.nodes[i].name, i);
  double total = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(pg.num_nodes()); ++id) {
    if (at_load[static_cast<size_t>(id)]) continue;
    const Node& n = pg.node(id);
    std::vector<DType> ins, outs;
    for (ValueId v : n.inputs) ins.push_back(pg.value(v).type.dtype);
    for (ValueId v : n.outputs) outs.push_back(pg.value(v).type.dtype);
    lowered.assign(pg, n, ins, outs, false);
    const double t = cost.node_us(lowered.desc());
    if (t > 0) total += t;
    if (auto it = by_name.find(n.name); it != by_name.end())
      plan.nodes[it->second].predicted_us = t;
  }
  plan.predicted_us = total;
  plan.cost_source = cost.source();
}

AmpPlan plan_amp(const Graph& g, const AmpPolicy& policy, CapabilitySource& device,
                 const PlanOptions& options) {
  if (!options.cost) return plan_decisions(g, policy, device, options, nullptr);
  PlanOptions inner = options;
  inner.build_graph = true;  // predictions are made on the planned graph
  std::vector<bool> demoted;
  if (!options.capability_blind) {
    const AmpPlan first =
        plan_decisions(g, policy, device, PlanOptions{.build_graph = false}, nullptr);
    demoted = choose_by_cost(g, first, policy.half, *options.cost);
  }
  AmpPlan plan = plan_decisions(g, policy, device, inner, demoted.empty() ? nullptr : &demoted);
  predict_plan(plan, *options.cost);
  // The times the cost step compared, for explanations.
  if (!demoted.empty()) {
    LoweredNode lowered;
    for (NodePlan& np : plan.nodes) {
      if (!np.is_float_node || np.support_16bit != AMPX_SUPPORT_NATIVE) continue;
      if (!is_16bit_float(np.intended)) continue;
      const Node& n = g.node(np.node);
      np.time_f32_us = node_time(*options.cost, lowered, g, n, DType::kF32);
      np.time_16_us = node_time(*options.cost, lowered, g, n, policy.half);
    }
  }
  if (!options.build_graph) plan.graph = Graph{};
  return plan;
}

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             CapabilitySource& device) {
  HalfChoice c;
  AmpPolicy p = policy;
  p.half = DType::kF16;
  c.f16_effective =
      plan_amp(graph, p, device, PlanOptions{.build_graph = false}).summary.effective_16bit;
  p.half = DType::kBF16;
  c.bf16_effective =
      plan_amp(graph, p, device, PlanOptions{.build_graph = false}).summary.effective_16bit;
  c.any_native = c.f16_effective > 0 || c.bf16_effective > 0;
  c.half = c.bf16_effective > c.f16_effective ? DType::kBF16 : DType::kF16;
  return c;
}

}  // namespace ampx
