#include "grad_check.hpp"

#include <ampx/ir/verifier.hpp>
#include <ampx/train/autodiff.hpp>

#include <tolerances.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <span>

namespace ampx::test {
namespace {

std::vector<double> draw(const CheckedInput& c, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<double> v(n);
  switch (c.draw) {
    case Draw::kUniform:
      for (double& x : v) {
        const double u = uni(rng);
        x = u == 0.0 ? 0.5 : u;
      }
      break;
    case Draw::kAwayFromKink:
      for (double& x : v) {
        const double u = uni(rng);
        x = c.kink + (u < 0 ? -0.2 : 0.2) + 0.8 * u;
      }
      break;
    case Draw::kPositive:
      for (double& x : v) x = 1.0 + 0.5 * uni(rng);
      break;
    case Draw::kDistinct: {
      std::vector<size_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      for (size_t i = 0; i < n; ++i)
        v[i] = 0.05 * (static_cast<double>(perm[i]) - static_cast<double>(n) / 2.0);
      break;
    }
  }
  return v;
}

HostTensor f64_tensor(const Value& val, const std::vector<double>& data) {
  HostTensor t{val.name, val.type, std::vector<std::byte>(data.size() * 8)};
  std::memcpy(t.data.data(), data.data(), t.data.size());
  return t;
}

std::vector<double> doubles(std::span<const std::byte> bytes) {
  std::vector<double> v(bytes.size() / 8);
  std::memcpy(v.data(), bytes.data(), v.size() * 8);
  return v;
}

// The check runs in f64 from end to end: no value of another float dtype,
// and no Cast (autodiff's Cast rule or a planner's would hide an f32 step).
void require_float64(const Graph& g, const char* which) {
  for (const Value& v : g.values())
    if (is_float(v.type.dtype) && v.type.dtype != kGradCheckDtype)
      throw GraphError(std::string("gradient_check: the ") + which + " graph's value '" + v.name +
                       "' is " + std::string(dtype_name(v.type.dtype)) + ", not f64");
  for (const Node& n : g.nodes())
    if (n.op == OpType::kCast)
      throw GraphError(std::string("gradient_check: the ") + which + " graph has a Cast ('" +
                       n.name + "')");
}

}  // namespace

plugins::PluginHost make_cpu_ref_host() {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_TEST_PLUGIN_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts);
}

std::vector<GradCheckResult> gradient_check(
    const plugins::Device& device,
    const std::function<ValueId(GraphBuilder&, std::vector<CheckedInput>&)>& build, uint64_t seed,
    const GradTamper& tamper) {
  GraphBuilder b("gradient_check", seed);
  std::vector<CheckedInput> checked;
  const ValueId y = build(b, checked);
  const ValueId r = b.random_weight("R", b.type(y).shape, 1.0f, kGradCheckDtype);
  const ValueId prod = b.add(OpType::kMul, "loss_terms", {y, r});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {prod}, {{"keepdims", int64_t{0}}});
  b.output(y);
  b.output(loss);
  const Graph fwd = std::move(b).build();

  Graph bwd = fwd;
  const double one = 1.0;
  std::vector<std::byte> one_bytes(sizeof one);
  std::memcpy(one_bytes.data(), &one, sizeof one);
  const ValueId seed_value =
      bwd.add_constant("loss_grad_seed", {kGradCheckDtype, {}}, std::move(one_bytes));
  std::vector<ValueId> wrt;
  for (const CheckedInput& c : checked) wrt.push_back(c.value);
  std::vector<ValueId> grads = train::append_gradients(bwd, loss, seed_value, wrt);
  if (tamper) tamper(bwd, grads);
  for (ValueId g : grads) bwd.add_output(g);
  verify_graph_or_throw(bwd);
  require_float64(fwd, "forward");
  require_float64(bwd, "gradient");

  // Inputs: the checked ones drawn as asked, any other float input uniform.
  std::mt19937_64 rng(seed * 7919 + 1);
  std::vector<HostTensor> inputs;
  for (ValueId v : fwd.inputs()) {
    const Value& val = fwd.value(v);
    if (val.type.dtype != kGradCheckDtype) throw GraphError("gradient_check: inputs must be f64");
    CheckedInput how{v};
    for (const CheckedInput& c : checked)
      if (c.value == v) how = c;
    inputs.push_back(
        f64_tensor(val, draw(how, static_cast<size_t>(element_count(val.type.shape)), rng)));
  }
  const std::vector<double> rv = doubles(*fwd.value(r).constant);

  // The graphs as they are, every node on the cpu_ref device: no planner
  // (it plans every float node in f32 or 16-bit, with Casts), no fusion.
  Executor backward(bwd, device);
  const std::vector<HostTensor> outs = backward.run(inputs);
  Executor forward(fwd, device);
  auto loss_at = [&](const std::vector<HostTensor>& in) {
    const std::vector<double> yv = doubles(forward.run(in).at(0).data);
    double l = 0;
    for (size_t i = 0; i < yv.size(); ++i) l += rv[i] * yv[i];
    return l;
  };

  std::vector<GradCheckResult> results;
  const double h = opset::kGradientCheckStep;
  for (size_t k = 0; k < checked.size(); ++k) {
    const auto input_index =
        static_cast<size_t>(std::find(fwd.inputs().begin(), fwd.inputs().end(), checked[k].value) -
                            fwd.inputs().begin());
    const std::vector<double> analytic_all = doubles(outs.at(2 + k).data);
    const size_t n = analytic_all.size();
    std::vector<size_t> sample(n);
    std::iota(sample.begin(), sample.end(), 0);
    if (n > 48) {
      std::shuffle(sample.begin(), sample.end(), rng);
      sample.resize(48);
    }
    std::vector<double> analytic, numeric;
    for (size_t i : sample) {
      std::vector<HostTensor> in = inputs;
      auto* x = reinterpret_cast<double*>(in[input_index].data.data());
      const double x0 = x[i];
      const double hi = x0 + h, lo = x0 - h;
      x[i] = hi;
      const double up = loss_at(in);
      x[i] = lo;
      const double down = loss_at(in);
      numeric.push_back((up - down) / (hi - lo));  // the step as stored
      analytic.push_back(analytic_all[i]);
    }
    results.push_back({fwd.value(checked[k].value).name, opset::relative_error(analytic, numeric),
                       static_cast<int>(sample.size())});
  }
  return results;
}

}  // namespace ampx::test
