// ONNX's Loop and Scan, unrolled at import (docs/ONNX.md, "Control flow").
// ampx plans fixed shapes, and both ops' outputs have shapes that depend on
// the number of iterations, so that number must be known at import:
//   Loop: the trip count M folds to a constant, or the condition does at
//         every iteration (exporters' `for` loops: M from a shape, the
//         condition a constant true passed through the body);
//   Scan: the sequence length is a dimension of the scan inputs.
// Each iteration inlines the body (its nodes named like the body's, with
// _1, _2, ... suffixes), its inputs bound to the previous iteration's
// outputs; the scan outputs are stacked with Reshape and Concat. The
// unrolled nodes are planned, placed and run like any others, so the body
// gets the same AMP policy and capability questions as the main graph.
// A condition computed at run time (a `while` loop), a loop that would
// unroll into more than kMaxUnrolledIterations iterations, or a model whose
// loops would unroll into more than kMaxUnrolledNodes nodes in all (nested
// loops multiply), is a one-line error.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

constexpr int64_t kMaxUnrolledIterations = 4096;
// The nodes a model's Loops and Scans may unroll into, nested ones
// multiplied out. The executor's memory planner is quadratic in values: the
// largest nested pair this allows already takes seconds to plan and run
// (docs/benchmarks.md; docs/ONNX.md, "Control flow").
constexpr int64_t kMaxUnrolledNodes = 100'000;
// Node counts saturate here (nested trip counts multiply past int64).
constexpr int64_t kSaturated = int64_t{1} << 60;

int64_t capped_add(int64_t a, int64_t b) {
  return std::min(kSaturated, a + b);  // both <= kSaturated: no overflow
}
int64_t capped_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : std::min(kSaturated, a * b);
}
std::string count_text(int64_t n) {
  return n >= kSaturated ? fmt::format("more than {}", kSaturated) : fmt::format("{}", n);
}

// The bytes of one i64 or i32 element as an integer; nullopt for other
// dtypes or sizes.
std::optional<int64_t> int_scalar(DType dtype, std::span<const std::byte> bytes) {
  if (dtype == DType::kI64 && bytes.size() == 8) {
    int64_t v = 0;
    std::memcpy(&v, bytes.data(), 8);
    return v;
  }
  if (dtype == DType::kI32 && bytes.size() == 4) {
    int32_t v = 0;
    std::memcpy(&v, bytes.data(), 4);
    return v;
  }
  return std::nullopt;
}

// An integer scalar held by a TensorProto (an initializer or a Constant's
// value), read only when it has one element.
std::optional<int64_t> one_int(Importer& im, const onnx::TensorProto& t) {
  int64_t count = 1;
  for (int64_t d : t.dims()) count = d == 1 ? count : 0;
  if (count != 1) return std::nullopt;
  try {
    const TensorData d = read_tensor(t, im.base_dir(), im.where_tensor(t.name()), 64);
    return int_scalar(d.type.dtype, d.bytes);
  } catch (const std::exception&) {  // a malformed tensor fails when it is converted
  }
  return std::nullopt;
}

// A nested Loop's trip count where it is known before anything is
// converted: an initializer or a Constant node of an enclosing subgraph
// (innermost first), or a value of the graph around the Loop being checked.
std::optional<int64_t> static_trips(Importer& im, const std::string& name,
                                    std::span<const onnx::GraphProto* const> scopes) {
  if (name.empty()) return std::nullopt;
  for (auto g = scopes.rbegin(); g != scopes.rend(); ++g) {
    for (const auto& t : (*g)->initializer())
      if (t.name() == name) return one_int(im, t);
    for (const auto& n : (*g)->node()) {
      if (n.op_type() != "Constant" || n.output_size() < 1 || n.output(0) != name) continue;
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) return one_int(im, a.t());
      return std::nullopt;
    }
  }
  const ValueId v = im.value_named(name);
  if (v == kNone || element_count(im.type(v).shape) != 1) return std::nullopt;
  const ConstantData known = im.known_value(v);
  if (!known) return std::nullopt;
  return int_scalar(im.type(v).dtype, *known);
}

// The nodes converting `g` adds at most, as far as is known before
// converting it: a nested Loop counts its body times its trip count (1
// where that is computed), an If both branches (a run-time condition
// imports both), a Scan its body once (its length is a shape, known when
// it is converted and checked then).
int64_t unrolled_nodes(Importer& im, const onnx::GraphProto& g,
                       std::vector<const onnx::GraphProto*>& scopes) {
  scopes.push_back(&g);
  int64_t total = 0;
  for (const auto& n : g.node()) {
    int64_t size = 1;
    if (n.op_type() == "Loop" || n.op_type() == "Scan" || n.op_type() == "If") {
      int64_t sub = 0;
      for (const auto& a : n.attribute())
        if (a.has_g()) sub = capped_add(sub, unrolled_nodes(im, a.g(), scopes));
      int64_t trips = 1;
      if (n.op_type() == "Loop" && n.input_size() > 0)
        trips = std::max<int64_t>(1, static_trips(im, n.input(0), scopes).value_or(1));
      size = capped_add(1, capped_mul(trips, sub));
    }
    total = capped_add(total, size);
  }
  scopes.pop_back();
  return total;
}

// Before unrolling `count` iterations of `body`: the graph so far and what
// the unrolled body adds must stay within kMaxUnrolledNodes.
void check_unrolled_nodes(Importer& im, int64_t count, const onnx::GraphProto& body) {
  std::vector<const onnx::GraphProto*> scopes;
  const int64_t per_iteration = unrolled_nodes(im, body, scopes);
  const int64_t adds = capped_mul(count, per_iteration);
  const int64_t so_far = static_cast<int64_t>(im.node_count());
  if (capped_add(so_far, adds) <= kMaxUnrolledNodes) return;
  im.fail(fmt::format(
      "{} iterations of a body of {} nodes (nested loops multiplied out) unroll into {} "
      "nodes, beside the graph's {}; ampx unrolls loops at import, up to {} nodes in a model",
      count, count_text(per_iteration), count_text(adds), so_far, kMaxUnrolledNodes));
}

const onnx::GraphProto& body_of(Importer& im, const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "body") {
      if (a.type() != onnx::AttributeProto::GRAPH || !a.has_g())
        im.fail("attribute 'body' is not a graph");
      return a.g();
    }
  im.fail("attribute 'body' is required");
}

// The value of a one-element bool constant; nullopt when computed at run time.
std::optional<bool> constant_bool(Importer& im, ValueId v, const std::string& what) {
  const Value& val = im.value(v);
  if (element_count(val.type.shape) != 1)
    im.fail(fmt::format("{} has {} elements, expected 1", what, element_count(val.type.shape)));
  if (val.type.dtype != DType::kBool)
    im.fail(fmt::format("{} is {}, expected bool", what, dtype_name(val.type.dtype)));
  const ConstantData known = im.known_value(v);
  if (!known) return std::nullopt;
  return std::to_integer<int>(known->data()[0]) != 0;
}

// Stacks per-iteration values of one shape along a new axis `axis`.
ValueId stack(Importer& im, const std::vector<ValueId>& parts, int64_t axis, const char* what) {
  const Shape s = im.type(parts.at(0)).shape;
  const auto rank = static_cast<int64_t>(s.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank)
    im.fail(fmt::format("{} axis is out of range for rank {}", what, rank + 1));
  std::vector<int64_t> one(s.begin(), s.end());
  one.insert(one.begin() + axis, 1);
  std::vector<ValueId> views;
  for (ValueId p : parts) {
    if (im.type(p).shape != s)
      im.fail(fmt::format("{} changes shape between iterations ({} and {})", what, shape_str(s),
                          shape_str(im.type(p).shape)));
    views.push_back(im.emit1("Reshape", {p}, {{"shape", one}}));
  }
  if (views.size() == 1) return views[0];
  return im.emit1("Concat", std::move(views), {{"axis", axis}});
}

void check_iterations(Importer& im, int64_t count, size_t body_nodes) {
  if (count > kMaxUnrolledIterations)
    im.fail(
        fmt::format("{} iterations of a {}-node body: ampx unrolls loops at import, up to {} "
                    "iterations",
                    count, body_nodes, kMaxUnrolledIterations));
}

}  // namespace

// While unrolling: the nodes made so far, for loops whose sizes were not
// known before (a nested trip count computed from the iteration; a
// SequenceMap's elements).
void check_nodes_so_far(Importer& im, int64_t iteration) {
  if (static_cast<int64_t>(im.node_count()) > kMaxUnrolledNodes)
    im.fail(fmt::format(
        "unrolling made {} nodes by iteration {}; ampx unrolls loops at import, up to {} nodes "
        "in a model",
        im.node_count(), iteration, kMaxUnrolledNodes));
}

void loop_op(Importer& im, const onnx::NodeProto& n) {
  const onnx::GraphProto& body = body_of(im, n);
  const int carried = n.input_size() - 2;
  if (carried < 0) im.fail("needs the inputs M and cond (either may be empty)");
  if (body.input_size() != carried + 2)
    im.fail(
        fmt::format("the body has {} inputs, expected {} (iteration, condition and {} loop "
                    "carried values)",
                    body.input_size(), carried + 2, carried));
  if (body.output_size() < carried + 1)
    im.fail(fmt::format("the body has {} outputs, expected at least {}", body.output_size(),
                        carried + 1));
  const int scans = body.output_size() - 1 - carried;
  if (n.output_size() > carried + scans)
    im.fail(fmt::format("the node has {} outputs, the body gives {}", n.output_size(),
                        carried + scans));
  std::optional<int64_t> trips;
  if (im.has_input(n, 0)) {
    const auto m = im.const_ints(n, 0, "the trip count M");
    if (m.size() != 1) im.fail(fmt::format("M must hold one value, it has {}", m.size()));
    trips = std::max<int64_t>(m[0], 0);
    check_iterations(im, *trips, static_cast<size_t>(body.node_size()));
    check_unrolled_nodes(im, *trips, body);
  }
  const bool has_cond = im.has_input(n, 1);
  ValueId cond = im.constant(TensorType{DType::kBool, {}}, {std::byte{1}});
  if (has_cond) {
    cond = im.input(n, 1);
    if (!constant_bool(im, cond, "the condition '" + n.input(1) + "'"))
      im.fail_needs_value(fmt::format(
          "the condition '{}' is computed at run time: ampx unrolls loops at import and needs "
          "the number of iterations there",
          n.input(1)));
  }
  if (!trips && !has_cond) im.fail("has neither a trip count nor a condition (an endless loop)");
  // Loop-carried values may be sequences or optionals (lists at import).
  std::vector<HeldValue> state;
  for (int i = 0; i < carried; ++i) state.push_back(im.held_input(n, 2 + i));
  std::vector<std::vector<ValueId>> scanned(static_cast<size_t>(scans));
  for (int64_t it = 0;; ++it) {
    if (trips && it >= *trips) break;
    if (has_cond && !*constant_bool(im, cond, "the condition")) break;
    check_iterations(im, it + 1, static_cast<size_t>(body.node_size()));
    if (!trips) check_unrolled_nodes(im, 1, body);  // a loop run by its condition
    check_nodes_so_far(im, it);
    std::vector<HeldValue> ins{im.constant_i64(std::vector<int64_t>{it}, Shape{}), cond};
    ins.insert(ins.end(), state.begin(), state.end());
    const std::vector<HeldValue> outs = im.inline_subgraph_held(
        body, fmt::format("body (iteration {})", it), ins, fmt::format("@{}", it));
    auto tensor_out = [&](size_t k, const char* what) {
      if (!std::holds_alternative<ValueId>(outs[k]))
        im.fail(
            fmt::format("the body's {} ('{}') is a sequence or optional, where a tensor is "
                        "expected",
                        what, body.output(static_cast<int>(k)).name()));
      return std::get<ValueId>(outs[k]);
    };
    if (has_cond) {
      cond = tensor_out(0, "condition");
      if (!constant_bool(im, cond, "the body's condition"))
        im.fail_needs_value(fmt::format(
            "the body's condition '{}' is computed at run time (a while loop): ampx unrolls "
            "loops at import and needs the number of iterations there",
            body.output(0).name()));
    }
    for (int i = 0; i < carried; ++i) {
      HeldValue& was = state[static_cast<size_t>(i)];
      const HeldValue& now = outs[static_cast<size_t>(1 + i)];
      if (was.index() != now.index())
        im.fail(
            fmt::format("loop-carried value {} changes between a tensor and a sequence or "
                        "optional",
                        i));
      // A sequence may grow; a tensor keeps its type.
      if (const auto* v = std::get_if<ValueId>(&now)) {
        const ValueId w = std::get<ValueId>(was);
        if (!(im.type(*v) == im.type(w)))
          im.fail(fmt::format("loop-carried value {} changes from {} {} to {} {}", i,
                              dtype_name(im.type(w).dtype), shape_str(im.type(w).shape),
                              dtype_name(im.type(*v).dtype), shape_str(im.type(*v).shape)));
      }
      was = now;
    }
    for (int k = 0; k < scans; ++k)
      scanned[static_cast<size_t>(k)].push_back(
          tensor_out(static_cast<size_t>(1 + carried + k), "scan output"));
  }
  im.set_origin("Loop");
  for (int i = 0; i < carried && i < n.output_size(); ++i)
    im.bind_held(n, i, state[static_cast<size_t>(i)]);
  for (int k = 0; k < scans && carried + k < n.output_size(); ++k) {
    if (!im.output_used(n, carried + k)) continue;
    if (scanned[static_cast<size_t>(k)].empty())
      im.fail(
          fmt::format("scan output {} of a loop that runs no iteration is empty; ampx has no "
                      "empty tensors",
                      k));
    im.bind(n, carried + k, stack(im, scanned[static_cast<size_t>(k)], 0, "scan output"));
  }
}

// Scan 9+: N states, then M scan inputs sliced along their axes; the body
// returns N states and K per-iteration scan outputs.
// Scan 8: an optional sequence_lens input first, then the states and the
// scan inputs, each with a batch axis 0 the body does not see (scan inputs
// [B, T, ...], scanned along 1, `directions` per scan input); outputs
// likewise batched. Unrolled per batch element, each as Scan 9 with axis
// 0, and stacked. sequence_lens, when given, must be T for every batch
// (the padded steps' outputs are not pinned down by ONNX).
void scan8_op(Importer& im, const onnx::NodeProto& n, const onnx::GraphProto& body) {
  const auto m_attr = im.attr_int(n, "num_scan_inputs");
  if (!m_attr) im.fail("attribute 'num_scan_inputs' is required");
  const int64_t m = *m_attr;
  const int64_t states = n.input_size() - 1 - m;
  if (m < 1 || states < 0)
    im.fail(
        fmt::format("num_scan_inputs = {} does not fit {} inputs (the first is "
                    "sequence_lens)",
                    m, n.input_size()));
  const int64_t k = body.output_size() - states;
  if (body.input_size() != states + m || k < 0)
    im.fail(fmt::format("the body has {} inputs and {} outputs for {} states and {} scan inputs",
                        body.input_size(), body.output_size(), states, m));
  const auto dirs =
      im.attr_ints(n, "directions").value_or(std::vector<int64_t>(static_cast<size_t>(m), 0));
  if (static_cast<int64_t>(dirs.size()) != m)
    im.fail(fmt::format("attribute 'directions' has {} values, expected {}", dirs.size(), m));
  std::vector<ValueId> ins;
  for (int i = 1; i < n.input_size(); ++i) ins.push_back(im.input(n, i));
  const int64_t batch = rank_of(im, ins[0]) > 0 ? im.type(ins[0]).shape[0] : -1;
  int64_t length = -1;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape& s = im.type(ins[i]).shape;
    const bool scan = static_cast<int64_t>(i) >= states;
    if (s.size() < (scan ? 2u : 1u) || s[0] != batch)
      im.fail(fmt::format("input {} must have the batch ({}) as axis 0{}", i + 1, batch,
                          scan ? " and the steps as axis 1" : ""));
    if (scan && length >= 0 && s[1] != length)
      im.fail(fmt::format("scan inputs have {} and {} steps", length, s[1]));
    if (scan) length = s[1];
  }
  if (im.has_input(n, 0))
    for (int64_t l : im.const_ints(n, 0, "sequence_lens"))
      if (l != length)
        im.fail(
            fmt::format("sequence_lens {} differs from the {} steps; only full sequences "
                        "are supported",
                        l, length));
  if (length == 0 || batch == 0) im.fail("the scan inputs are empty");
  check_iterations(im, batch * length, static_cast<size_t>(body.node_size()));
  check_unrolled_nodes(im, batch * length, body);
  std::vector<std::vector<ValueId>> finals(static_cast<size_t>(states)),
      scanned(static_cast<size_t>(k));
  for (int64_t b = 0; b < batch; ++b) {
    const ValueId at_b = im.constant_i64(std::vector<int64_t>{b}, Shape{});
    std::vector<ValueId> state, xs;
    for (size_t i = 0; i < ins.size(); ++i)
      (static_cast<int64_t>(i) < states ? state : xs)
          .push_back(im.emit1("Gather", {ins[i], at_b}, {{"axis", int64_t{0}}}));
    std::vector<std::vector<ValueId>> steps(static_cast<size_t>(k));
    for (int64_t t = 0; t < length; ++t) {
      check_nodes_so_far(im, b * length + t);
      std::vector<ValueId> step_ins = state;
      for (int64_t j = 0; j < m; ++j) {
        const int64_t step = dirs[static_cast<size_t>(j)] ? length - 1 - t : t;
        const ValueId at = im.constant_i64(std::vector<int64_t>{step}, Shape{});
        step_ins.push_back(
            im.emit1("Gather", {xs[static_cast<size_t>(j)], at}, {{"axis", int64_t{0}}}));
      }
      const std::vector<ValueId> outs =
          im.inline_subgraph(body, fmt::format("body (batch {}, step {})", b, t), step_ins,
                             fmt::format("@{}.{}", b, t));
      for (int64_t i = 0; i < states; ++i) {
        const ValueId v = outs[static_cast<size_t>(i)];
        if (!(im.type(v) == im.type(state[static_cast<size_t>(i)])))
          im.fail(fmt::format("state {} changes type or shape between steps", i));
        state[static_cast<size_t>(i)] = v;
      }
      for (int64_t j = 0; j < k; ++j)
        steps[static_cast<size_t>(j)].push_back(outs[static_cast<size_t>(states + j)]);
    }
    for (int64_t i = 0; i < states; ++i)
      finals[static_cast<size_t>(i)].push_back(state[static_cast<size_t>(i)]);
    for (int64_t j = 0; j < k; ++j)
      scanned[static_cast<size_t>(j)].push_back(
          stack(im, steps[static_cast<size_t>(j)], 0, "scan output"));
  }
  im.set_origin("Scan");
  for (int64_t i = 0; i < states && i < n.output_size(); ++i)
    im.bind(n, static_cast<int>(i), stack(im, finals[static_cast<size_t>(i)], 0, "state"));
  for (int64_t j = 0; j < k && states + j < n.output_size(); ++j)
    im.bind(n, static_cast<int>(states + j),
            stack(im, scanned[static_cast<size_t>(j)], 0, "scan output"));
}

void scan_op(Importer& im, const onnx::NodeProto& n) {
  const onnx::GraphProto& body = body_of(im, n);
  if (im.opset() < 9) return scan8_op(im, n, body);
  const auto m_attr = im.attr_int(n, "num_scan_inputs");
  if (!m_attr) im.fail("attribute 'num_scan_inputs' is required");
  const int64_t m = *m_attr;
  const int64_t states = n.input_size() - m;
  if (m < 1 || states < 0)
    im.fail(fmt::format("num_scan_inputs = {} does not fit {} inputs", m, n.input_size()));
  const int64_t k = body.output_size() - states;
  if (body.input_size() != states + m || k < 0)
    im.fail(fmt::format("the body has {} inputs and {} outputs for {} states and {} scan inputs",
                        body.input_size(), body.output_size(), states, m));
  auto per = [&](const char* name, int64_t count) {
    auto v = im.attr_ints(n, name).value_or(std::vector<int64_t>(static_cast<size_t>(count), 0));
    if (static_cast<int64_t>(v.size()) != count)
      im.fail(fmt::format("attribute '{}' has {} values, expected {}", name, v.size(), count));
    return v;
  };
  const auto in_axes = per("scan_input_axes", m), in_dirs = per("scan_input_directions", m);
  const auto out_axes = per("scan_output_axes", k), out_dirs = per("scan_output_directions", k);
  std::vector<ValueId> xs;
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (int64_t j = 0; j < m; ++j) {
    const ValueId x = im.input(n, static_cast<int>(states + j));
    const Shape s = im.type(x).shape;
    int64_t a = in_axes[static_cast<size_t>(j)];
    if (a < 0) a += static_cast<int64_t>(s.size());
    if (a < 0 || a >= static_cast<int64_t>(s.size()))
      im.fail(fmt::format("scan input {} axis {} is out of range for rank {}", j,
                          in_axes[static_cast<size_t>(j)], s.size()));
    if (length >= 0 && s[static_cast<size_t>(a)] != length)
      im.fail(fmt::format("scan input {} has {} steps, input 0 has {}", j,
                          s[static_cast<size_t>(a)], length));
    length = s[static_cast<size_t>(a)];
    xs.push_back(x);
    axes.push_back(a);
  }
  if (length == 0) im.fail("the scan inputs have 0 steps; ampx has no empty tensors");
  check_iterations(im, length, static_cast<size_t>(body.node_size()));
  check_unrolled_nodes(im, length, body);
  std::vector<ValueId> state;
  for (int64_t i = 0; i < states; ++i) state.push_back(im.input(n, static_cast<int>(i)));
  std::vector<std::vector<ValueId>> scanned(static_cast<size_t>(k));
  for (int64_t t = 0; t < length; ++t) {
    check_nodes_so_far(im, t);
    std::vector<ValueId> ins = state;
    for (int64_t j = 0; j < m; ++j) {
      const int64_t step = in_dirs[static_cast<size_t>(j)] ? length - 1 - t : t;
      const ValueId at = im.constant_i64(std::vector<int64_t>{step}, Shape{});
      ins.push_back(im.emit1("Gather", {xs[static_cast<size_t>(j)], at},
                             {{"axis", axes[static_cast<size_t>(j)]}}));
    }
    const std::vector<ValueId> outs =
        im.inline_subgraph(body, fmt::format("body (step {})", t), ins, fmt::format("@{}", t));
    for (int64_t i = 0; i < states; ++i) {
      const ValueId v = outs[static_cast<size_t>(i)];
      if (!(im.type(v) == im.type(state[static_cast<size_t>(i)])))
        im.fail(fmt::format("state {} changes from {} to {} between steps", i,
                            shape_str(im.type(state[static_cast<size_t>(i)]).shape),
                            shape_str(im.type(v).shape)));
      state[static_cast<size_t>(i)] = v;
    }
    for (int64_t j = 0; j < k; ++j)
      scanned[static_cast<size_t>(j)].push_back(outs[static_cast<size_t>(states + j)]);
  }
  im.set_origin("Scan");
  for (int64_t i = 0; i < states && i < n.output_size(); ++i)
    im.bind(n, static_cast<int>(i), state[static_cast<size_t>(i)]);
  for (int64_t j = 0; j < k && states + j < n.output_size(); ++j) {
    auto parts = scanned[static_cast<size_t>(j)];
    if (out_dirs[static_cast<size_t>(j)]) std::reverse(parts.begin(), parts.end());
    im.bind(n, static_cast<int>(states + j),
            stack(im, parts, out_axes[static_cast<size_t>(j)], "scan output"));
  }
}

}  // namespace ampx::onnx_io
