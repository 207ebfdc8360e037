#include "grad_check.hpp"

#include <ampx/ir/verifier.hpp>
#include <ampx/train/autodiff.hpp>

#include <tolerances.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

namespace ampx::test {
namespace {

std::vector<float> draw(const CheckedInput& c, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> v(n);
  switch (c.draw) {
    case Draw::kUniform:
      for (float& x : v) {
        const float u = uni(rng);
        x = u == 0.0f ? 0.5f : u;
      }
      break;
    case Draw::kAwayFromKink:
      for (float& x : v) {
        const float u = uni(rng);
        x = static_cast<float>(c.kink) + (u < 0 ? -0.2f : 0.2f) + 0.8f * u;
      }
      break;
    case Draw::kPositive:
      for (float& x : v) x = 1.0f + 0.5f * uni(rng);
      break;
    case Draw::kDistinct: {
      std::vector<size_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      for (size_t i = 0; i < n; ++i)
        v[i] = 0.05f * (static_cast<float>(perm[i]) - static_cast<float>(n) / 2.0f);
      break;
    }
  }
  return v;
}

HostTensor f32_tensor(const Value& val, const std::vector<float>& data) {
  HostTensor t{val.name, val.type, std::vector<std::byte>(data.size() * 4)};
  std::memcpy(t.data.data(), data.data(), t.data.size());
  return t;
}

std::vector<float> floats(const HostTensor& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
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
    const std::function<ValueId(GraphBuilder&, std::vector<CheckedInput>&)>& build, uint64_t seed) {
  GraphBuilder b("gradient_check", seed);
  std::vector<CheckedInput> checked;
  const ValueId y = build(b, checked);
  const ValueId r = b.random_weight("R", b.type(y).shape, 1.0f);
  const ValueId prod = b.add(OpType::kMul, "loss_terms", {y, r});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {prod}, {{"keepdims", int64_t{0}}});
  b.output(y);
  b.output(loss);
  const Graph fwd = std::move(b).build();

  Graph bwd = fwd;
  const float one = 1.0f;
  std::vector<std::byte> one_bytes(4);
  std::memcpy(one_bytes.data(), &one, 4);
  const ValueId seed_value =
      bwd.add_constant("loss_grad_seed", {DType::kF32, {}}, std::move(one_bytes));
  std::vector<ValueId> wrt;
  for (const CheckedInput& c : checked) wrt.push_back(c.value);
  for (ValueId g : train::append_gradients(bwd, loss, seed_value, wrt)) bwd.add_output(g);
  verify_graph_or_throw(bwd);

  // Inputs: the checked ones drawn as asked, any other float input uniform.
  std::mt19937_64 rng(seed * 7919 + 1);
  std::vector<HostTensor> inputs;
  for (ValueId v : fwd.inputs()) {
    const Value& val = fwd.value(v);
    if (val.type.dtype != DType::kF32) throw GraphError("gradient_check: inputs must be f32");
    CheckedInput how{v};
    for (const CheckedInput& c : checked)
      if (c.value == v) how = c;
    inputs.push_back(
        f32_tensor(val, draw(how, static_cast<size_t>(element_count(val.type.shape)), rng)));
  }
  const std::vector<float> rv = [&] {
    const auto& bytes = *fwd.value(r).constant;
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }();

  Executor backward(bwd, device);
  const std::vector<HostTensor> outs = backward.run(inputs);
  Executor forward(fwd, device);
  auto loss_at = [&](const std::vector<HostTensor>& in) {
    const std::vector<float> yv = floats(forward.run(in).at(0));
    double l = 0;
    for (size_t i = 0; i < yv.size(); ++i) l += static_cast<double>(rv[i]) * yv[i];
    return l;
  };

  std::vector<GradCheckResult> results;
  const double h = opset::kGradientCheckStep;
  for (size_t k = 0; k < checked.size(); ++k) {
    const auto input_index =
        static_cast<size_t>(std::find(fwd.inputs().begin(), fwd.inputs().end(), checked[k].value) -
                            fwd.inputs().begin());
    const std::vector<float> analytic_all = floats(outs.at(2 + k));
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
      auto* x = reinterpret_cast<float*>(in[input_index].data.data());
      const float x0 = x[i];
      const auto hi = static_cast<float>(x0 + h), lo = static_cast<float>(x0 - h);
      x[i] = hi;
      const double up = loss_at(in);
      x[i] = lo;
      const double down = loss_at(in);
      numeric.push_back((up - down) / (static_cast<double>(hi) - lo));  // the step as stored
      analytic.push_back(analytic_all[i]);
    }
    results.push_back({fwd.value(checked[k].value).name, opset::relative_error(analytic, numeric),
                       static_cast<int>(sample.size())});
  }
  return results;
}

}  // namespace ampx::test
