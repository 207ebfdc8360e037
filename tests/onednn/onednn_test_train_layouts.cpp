// Training steps keep activations blocked (issue 37, "Layouts that stay
// blocked through the whole step"): the CIFAR-shaped CNN with BatchNorm in
// training mode, its whole compiled step (forward, backward, SGD) on
// onednn:0, at O0 and at O2 bf16 (bf16 only where the plugin answers it
// native; f32 otherwise). debug_counters=1's reorder counters per step
// (plugin_info.note): no "round trip", i.e. no value that was blocked is
// reordered from plain into a blocked layout again for another primitive
// (LayoutStore::round_trip_source). Also run under ONEDNN_MAX_CPU_ISA=AVX2
// (the .avx2 copies, tests/onednn/CMakeLists.txt).
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/train/training_graph.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>

#include <tolerances.hpp>

#include "cifar_cnn.hpp"
#include "onednn_harness.hpp"

namespace ampx::test {
namespace {

using namespace ampx::train;

struct StepCounts {
  unsigned long long total = 0, launch = 0, materialised = 0, round_trips = 0;
};

StepCounts counts(const plugins::Device& d) {
  const std::string note = d.plugin_note();
  StepCounts c;
  const char* at = std::strstr(note.c_str(), "activation reorders: ");
  EXPECT_NE(at, nullptr) << note;
  if (at) {
    EXPECT_EQ(std::sscanf(at,
                          "activation reorders: %llu (launch %llu, materialised %llu, round "
                          "trips %llu)",
                          &c.total, &c.launch, &c.materialised, &c.round_trips),
              4)
        << note;
  }
  return c;
}

// Per step (the second of two: the first makes the variants), for `policy`.
StepCounts step_counts(const AmpPolicy& policy, const char* name) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  opts.plugin_options["onednn"] = "debug_counters=1";
  const plugins::PluginHost host(opts);
  const plugins::Device& dev = host.device("onednn:0");
  TrainingGraphOptions to;
  to.optimizer.kind = OptimizerKind::kSgd;
  to.optimizer.lr = 0.01;
  to.optimizer.momentum = 0.9;
  const TrainingGraph tg = build_training_graph(cifar_cnn(), to);
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(tg.step, policy, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  std::vector<StateBinding> bindings;
  for (const StateEntry& e : tg.state) bindings.push_back(e.binding);
  Executor ex(fused.graph, dev, bindings);
  for (size_t i = 0; i < tg.state.size(); ++i) ex.write_state(i, tg.state[i].initial.data);
  std::vector<HostTensor> inputs = random_inputs(tg.step, 5);
  inputs.resize(tg.data_inputs);
  for (HostTensor& t : inputs) {
    if (t.name == "labels") {
      auto* y = reinterpret_cast<int64_t*>(t.data.data());
      for (size_t i = 0; i < t.data.size() / 8; ++i) y[i] = static_cast<int64_t>(i % 10);
    }
    if (t.name == "hyper") t = hyper_tensor(to.optimizer, 1);
    if (t.name == "loss_scale") t = loss_scale_tensor(1.0);
  }
  ex.run(inputs);
  const StepCounts a = counts(dev);
  const auto out = ex.run(inputs);
  const StepCounts b = counts(dev);
  StepCounts d{b.total - a.total, b.launch - a.launch, b.materialised - a.materialised,
               b.round_trips - a.round_trips};
  std::cout << "[ reorders ] " << name << " (" << dev.plugin_note().substr(0, 24)
            << "...): per step " << d.total << " (launch " << d.launch << ", materialised "
            << d.materialised << "), round trips " << d.round_trips << "\n";
  EXPECT_FALSE(out.empty());
  return d;
}

TEST(OnednnTrainLayouts, CifarCnnStepHasNoPlainRoundTripsAtO0) {
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  EXPECT_EQ(step_counts(o0, "O0 f32").round_trips, 0u);
}

TEST(OnednnTrainLayouts, CifarCnnStepHasNoPlainRoundTripsAtO2Bf16) {
  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  o2.half = DType::kBF16;
  EXPECT_EQ(step_counts(o2, "O2 bf16").round_trips, 0u);
}

// ------------------------------------------------ BatchNorm in blocked layouts

// A convolution (whose output oneDNN leaves in a blocked shadow: nChw16c,
// nChw8c or nhwc), then BatchNormTraining and BatchNormGrad of its output,
// each tensor in a buffer of its own, launched through the C ABI. On
// onednn:0 both BatchNorms take X from the convolution's shadow (nothing is
// written back to plain before the outputs are read) and leave Y and dX in
// shadows; cpu_ref:0 runs the same nodes.
class BnChain {
 public:
  // Outputs, in order: Y, running mean, running var, saved mean, saved
  // invstd, dX, dScale, dBias.
  static constexpr int kOutputs = 8;

  BnChain(const Plugin& p, ampx_dtype dt, const std::vector<int64_t>& x_dims, int64_t channels)
      : p_(p) {
    Rng rng(17);
    const int64_t n = x_dims[0], h = x_dims[2], w = x_dims[3], c = channels;
    const std::vector<int64_t> a_dims{n, c, h, w}, vec{c};
    w_ = random_tensor(rng, dt, {c, x_dims[1], 3, 3}, 0.5);
    inputs_ = {random_tensor(rng, dt, x_dims),
               random_tensor(rng, dt, vec),
               random_tensor(rng, dt, vec, 0.1),
               random_tensor(rng, dt, vec, 0.1),
               Tensor::of(dt, vec, std::vector<double>(static_cast<size_t>(c), 0.75)),
               random_tensor(rng, dt, a_dims)};
    // x, scale, bias, running mean, running var, dY.
    for (const Tensor& t : inputs_) in_.push_back(upload(t));
    a_ = alloc(Tensor::zeros(dt, a_dims).bytes.size());
    const std::vector<std::vector<int64_t>> out_dims{a_dims, vec, vec, vec, vec, a_dims, vec, vec};
    for (const auto& d : out_dims) {
      outs_.push_back(Tensor::zeros(dt, d));
      out_.push_back(alloc(outs_.back().bytes.size()));
    }
    nodes_.emplace_back("Conv2d", "conv");
    nodes_.back()
        .input(dt, x_dims)
        .input(dt, w_.dims, w_.bytes.data())
        .output(dt, a_dims)
        .attr_ints("pads", {1, 1, 1, 1});
    nodes_.emplace_back("BatchNormTraining", "bn");
    nodes_.back().input(dt, a_dims).input(dt, vec).input(dt, vec).input(dt, vec).input(dt, vec);
    nodes_.back().output(dt, a_dims);
    for (int i = 0; i < 4; ++i) nodes_.back().output(dt, vec);
    nodes_.back().attr_float("momentum", 0.9).attr_float("epsilon", 1e-3);
    nodes_.emplace_back("BatchNormGrad", "bn_grad");
    nodes_.back().input(dt, a_dims).input(dt, a_dims).input(dt, vec).input(dt, vec).input(dt, vec);
    nodes_.back().output(dt, a_dims).output(dt, vec).output(dt, vec);
    for (auto& nb : nodes_) {
      ampx_kernel* k = nullptr;
      p_.ok(p_.api->kernel_prepare(p_.plugin, 0, &nb.desc(), &k));
      kernels_.push_back(k);
    }
  }
  ~BnChain() {
    for (ampx_kernel* k : kernels_) p_.api->kernel_destroy(k);
    for (ampx_buffer* b : buffers_) p_.api->buffer_free(b);
  }

  bool supported() const {
    for (const ampx_kernel* k : kernels_)
      if (!k) return false;
    return true;
  }
  // Launches the three nodes (no read-back).
  void run() {
    launch(0, {in_[0], w_buf()}, {a_});
    launch(1, {a_, in_[1], in_[2], in_[3], in_[4]}, {out_[0], out_[1], out_[2], out_[3], out_[4]});
    launch(2, {in_[5], a_, in_[1], out_[3], out_[4]}, {out_[5], out_[6], out_[7]});
    p_.ok(p_.api->synchronize(p_.plugin, 0));
  }
  std::vector<Tensor> read() {
    for (int i = 0; i < kOutputs; ++i)
      p_.ok(p_.api->copy_to_host(outs_[i].bytes.data(), out_[i], 0, outs_[i].bytes.size()));
    return outs_;
  }

 private:
  ampx_buffer* alloc(uint64_t n) {
    ampx_buffer* b = nullptr;
    p_.ok(p_.api->buffer_alloc(p_.plugin, 0, n, &b));
    buffers_.push_back(b);
    return b;
  }
  ampx_buffer* upload(const Tensor& t) {
    ampx_buffer* b = alloc(t.bytes.size());
    p_.ok(p_.api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()));
    return b;
  }
  ampx_buffer* w_buf() {
    if (!wb_) wb_ = upload(w_);
    return wb_;
  }
  void launch(size_t k, std::vector<ampx_buffer*> in, std::vector<ampx_buffer*> out) {
    std::vector<ampx_buffer_view> iv, ov;
    for (ampx_buffer* b : in) iv.push_back({sizeof(ampx_buffer_view), b, 0});
    for (ampx_buffer* b : out) ov.push_back({sizeof(ampx_buffer_view), b, 0});
    p_.ok(p_.api->kernel_launch(kernels_[k], iv.data(), iv.size(), ov.data(), ov.size()));
  }

  const Plugin& p_;
  Tensor w_;
  std::vector<Tensor> inputs_, outs_;
  std::vector<ampx_buffer*> in_, out_, buffers_;
  ampx_buffer *a_ = nullptr, *wb_ = nullptr;
  std::vector<NodeBuilder> nodes_;
  std::vector<ampx_kernel*> kernels_;
};

const char* const kOutputNames[BnChain::kOutputs] = {
    "Y", "running mean", "running var", "saved mean", "saved invstd", "dX", "dScale", "dBias"};

long long materialised(const Plugin& p) {
  const std::string note = plugin_note(p);
  const char* at = std::strstr(note.c_str(), "materialised ");
  long long n = -1;
  if (!at || std::sscanf(at, "materialised %lld", &n) != 1) ADD_FAILURE() << note;
  return n;
}

// Blocked BatchNorm training and backward against cpu_ref, at the op set's
// tolerances, in f32 and in bf16 where the convolution and both BatchNorms
// are native (from AVX-512 on): X is never written back to plain.
TEST(OnednnBlockedBatchNorm, TrainingAndBackwardMatchCpuRef) {
  Plugin onednn(plugin_path("onednn"), "debug_counters=1"), ref(plugin_path("cpu_ref"));
  for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_BF16}) {
    SCOPED_TRACE(dtype_str(dt));
    {
      NodeBuilder probe("BatchNormGrad", "bn_grad");
      probe.input(dt, {4, 16, 8, 8}).input(dt, {4, 16, 8, 8}).input(dt, {16});
      probe.input(dt, {16}).input(dt, {16}).output(dt, {4, 16, 8, 8}).output(dt, {16});
      probe.output(dt, {16});
      NodeBuilder conv("Conv2d", "conv");
      conv.input(dt, {4, 3, 8, 8}).input(dt, {16, 3, 3, 3}).output(dt, {4, 16, 8, 8});
      conv.attr_ints("pads", {1, 1, 1, 1});
      if (dt != AMPX_DTYPE_F32 && (onednn.capability(probe).support != AMPX_SUPPORT_NATIVE ||
                                   onednn.capability(conv).support != AMPX_SUPPORT_NATIVE)) {
        std::cout << "[ skipped  ] bf16: not native here\n";
        continue;
      }
    }
    for (int64_t channels : {16, 11}) {  // 11: a blocked layout with padded lanes
      SCOPED_TRACE(std::to_string(channels) + " channels");
      BnChain a(onednn, dt, {4, 3, 8, 8}, channels), r(ref, dt, {4, 3, 8, 8}, channels);
      ASSERT_TRUE(a.supported() && r.supported());
      for (int run = 0; run < 2; ++run) {
        const long long before = materialised(onednn);
        a.run();
        EXPECT_EQ(materialised(onednn), before) << "a value was written back to plain";
        r.run();
        const auto got = a.read(), want = r.read();
        for (int i = 0; i < BnChain::kOutputs; ++i)
          expect_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)].values(),
                       kOutputNames[i]);
      }
    }
  }
}

// docs/OPS.md's thread-count promise for the blocked variants: the same
// bits at 1, 2 and 3 threads (shapes above the one-thread bound), and each
// threaded plugin checked both variants against their one-thread builds
// (made at the first launch, after the kernels' own checks at prepare).
// (selfcheck_perturb=1 cannot reach a variant's check: it pins the kernel
// at prepare already, and a pinned kernel's variants are one-thread.)
TEST(OnednnBlockedBatchNorm, SameBitsAtEveryThreadCount) {
  Plugin one(plugin_path("onednn"), "threads=1;debug_counters=1");
  Plugin two(plugin_path("onednn"), "threads=2;debug_counters=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1");
  const std::vector<int64_t> x{16, 8, 16, 16};
  BnChain c1(one, AMPX_DTYPE_F32, x, 32);
  c1.run();
  const auto want = c1.read();
  for (const Plugin* p : {&two, &three}) {
    BnChain c(*p, AMPX_DTYPE_F32, x, 32);
    const long long checked = note_number(*p, "checked "), pinned = note_number(*p, "pinned ");
    c.run();
    std::cout << "[ threads  ] blocked BatchNorm variants at " << plugin_note(*p).substr(0, 40)
              << "...: checked " << note_number(*p, "checked ") - checked << ", pinned "
              << note_number(*p, "pinned ") - pinned << "\n";
    EXPECT_GE(note_number(*p, "checked "), checked + 2) << plugin_note(*p);
    const auto got = c.read();
    for (int i = 0; i < BnChain::kOutputs; ++i) {
      SCOPED_TRACE(kOutputNames[i]);
      expect_bits_equal(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]);
    }
  }
}

}  // namespace
}  // namespace ampx::test
