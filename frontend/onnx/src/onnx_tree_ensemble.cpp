// ai.onnx.ml TreeEnsemble (ml opset 5) as a walk of every tree at once in
// op-set ops (docs/ONNX.md, "Other domains"), as Hummingbird's tree
// traversal compiles trees into tensor ops: the node each (sample, tree)
// is at, [N, trees], starts at the roots, and each level gathers the
// node's feature, split and children from constant tables indexed by node
// and steps with a Where of the node's comparison. Leaves point to
// themselves, so after as many levels as the deepest tree every walk rests
// on its leaf; the leaves' rows of a [leaves, targets] table (the weight
// at the leaf's target, the aggregate's identity elsewhere) are gathered
// and reduced over the trees. The work is levels x N x trees, like a
// kernel that walks the trees, and every backend runs it.
//
// As ONNX's reference (onnx/reference/ops/aionnxml/op_tree_ensemble.py):
// a NaN feature compares false (NEQ true) unless the node's
// missing_value_tracks_true sends it down the true branch; AVERAGE divides
// each weight by the number of trees; MIN/MAX start from the type's
// largest/lowest value. Set membership reads membership_values in the
// order the BRANCH_MEMBER nodes appear in nodes_modes (ONNX's text).
// post_transform LOGISTIC and SOFTMAX are applied as ONNX Runtime does
// (ONNX's reference ignores it); SOFTMAX_ZERO and PROBIT are refused.
#include <fmt/format.h>
#include <ampx/fileio/file_error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

// The deepest tree's walk may take at most this many levels (each level is
// about a dozen IR nodes).
constexpr int64_t kMaxTreeDepth = 1024;

enum Mode : int64_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };

struct Tables {
  int64_t nodes = 0, leaves = 0, depth = 0;
  std::vector<int64_t> feature, mode, next_true, next_false;  // by global id
  std::vector<double> split;
  std::vector<uint8_t> missing_true;
  std::vector<std::vector<double>> members;  // by global id (BRANCH_MEMBER nodes)
  std::set<int64_t> modes;                   // the modes the nodes use
  // TreeEnsembleRegressor: a NaN feature goes where missing_value_tracks_true
  // says, whatever the comparison (TreeEnsemble: the comparison, or true
  // where the flag is set).
  bool nan_by_flag = false;

  // Every table sized for nodes + leaves ids, a leaf (LEQ on feature 0)
  // until the nodes are read.
  void allocate() {
    const auto ids = static_cast<size_t>(nodes + leaves);
    feature.assign(ids, 0);
    mode.assign(ids, kLeq);
    split.assign(ids, 0.0);
    missing_true.assign(ids, 0);
    members.resize(ids);
    next_true.resize(ids);
    next_false.resize(ids);
  }
};

std::vector<double> tensor_values(Importer& im, const N& n, const char* name, bool required) {
  const onnx::TensorProto* t = im.attr_tensor(n, name);
  if (!t) {
    if (required) im.fail(fmt::format("attribute '{}' is required", name));
    return {};
  }
  TensorData d =
      read_tensor(*t, im.base_dir(), fmt::format("attribute '{}'", name), im.max_tensor_bytes());
  return to_doubles(HostTensor{"", d.type, std::move(d.bytes)});
}

std::vector<int64_t> ints_attr(Importer& im, const N& n, const char* name) {
  auto v = im.attr_ints(n, name);
  if (!v) im.fail(fmt::format("attribute '{}' is required", name));
  return *v;
}

// The levels a walk from `root` takes to a leaf (the longest path); each
// node's depth is computed once, in `depth` (-1: not yet, -2: on the
// current path), shared by every root (a shared subtree is not walked
// twice); a cycle is an error.
int64_t tree_depth(Importer& im, const Tables& t, int64_t root, std::vector<int64_t>& depth) {
  std::vector<std::pair<int64_t, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [id, expanded] = stack.back();
    stack.pop_back();
    const auto k = static_cast<size_t>(id);
    if (expanded) {
      int64_t d = 0;
      for (int64_t c : {t.next_true[k], t.next_false[k]})
        if (c < t.nodes) d = std::max(d, depth[static_cast<size_t>(c)]);
      depth[k] = d + 1;
      if (depth[k] > kMaxTreeDepth)
        im.fail(
            fmt::format("a tree is deeper than {} levels, the most ampx imports", kMaxTreeDepth));
      continue;
    }
    if (depth[k] >= 0) continue;
    depth[k] = -2;
    stack.push_back({id, true});
    for (int64_t c : {t.next_true[k], t.next_false[k]})
      if (c < t.nodes) {
        if (depth[static_cast<size_t>(c)] == -2)
          im.fail(fmt::format("the trees have a cycle through node {}", c));
        if (depth[static_cast<size_t>(c)] == -1) stack.push_back({c, false});
      }
  }
  return depth[static_cast<size_t>(root)];
}

// Every attribute read and checked against the others and X's features.
Tables read_tables(Importer& im, const N& n, int64_t features, const std::vector<int64_t>& roots) {
  Tables t;
  const auto feature = ints_attr(im, n, "nodes_featureids");
  const auto true_ids = ints_attr(im, n, "nodes_truenodeids");
  const auto false_ids = ints_attr(im, n, "nodes_falsenodeids");
  const auto true_leaf = ints_attr(im, n, "nodes_trueleafs");
  const auto false_leaf = ints_attr(im, n, "nodes_falseleafs");
  const auto targets = ints_attr(im, n, "leaf_targetids");
  const auto modes = tensor_values(im, n, "nodes_modes", true);
  const auto splits = tensor_values(im, n, "nodes_splits", true);
  const auto weights = tensor_values(im, n, "leaf_weights", true);
  const auto missing = im.attr_ints(n, "nodes_missing_value_tracks_true");
  t.nodes = static_cast<int64_t>(feature.size());
  t.leaves = static_cast<int64_t>(targets.size());
  if (t.nodes == 0 || t.leaves == 0) im.fail("the ensemble has no nodes or no leaves");
  for (const auto& [size, what] :
       {std::pair{true_ids.size(), "nodes_truenodeids"},
        {false_ids.size(), "nodes_falsenodeids"},
        {true_leaf.size(), "nodes_trueleafs"},
        {false_leaf.size(), "nodes_falseleafs"},
        {modes.size(), "nodes_modes"},
        {splits.size(), "nodes_splits"},
        {missing ? missing->size() : feature.size(), "nodes_missing_value_tracks_true"}})
    if (size != feature.size())
      im.fail(fmt::format("{} has {} values, nodes_featureids {}", what, size, feature.size()));
  if (weights.size() != targets.size())
    im.fail(fmt::format("leaf_weights has {} values, leaf_targetids {}", weights.size(),
                        targets.size()));
  t.allocate();
  const auto members = tensor_values(im, n, "membership_values", false);
  size_t member_at = 0;
  for (int64_t i = 0; i < t.nodes; ++i) {
    const auto k = static_cast<size_t>(i);
    if (feature[k] < 0 || feature[k] >= features)
      im.fail(fmt::format("node {} reads feature {}, X has {}", i, feature[k], features));
    const double m = modes[k];
    if (!(m >= 0.0 && m <= 6.0) || m != std::floor(m))
      im.fail(fmt::format("node {} has mode {}, not 0 to 6", i, m));
    t.feature[k] = feature[k];
    t.mode[k] = static_cast<int64_t>(m);
    t.modes.insert(t.mode[k]);
    t.split[k] = splits[k];
    t.missing_true[k] = missing && (*missing)[k] != 0 ? 1 : 0;
    for (const auto& [leaf, id, next, side] :
         {std::tuple{true_leaf[k], true_ids[k], &t.next_true, "true"},
          {false_leaf[k], false_ids[k], &t.next_false, "false"}}) {
      const int64_t bound = leaf != 0 ? t.leaves : t.nodes;
      if ((leaf != 0 && leaf != 1) || id < 0 || id >= bound)
        im.fail(fmt::format("node {}'s {} branch goes to {} {}, past the {} {}", i, side,
                            leaf != 0 ? "leaf" : "node", id, bound, leaf ? "leaves" : "nodes"));
      (*next)[k] = leaf != 0 ? t.nodes + id : id;
    }
    if (t.mode[k] == kMember) {  // the next set, up to a NaN or the end
      auto& set = t.members[k];
      while (member_at < members.size() && !std::isnan(members[member_at]))
        set.push_back(members[member_at++]);
      if (member_at >= members.size() && set.empty())
        im.fail(fmt::format("node {} tests set membership, membership_values has no set left", i));
      ++member_at;  // the NaN
    }
  }
  const int64_t n_targets = im.attr_int_or(n, "n_targets", 0);
  for (int64_t j = 0; j < t.leaves; ++j) {
    const auto k = static_cast<size_t>(t.nodes + j);
    t.next_true[k] = t.next_false[k] = t.nodes + j;  // a leaf stays
    if (targets[static_cast<size_t>(j)] < 0 || targets[static_cast<size_t>(j)] >= n_targets)
      im.fail(fmt::format("leaf {} has target {}, n_targets is {}", j,
                          targets[static_cast<size_t>(j)], n_targets));
  }
  std::vector<int64_t> depth(static_cast<size_t>(t.nodes), -1);
  for (int64_t r : roots) {
    if (r < 0 || r >= t.nodes)
      im.fail(fmt::format("tree root {} is not a node (there are {})", r, t.nodes));
    t.depth = std::max(t.depth, tree_depth(im, t, r, depth));
  }
  return t;
}

ValueId f64_constant(Importer& im, const std::vector<double>& values, Shape shape, DType dt) {
  std::vector<std::byte> bytes(values.size() * 8);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  const ValueId c = im.constant({DType::kF64, std::move(shape)}, std::move(bytes));
  return dt == DType::kF64 ? c : im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

// One level: where each walk goes from the node `at` [N, trees].
ValueId step(Importer& im, const Tables& t, ValueId x, ValueId at, DType dt,
             const std::vector<ValueId>& tab) {
  // tab: feature, split, mode, true, false, missing, members (kNone when unused)
  const auto gather = [&](ValueId table) { return im.emit1("Gather", {table, at}, {{"axis", 0}}); };
  const ValueId v = im.emit1("GatherElements", {x, gather(tab[0])}, {{"axis", 1}});
  const ValueId split = gather(tab[1]);
  const auto compare = [&](int64_t mode) -> ValueId {
    switch (mode) {
      case kLeq:
        return im.emit1("LessOrEqual", {v, split});
      case kLt:
        return im.emit1("Less", {v, split});
      case kGte:
        return im.emit1("GreaterOrEqual", {v, split});
      case kGt:
        return im.emit1("Greater", {v, split});
      case kEq:
        return im.emit1("Equal", {v, split});
      case kNeq:
        return im.emit1("Not", {im.emit1("Equal", {v, split})});
      default: {  // set membership: any of the node's (NaN-padded) set
        const Shape s = im.type(v).shape;
        const ValueId col =
            im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>{s[0], s[1], 1}}});
        const ValueId hit = im.emit1("Equal", {col, gather(tab[6])});
        const ValueId any =
            im.emit1("ReduceMax", {im.emit1("Cast", {hit}, {{"to", int64_t(to_c(dt))}})},
                     {{"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t{0}}});
        return im.emit1("Cast", {any}, {{"to", int64_t(to_c(DType::kBool))}});
      }
    }
  };
  const auto finish = [&](ValueId cond) {
    if (t.nan_by_flag) {
      const ValueId nan = im.emit1("Not", {im.emit1("Equal", {v, v})});
      cond = im.emit1("And", {im.emit1("Not", {nan}), cond});
      if (tab[5] != kNone) cond = im.emit1("Or", {cond, im.emit1("And", {nan, gather(tab[5])})});
    } else if (tab[5] != kNone) {  // a NaN goes down the true branch where the node says so
      const ValueId nan = im.emit1("Not", {im.emit1("Equal", {v, v})});
      cond = im.emit1("Or", {cond, im.emit1("And", {nan, gather(tab[5])})});
    }
    return im.emit1("Where", {cond, gather(tab[3]), gather(tab[4])});
  };
  // One mode: its comparison. Several: the OR over the modes of (the
  // node's mode is m) AND (m's comparison), exactly one of which can hold.
  if (t.modes.size() == 1) return finish(compare(*t.modes.begin()));
  const ValueId mode = gather(tab[2]);
  ValueId cond = kNone;
  for (int64_t m : t.modes) {
    const std::vector<int64_t> mv{m};
    const ValueId is_m = im.emit1("Equal", {mode, im.constant_i64(mv, {})});
    const ValueId c = im.emit1("And", {is_m, compare(m)});
    cond = cond == kNone ? c : im.emit1("Or", {cond, c});
  }
  return finish(cond);
}

// Each (sample, tree)'s leaf, [N, trees], numbered among the leaves.
ValueId walk(Importer& im, ValueId x, const Tables& t, const std::vector<int64_t>& roots) {
  const TensorType xt = im.type(x);
  const int64_t batch = xt.shape[0], ids = t.nodes + t.leaves;
  const auto trees = static_cast<int64_t>(roots.size());
  // The tables, by global id (nodes, then leaves).
  std::vector<ValueId> tab(7, kNone);
  tab[0] = im.constant_i64(t.feature, {ids});
  tab[1] = f64_constant(im, t.split, {ids}, xt.dtype);
  if (t.modes.size() > 1) tab[2] = im.constant_i64(t.mode, {ids});
  tab[3] = im.constant_i64(t.next_true, {ids});
  tab[4] = im.constant_i64(t.next_false, {ids});
  if (std::any_of(t.missing_true.begin(), t.missing_true.end(), [](uint8_t m) { return m; })) {
    std::vector<std::byte> bytes(t.missing_true.size());
    std::memcpy(bytes.data(), t.missing_true.data(), bytes.size());
    tab[5] = im.constant({DType::kBool, {ids}}, std::move(bytes));
  }
  if (t.modes.contains(kMember)) {
    size_t width = 1;
    for (const auto& s : t.members) width = std::max(width, s.size());
    im.check_size({xt.dtype, {ids, static_cast<int64_t>(width)}}, "the membership table");
    im.check_size({xt.dtype, {batch, trees, static_cast<int64_t>(width)}}, "the membership test");
    std::vector<double> sets(static_cast<size_t>(ids) * width,
                             std::numeric_limits<double>::quiet_NaN());
    for (size_t k = 0; k < t.members.size(); ++k)
      std::copy(t.members[k].begin(), t.members[k].end(), sets.begin() + k * width);
    tab[6] = f64_constant(im, sets, {ids, static_cast<int64_t>(width)}, xt.dtype);
  }
  im.check_size({DType::kI64, {batch, trees}}, "the walks' positions");
  std::vector<int64_t> start(static_cast<size_t>(batch * trees));
  for (size_t k = 0; k < start.size(); ++k) start[k] = roots[k % roots.size()];
  ValueId at = im.constant_i64(start, {batch, trees});
  for (int64_t level = 0; level < t.depth; ++level) at = step(im, t, x, at, xt.dtype, tab);
  const std::vector<int64_t> first_leaf{t.nodes};
  return im.emit1("Sub", {at, im.constant_i64(first_leaf, {})});
}

enum Aggregate : int64_t { kAverage = 0, kSum, kMin, kMax };

// The identity of the aggregate in `dt`: 0, or the type's largest
// (MIN) or lowest (MAX) value, as ONNX's reference starts from.
double aggregate_fill(DType dt, int64_t aggregate) {
  if (aggregate != kMin && aggregate != kMax) return 0.0;
  const double big = dt == DType::kF16   ? 65504.0
                     : dt == DType::kF32 ? double(std::numeric_limits<float>::max())
                                         : std::numeric_limits<double>::max();
  return aggregate == kMin ? big : -big;
}

// The rows of `leaf` [leaves, targets] at each walk's leaf, reduced over
// the trees by the aggregate.
ValueId aggregate_leaves(Importer& im, ValueId leaf_at, const std::vector<double>& leaf,
                         int64_t leaves, int64_t n_targets, int64_t aggregate, DType dt) {
  const ValueId per_tree =
      im.emit1("Gather", {f64_constant(im, leaf, {leaves, n_targets}, dt), leaf_at}, {{"axis", 0}});
  const char* reduce = aggregate == kMin   ? "ReduceMin"
                       : aggregate == kMax ? "ReduceMax"
                                           : "ReduceSum";
  return im.emit1(reduce, {per_tree},
                  {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
}

ValueId post_transform(Importer& im, ValueId y, int64_t post) {
  if (post == 1) return im.emit1("Softmax", {y}, {{"axis", int64_t{-1}}});
  if (post == 2) return im.emit1("Sigmoid", {y});
  return y;
}

// X [N, features] of float, double or float16.
void check_x(Importer& im, const TensorType& xt, std::string_view op) {
  if (!is_float(xt.dtype) || xt.dtype == DType::kBF16)
    im.fail(fmt::format("X is {}; {} takes float, double or float16", dtype_name(xt.dtype), op));
  if (xt.shape.size() != 2)
    im.fail(fmt::format("X must be [N, features], got {}", shape_str(xt.shape)));
}

// A string from the model, for a message: its start, whole characters,
// control characters escaped.
std::string model_text(std::string_view text) {
  return fileio::escape_control(fileio::utf8_prefix(text, 40));
}

const google::protobuf::RepeatedPtrField<std::string>* strings_attr(const N& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a.strings();
  return nullptr;
}

// A float list attribute, or its `_as_tensor` (ml 3) form.
std::vector<double> floats_or_tensor(Importer& im, const N& n, const std::string& name) {
  if (const auto f = im.attr_floats(n, name.c_str())) return {f->begin(), f->end()};
  return tensor_values(im, n, (name + "_as_tensor").c_str(), false);
}

// TreeEnsembleRegressor's nodes (ml 1 to 4: trees and nodes by id, modes
// as strings, LEAF nodes whose targets target_* list) as the walk's
// tables: the branch nodes first, then the leaves; `leaf` the [leaves,
// n_targets] table, `roots` each tree's first node (ONNX's reference).
Tables read_regressor(Importer& im, const N& n, int64_t features, int64_t n_targets,
                      int64_t aggregate, DType dt, std::vector<int64_t>& roots,
                      std::vector<double>& leaf) {
  const auto tree = ints_attr(im, n, "nodes_treeids");
  const auto id = ints_attr(im, n, "nodes_nodeids");
  const auto feature = ints_attr(im, n, "nodes_featureids");
  const auto true_ids = ints_attr(im, n, "nodes_truenodeids");
  const auto false_ids = ints_attr(im, n, "nodes_falsenodeids");
  const auto values = floats_or_tensor(im, n, "nodes_values");
  const auto missing = im.attr_ints(n, "nodes_missing_value_tracks_true");
  const auto* modes = strings_attr(n, "nodes_modes");
  const size_t count = tree.size();
  if (count == 0) im.fail("the ensemble has no nodes");
  for (const auto& [size, what] :
       {std::pair{id.size(), "nodes_nodeids"},
        {feature.size(), "nodes_featureids"},
        {true_ids.size(), "nodes_truenodeids"},
        {false_ids.size(), "nodes_falsenodeids"},
        {values.size(), "nodes_values"},
        {modes ? size_t(modes->size()) : 0, "nodes_modes"},
        {missing ? missing->size() : count, "nodes_missing_value_tracks_true"}})
    if (size != count)
      im.fail(fmt::format("{} has {} values, nodes_treeids {}", what, size, count));
  static const std::map<std::string, int64_t> kModes{
      {"BRANCH_LEQ", kLeq}, {"BRANCH_LT", kLt},   {"BRANCH_GTE", kGte}, {"BRANCH_GT", kGt},
      {"BRANCH_EQ", kEq},   {"BRANCH_NEQ", kNeq}, {"LEAF", -1}};
  std::vector<int64_t> mode(count), slot(count);  // slot: the new id (branches, then leaves)
  std::map<std::pair<int64_t, int64_t>, size_t> index;
  Tables t;
  t.nan_by_flag = true;
  for (size_t i = 0; i < count; ++i) {
    const auto it = kModes.find((*modes)[static_cast<int>(i)]);
    if (it == kModes.end())
      im.fail(fmt::format("node {} has mode '{}'", i, model_text((*modes)[static_cast<int>(i)])));
    mode[i] = it->second;
    if (!index.emplace(std::pair{tree[i], id[i]}, i).second)
      im.fail(fmt::format("tree {} has two nodes {}", tree[i], id[i]));
    slot[i] = mode[i] < 0 ? t.leaves++ : t.nodes++;
  }
  for (size_t i = 0; i < count; ++i)
    if (mode[i] < 0) slot[i] += t.nodes;
  if (t.nodes == 0 || t.leaves == 0) im.fail("the ensemble has no branch nodes or no leaves");
  t.allocate();
  std::map<int64_t, int64_t> first;  // tree id -> its first node's new id
  for (size_t i = 0; i < count; ++i) {
    const auto k = static_cast<size_t>(slot[i]);
    first.emplace(tree[i], slot[i]);
    if (mode[i] < 0) {
      t.next_true[k] = t.next_false[k] = slot[i];
      continue;
    }
    if (feature[i] < 0 || feature[i] >= features)
      im.fail(fmt::format("node {} reads feature {}, X has {}", i, feature[i], features));
    t.feature[k] = feature[i];
    t.mode[k] = mode[i];
    t.modes.insert(mode[i]);
    t.split[k] = values[i];
    t.missing_true[k] = missing && (*missing)[i] != 0 ? 1 : 0;
    for (const auto& [child, next] :
         {std::pair{true_ids[i], &t.next_true}, {false_ids[i], &t.next_false}}) {
      const auto c = index.find({tree[i], child});
      if (c == index.end())
        im.fail(fmt::format("node {} of tree {} branches to node {}, which the tree does not have",
                            id[i], tree[i], child));
      (*next)[k] = slot[c->second];
    }
  }
  for (const auto& [tree_id, root] : first) roots.push_back(root);
  std::vector<int64_t> depth(static_cast<size_t>(t.nodes), -1);
  for (int64_t r : roots)
    if (r < t.nodes) t.depth = std::max(t.depth, tree_depth(im, t, r, depth));

  const auto target_tree = ints_attr(im, n, "target_treeids");
  const auto target_node = ints_attr(im, n, "target_nodeids");
  const auto target = ints_attr(im, n, "target_ids");
  const auto weight = floats_or_tensor(im, n, "target_weights");
  if (target_node.size() != target_tree.size() || target.size() != target_tree.size() ||
      weight.size() != target_tree.size())
    im.fail("target_treeids, target_nodeids, target_ids and target_weights differ in length");
  im.check_size({dt, {t.leaves, n_targets}}, "the leaf table");
  const double fill = aggregate_fill(dt, aggregate);
  leaf.assign(static_cast<size_t>(t.leaves * n_targets), fill);
  const auto trees = static_cast<double>(roots.size());
  for (size_t e = 0; e < target.size(); ++e) {
    const auto c = index.find({target_tree[e], target_node[e]});
    if (c == index.end() || mode[c->second] >= 0) continue;  // no walk ends there
    if (target[e] < 0 || target[e] >= n_targets)
      im.fail(fmt::format("target {} is not below n_targets {}", target[e], n_targets));
    double& cell = leaf[static_cast<size_t>((slot[c->second] - t.nodes) * n_targets + target[e])];
    const double w = weight[e];
    if (aggregate == kMin)
      cell = std::min(cell, w);
    else if (aggregate == kMax)
      cell = std::max(cell, w);
    else
      cell += aggregate == kAverage ? w / trees : w;
  }
  return t;
}

}  // namespace

// TreeEnsembleRegressor (ml 1 to 4), what scikit-learn's converters write
// for tree regressors: the same walk; base_values added after the
// aggregate, as ONNX's reference does.
void tree_ensemble_regressor(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const TensorType xt = im.type(x);
  check_x(im, xt, "TreeEnsembleRegressor");
  const std::string agg = im.attr_string_or(n, "aggregate_function", "SUM");
  const std::string post_name = im.attr_string_or(n, "post_transform", "NONE");
  static const std::map<std::string, int64_t> kAggregates{
      {"AVERAGE", kAverage}, {"SUM", kSum}, {"MIN", kMin}, {"MAX", kMax}};
  static const std::map<std::string, int64_t> kPosts{{"NONE", 0}, {"SOFTMAX", 1}, {"LOGISTIC", 2}};
  if (!kAggregates.contains(agg))
    im.fail(
        fmt::format("aggregate_function '{}' is not AVERAGE, SUM, MIN or MAX", model_text(agg)));
  if (!kPosts.contains(post_name))
    im.fail(fmt::format("post_transform '{}' is not supported (NONE, SOFTMAX, LOGISTIC are)",
                        model_text(post_name)));
  const int64_t n_targets = im.attr_int_or(n, "n_targets", 1);
  if (n_targets < 1) im.fail(fmt::format("n_targets must be at least 1, got {}", n_targets));
  im.check_size({xt.dtype, {xt.shape[0], n_targets}}, "the output");
  std::vector<int64_t> roots;
  std::vector<double> leaf;
  const Tables t =
      read_regressor(im, n, xt.shape[1], n_targets, kAggregates.at(agg), xt.dtype, roots, leaf);
  im.check_size({xt.dtype, {xt.shape[0], static_cast<int64_t>(roots.size()), n_targets}},
                "the trees' outputs");
  ValueId y = aggregate_leaves(im, walk(im, x, t, roots), leaf, t.leaves, n_targets,
                               kAggregates.at(agg), xt.dtype);
  const auto base = floats_or_tensor(im, n, "base_values");
  if (!base.empty()) {
    if (static_cast<int64_t>(base.size()) != n_targets)
      im.fail(fmt::format("base_values has {} values, n_targets is {}", base.size(), n_targets));
    y = im.emit1("Add", {y, f64_constant(im, base, {1, n_targets}, xt.dtype)});
  }
  im.bind(n, 0, post_transform(im, y, kPosts.at(post_name)));
}

void tree_ensemble(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const TensorType xt = im.type(x);
  check_x(im, xt, "TreeEnsemble");
  const int64_t batch = xt.shape[0], features = xt.shape[1];
  const auto roots = ints_attr(im, n, "tree_roots");
  if (roots.empty()) im.fail("tree_roots is empty");
  const int64_t aggregate = im.attr_int_or(n, "aggregate_function", kSum);
  const int64_t post = im.attr_int_or(n, "post_transform", 0);
  if (aggregate < 0 || aggregate > 3)
    im.fail(fmt::format("aggregate_function {} is not 0 to 3", aggregate));
  if (post < 0 || post > 2)
    im.fail(fmt::format("post_transform {} is not supported (NONE, SOFTMAX, LOGISTIC are)", post));
  const int64_t n_targets = im.attr_int_or(n, "n_targets", 0);
  if (n_targets < 1) im.fail(fmt::format("n_targets must be at least 1, got {}", n_targets));
  im.check_size({xt.dtype, {batch, n_targets}}, "the output");
  const Tables t = read_tables(im, n, features, roots);
  const auto trees = static_cast<int64_t>(roots.size());
  im.check_size({xt.dtype, {batch, trees, n_targets}}, "the trees' outputs");
  const ValueId leaf_at = walk(im, x, t, roots);

  // [leaves, targets]: the weight at the leaf's target, the identity of
  // the aggregate elsewhere.
  const auto targets = *im.attr_ints(n, "leaf_targetids");
  const auto weights = tensor_values(im, n, "leaf_weights", true);
  im.check_size({xt.dtype, {t.leaves, n_targets}}, "the leaf table");
  std::vector<double> leaf(static_cast<size_t>(t.leaves * n_targets),
                           aggregate_fill(xt.dtype, aggregate));
  for (int64_t j = 0; j < t.leaves; ++j) {
    const double w = weights[static_cast<size_t>(j)];
    leaf[static_cast<size_t>(j * n_targets + targets[static_cast<size_t>(j)])] =
        aggregate == kAverage ? w / static_cast<double>(trees) : w;
  }
  const ValueId y = aggregate_leaves(im, leaf_at, leaf, t.leaves, n_targets, aggregate, xt.dtype);
  im.bind(n, 0, post_transform(im, y, post));
}

}  // namespace ampx::onnx_io
