// The op set is the one definition of a valid node: whatever
// opset::validate() accepts, the reference kernels build. Every case of the
// conformance catalogue is mutated (attribute values, input and output
// dims, arity) and each mutant the op set accepts must get a kernel; a
// factory check that fires after validate() would be a rule only cpu_ref
// knows, which the other backends (validating with the op set) would miss.
#include <ampx/opset/validate.hpp>

#include <cstdint>
#include <vector>

#include "harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

// An editable copy of a node description, rebuilt through NodeBuilder (no
// constant data: mutated dims would not match it).
struct MutableNode {
  explicit MutableNode(const ampx_node_desc& d) : op(d.op_type), name(d.name ? d.name : "") {
    for (size_t i = 0; i < d.num_inputs; ++i)
      in.push_back({d.inputs[i].dtype, {d.inputs[i].dims, d.inputs[i].dims + d.inputs[i].rank}});
    for (size_t i = 0; i < d.num_outputs; ++i)
      out.push_back(
          {d.outputs[i].dtype, {d.outputs[i].dims, d.outputs[i].dims + d.outputs[i].rank}});
    for (size_t i = 0; i < d.num_attrs; ++i) {
      const ampx_attr& a = d.attrs[i];
      Attr m{a.name, a.kind, a.i, a.f, {}, {}, a.s ? a.s : ""};
      if (a.kind == AMPX_ATTR_INTS) m.ints.assign(a.ints, a.ints + a.count);
      if (a.kind == AMPX_ATTR_FLOATS) m.floats.assign(a.floats, a.floats + a.count);
      attrs.push_back(std::move(m));
    }
  }
  struct Tensor {
    ampx_dtype dtype;
    std::vector<int64_t> dims;
  };
  struct Attr {
    std::string name;
    ampx_attr_kind kind;
    int64_t i;
    double f;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::string s;
  };
  std::string op, name;
  std::vector<Tensor> in, out;
  std::vector<Attr> attrs;

  NodeBuilder builder() const {
    NodeBuilder b(op, name);
    for (const Tensor& x : in) b.input(x.dtype, x.dims);
    for (const Tensor& y : out) b.output(y.dtype, y.dims);
    for (const Attr& a : attrs) {
      if (a.kind == AMPX_ATTR_INT) b.attr_int(a.name, a.i);
      if (a.kind == AMPX_ATTR_FLOAT) b.attr_float(a.name, a.f);
      if (a.kind == AMPX_ATTR_INTS) b.attr_ints(a.name, a.ints);
      if (a.kind == AMPX_ATTR_FLOATS) b.attr_floats(a.name, a.floats);
      if (a.kind == AMPX_ATTR_STRING) b.attr_str(a.name, a.s);
    }
    return b;
  }
};

// Every single-edit mutant of `base`.
std::vector<MutableNode> mutants(const MutableNode& base) {
  std::vector<MutableNode> all;
  auto add = [&](auto&& edit) {
    MutableNode m = base;
    edit(m);
    all.push_back(std::move(m));
  };
  for (size_t a = 0; a < base.attrs.size(); ++a) {
    const auto& at = base.attrs[a];
    if (at.kind == AMPX_ATTR_INT)
      for (int64_t v : {int64_t{-2}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3},
                        int64_t{1} << 40})
        add([&](MutableNode& m) { m.attrs[a].i = v; });
    if (at.kind == AMPX_ATTR_INTS) {
      for (size_t j = 0; j < at.ints.size(); ++j)
        for (int64_t delta : {-2, -1, 1, 2})
          add([&](MutableNode& m) { m.attrs[a].ints[j] += delta; });
      for (size_t j = 0; j < at.ints.size(); ++j)
        for (int64_t v : {int64_t{0}, int64_t{-1}, -at.ints[j]})
          add([&](MutableNode& m) { m.attrs[a].ints[j] = v; });
      if (!at.ints.empty()) add([&](MutableNode& m) { m.attrs[a].ints.pop_back(); });
      add([&](MutableNode& m) { m.attrs[a].ints.push_back(1); });
    }
    if (at.kind == AMPX_ATTR_FLOAT)
      for (double v : {-1.0, 0.0, 0.5, 2.0}) add([&](MutableNode& m) { m.attrs[a].f = v; });
    if (at.kind == AMPX_ATTR_STRING) add([&](MutableNode& m) { m.attrs[a].s = "bogus"; });
    add([&](MutableNode& m) { m.attrs.erase(m.attrs.begin() + static_cast<ptrdiff_t>(a)); });
  }
  for (size_t t = 0; t < base.in.size() + base.out.size(); ++t) {
    const bool is_in = t < base.in.size();
    const size_t k = is_in ? t : t - base.in.size();
    const auto& dims = is_in ? base.in[k].dims : base.out[k].dims;
    for (size_t j = 0; j < dims.size(); ++j)
      for (int64_t delta : {-1, 1})
        add([&](MutableNode& m) { (is_in ? m.in[k] : m.out[k]).dims[j] += delta; });
    add([&](MutableNode& m) { (is_in ? m.in[k] : m.out[k]).dims.push_back(1); });
    if (!dims.empty()) add([&](MutableNode& m) { (is_in ? m.in[k] : m.out[k]).dims.pop_back(); });
  }
  if (!base.in.empty()) add([&](MutableNode& m) { m.in.pop_back(); });
  if (!base.in.empty()) add([&](MutableNode& m) { m.in.push_back(m.in[0]); });
  return all;
}

TEST(OpsetAgreement, WhatTheOpSetAcceptsTheReferenceKernelsBuild) {
  size_t tried = 0, accepted = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    // f64 in the float64 mode (cpu_ref's): the op set's validation with
    // the same option must agree with the kernels too.
    for (const ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_F64}) {
      const opset::ValidateOptions options{.f64_compute = dt == AMPX_DTYPE_F64};
      Rng rng(3);
      op_cases::Case c;
      make(rng, dt, c);
      const MutableNode base(c.nb.desc());
      for (MutableNode& m : mutants(base)) {
        ++tried;
        NodeBuilder b = m.builder();
        const ampx_node_desc& d = b.desc();
        if (!opset::is_valid(d, nullptr, options)) continue;
        ++accepted;
        try {
          (void)reference::make_kernel(d, options);
        } catch (const std::exception& e) {
          ADD_FAILURE() << name << " " << plugin_support::dtype_name(dt)
                        << ": the op set accepts this mutant, cpu_ref rejects it: " << e.what();
        }
      }
    }
  }
  // The mutations must reach both sides of the rules.
  EXPECT_GT(accepted, 50u);
  EXPECT_LT(accepted, tried / 2);
}

}  // namespace
}  // namespace ampx::test
