// Activations kept in oneDNN's blocked layouts between nodes
// (backends/onednn/src/layout_store.hpp): a conv -> relu -> conv -> pool chain
// and the built-in cnn model give the same results with blocked_activations
// on and off, host and device copies of intermediates are current, plain
// writes (copies in, loop kernels, the memory planner reusing a range)
// replace a shadow's value, and the per-launch reorders drop as designed.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <tolerances.hpp>

#include <cstdio>
#include <cstring>

#include "onednn_harness.hpp"

namespace ampx::test {
namespace {

constexpr const char* kOn = "blocked_activations=1;debug_counters=1";
constexpr const char* kOff = "blocked_activations=0;debug_counters=1";

struct Counts {
  unsigned long long total = 0, launch = 0, materialised = 0;
};

// The debug_counters part of plugin_info.note.
Counts counts(const Plugin& p) {
  const std::string note = plugin_note(p);
  const char* at = std::strstr(note.c_str(), "activation reorders: ");
  Counts c;
  EXPECT_NE(at, nullptr) << note;
  if (at) {
    EXPECT_EQ(std::sscanf(at, "activation reorders: %llu (launch %llu, materialised %llu)",
                          &c.total, &c.launch, &c.materialised),
              3)
        << note;
  }
  return c;
}

// conv1 (3 -> 16 channels, 3x3, pad 1) -> relu -> conv2 (16 -> 16) ->
// maxpool 2x2 on [2, 3, 16, 16], every activation at its own offset of one
// arena buffer (as the executor places them), weights constant.
class Chain {
 public:
  enum Value { kX, kConv1, kRelu, kConv2, kPool, kValues };

  explicit Chain(const Plugin& p) : p_(p) {
    Rng rng(7);
    w1_ = random_tensor(rng, AMPX_DTYPE_F32, {16, 3, 3, 3}, 0.5);
    w2_ = random_tensor(rng, AMPX_DTYPE_F32, {16, 16, 3, 3}, 0.25);
    dims_ = {{2, 3, 16, 16}, {2, 16, 16, 16}, {2, 16, 16, 16}, {2, 16, 16, 16}, {2, 16, 8, 8}};
    uint64_t end = 0;
    for (int v = 0; v < kValues; ++v) {
      offset_[v] = end;
      end += bytes(v);
    }
    arena_ = alloc(end);
    wb1_ = upload(w1_);
    wb2_ = upload(w2_);
    nodes_.emplace_back("Conv2d", "conv1");
    nodes_.back()
        .input(AMPX_DTYPE_F32, dims_[kX])
        .input(AMPX_DTYPE_F32, w1_.dims, w1_.bytes.data())
        .output(AMPX_DTYPE_F32, dims_[kConv1])
        .attr_ints("pads", {1, 1, 1, 1});
    nodes_.emplace_back("Relu", "relu");
    nodes_.back().input(AMPX_DTYPE_F32, dims_[kConv1]).output(AMPX_DTYPE_F32, dims_[kRelu]);
    nodes_.emplace_back("Conv2d", "conv2");
    nodes_.back()
        .input(AMPX_DTYPE_F32, dims_[kRelu])
        .input(AMPX_DTYPE_F32, w2_.dims, w2_.bytes.data())
        .output(AMPX_DTYPE_F32, dims_[kConv2])
        .attr_ints("pads", {1, 1, 1, 1});
    nodes_.emplace_back("MaxPool", "pool");
    nodes_.back()
        .input(AMPX_DTYPE_F32, dims_[kConv2])
        .output(AMPX_DTYPE_F32, dims_[kPool])
        .attr_ints("kernel_shape", {2, 2})
        .attr_ints("strides", {2, 2});
    for (auto& n : nodes_) {
      ampx_kernel* k = nullptr;
      p_.ok(p_.api->kernel_prepare(p_.plugin, 0, &n.desc(), &k));
      kernels_.push_back(k);
    }
  }
  ~Chain() {
    for (ampx_kernel* k : kernels_) p_.api->kernel_destroy(k);
    for (ampx_buffer* b : buffers_) p_.api->buffer_free(b);
  }

  uint64_t bytes(int v) const { return static_cast<uint64_t>(numel_of(dims_[v])) * 4; }
  const std::vector<int64_t>& dims(int v) const { return dims_[v]; }
  uint64_t offset(int v) const { return offset_[v]; }
  ampx_buffer* arena() const { return arena_; }

  void write(int v, const Tensor& t) {
    ASSERT_EQ(t.bytes.size(), bytes(v));
    p_.ok(p_.api->copy_to_device(arena_, offset_[v], t.bytes.data(), t.bytes.size()));
  }
  Tensor read(int v) const {
    Tensor t = Tensor::zeros(AMPX_DTYPE_F32, dims_[v]);
    p_.ok(p_.api->copy_to_host(t.bytes.data(), arena_, offset_[v], t.bytes.size()));
    return t;
  }
  // Launches nodes [from, to): 0 conv1, 1 relu, 2 conv2, 3 pool.
  void run(size_t from = 0, size_t to = 4) {
    const ampx_buffer* weights[4] = {wb1_, nullptr, wb2_, nullptr};
    for (size_t i = from; i < to; ++i) {
      std::vector<ampx_buffer_view> in{view(arena_, offset_[i])}, out{view(arena_, offset_[i + 1])};
      if (weights[i]) in.push_back(view(const_cast<ampx_buffer*>(weights[i]), 0));
      p_.ok(p_.api->kernel_launch(kernels_[i], in.data(), in.size(), out.data(), out.size()));
    }
    p_.ok(p_.api->synchronize(p_.plugin, 0));
  }

  ampx_buffer* alloc(uint64_t n) {
    ampx_buffer* b = nullptr;
    p_.ok(p_.api->buffer_alloc(p_.plugin, 0, n, &b));
    buffers_.push_back(b);
    return b;
  }

 private:
  static ampx_buffer_view view(ampx_buffer* b, uint64_t offset) {
    return {sizeof(ampx_buffer_view), b, offset};
  }
  ampx_buffer* upload(const Tensor& t) {
    ampx_buffer* b = alloc(t.bytes.size());
    p_.ok(p_.api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()));
    return b;
  }

  const Plugin& p_;
  Tensor w1_, w2_;
  std::vector<std::vector<int64_t>> dims_;
  uint64_t offset_[kValues] = {};
  ampx_buffer *arena_ = nullptr, *wb1_ = nullptr, *wb2_ = nullptr;
  std::vector<ampx_buffer*> buffers_;
  std::vector<NodeBuilder> nodes_;
  std::vector<ampx_kernel*> kernels_;
};

Tensor input(uint64_t seed) {
  Rng rng(seed);
  return random_tensor(rng, AMPX_DTYPE_F32, {2, 3, 16, 16});
}

TEST(OnednnLayouts, ChainAgreesOnAndOffAndWithCpuRef) {
  Plugin on(plugin_path("onednn"), kOn), off(plugin_path("onednn"), kOff),
      ref(plugin_path("cpu_ref"));
  Chain a(on), b(off), r(ref);
  constexpr int kRuns = 3;
  const Counts on0 = counts(on), off0 = counts(off);
  for (int run = 0; run < kRuns; ++run) {
    const Tensor x = input(100 + run);
    for (Chain* c : {&a, &b, &r}) {
      c->write(Chain::kX, x);
      c->run();
    }
    const Tensor got = a.read(Chain::kPool), plain = b.read(Chain::kPool);
    // The same primitives on the same blocked data: bit for bit.
    expect_bits_equal(got, plain);
    expect_close(got, r.read(Chain::kPool).values(), "blocked chain vs cpu_ref");
  }
  const Counts on1 = counts(on), off1 = counts(off);
  const auto on_launch = on1.launch - on0.launch, on_mat = on1.materialised - on0.materialised;
  const auto on_total = on1.total - on0.total, off_total = off1.total - off0.total;
  // Which layouts oneDNN picks depends on the CPU's ISA (AVX2 blocks by 8,
  // AVX-512 by 16, AMX takes nhwc for f32 convolutions), so the counts
  // themselves differ between machines: on AVX2 blocked takes 1 a run
  // (launch 0) against plain 5; on an AMX CPU launch was 1 a run against
  // plain 4.
  // What holds on every ISA:
  // - plain: conv1's output and conv2's input and output are never plain
  //   NCHW for a 16-channel f32 convolution on any jit ISA, so at least 3
  //   reorders a run, and nothing is ever held blocked;
  EXPECT_GE(off_total, 3u * kRuns);
  EXPECT_EQ(off1.materialised, 0u);
  // - blocked: no reorder between primitives; only the host-written input
  //   may need one into conv1's layout, and the pool output one write-back
  //   to plain for the host's read;
  EXPECT_LE(on_launch, static_cast<unsigned long long>(kRuns));
  EXPECT_LE(on_mat, static_cast<unsigned long long>(kRuns));
  EXPECT_EQ(on_total, on_launch + on_mat);
  // - so keeping activations blocked saves reorders (and the results above
  //   are bit-identical).
  EXPECT_LT(on_total, off_total) << "blocked " << on_total << ", plain " << off_total;
  std::printf(
      "activation reorders per run: blocked %llu (launch %llu, materialised %llu), plain %llu\n",
      on_total / kRuns, on_launch / kRuns, on_mat / kRuns, off_total / kRuns);
}

TEST(OnednnLayouts, CopiesOfIntermediatesAreCurrent) {
  Plugin on(plugin_path("onednn"), kOn), off(plugin_path("onednn"), kOff);
  Chain a(on), b(off);
  for (int run = 0; run < 2; ++run) {  // the second run makes plain stale again
    const Tensor x = input(200 + run);
    a.write(Chain::kX, x);
    b.write(Chain::kX, x);
    a.run();
    b.run();
    for (int v : {Chain::kConv1, Chain::kRelu, Chain::kConv2, Chain::kPool})
      expect_bits_equal(a.read(v), b.read(v));
  }
  // A device-to-device copy of a blocked value (run again: stale plain).
  a.write(Chain::kX, input(202));
  b.write(Chain::kX, input(202));
  a.run();
  b.run();
  ampx_buffer* other = a.alloc(a.bytes(Chain::kConv2));
  on.ok(on.api->copy_device_to_device(other, 0, a.arena(), a.offset(Chain::kConv2),
                                      a.bytes(Chain::kConv2)));
  Tensor copied = Tensor::zeros(AMPX_DTYPE_F32, a.dims(Chain::kConv2));
  on.ok(on.api->copy_to_host(copied.bytes.data(), other, 0, copied.bytes.size()));
  expect_bits_equal(copied, b.read(Chain::kConv2));
}

TEST(OnednnLayouts, PlainWritesReplaceShadowedValues) {
  Plugin on(plugin_path("onednn"), kOn), off(plugin_path("onednn"), kOff);
  Chain a(on), b(off);
  for (Chain* c : {&a, &b}) {
    c->write(Chain::kX, input(300));
    c->run();
  }
  // The memory planner places another value where relu's (blocked) output
  // was: conv2 and pool must see the new bytes, not the old shadow.
  Rng rng(301);
  const Tensor z = random_tensor(rng, AMPX_DTYPE_F32, a.dims(Chain::kRelu));
  for (Chain* c : {&a, &b}) {
    c->write(Chain::kRelu, z);
    c->run(2, 4);
  }
  expect_bits_equal(a.read(Chain::kConv2), b.read(Chain::kConv2));
  expect_bits_equal(a.read(Chain::kPool), b.read(Chain::kPool));
  expect_bits_equal(a.read(Chain::kRelu), z);

  // Half of conv2's range overwritten while its value is only in the
  // shadow: the other half keeps the old value.
  for (Chain* c : {&a, &b}) {
    c->write(Chain::kX, input(302));
    c->run();
  }
  const Tensor before = b.read(Chain::kConv2);
  const uint64_t half = a.bytes(Chain::kConv2) / 2;
  const std::vector<unsigned char> junk(half, 0x3c);
  on.ok(on.api->copy_to_device(a.arena(), a.offset(Chain::kConv2), junk.data(), half));
  Tensor want = before;
  std::memcpy(want.bytes.data(), junk.data(), half);
  expect_bits_equal(a.read(Chain::kConv2), want);
}

// The memory planner reuses a dead value's range piecewise: a stale shadow
// partly overwritten is written back only if a read touches its remaining
// part, never when later writes cover it all.
TEST(OnednnLayouts, PartlyOverwrittenShadowsAreWrittenBackOnlyWhenRead) {
  Plugin on(plugin_path("onednn"), kOn), off(plugin_path("onednn"), kOff);
  Chain a(on), b(off);
  for (Chain* c : {&a, &b}) {
    c->write(Chain::kX, input(500));
    c->run();
  }
  const uint64_t n = a.bytes(Chain::kConv2), q = n / 4;
  const std::vector<unsigned char> ones(q, 0x11), twos(n - q, 0x22);
  // Covered in two writes, then read: the old value is never written back.
  const Counts c0 = counts(on);
  on.ok(on.api->copy_to_device(a.arena(), a.offset(Chain::kConv2) + q, twos.data(), n - q));
  on.ok(on.api->copy_to_device(a.arena(), a.offset(Chain::kConv2), ones.data(), q));
  Tensor want = Tensor::zeros(AMPX_DTYPE_F32, a.dims(Chain::kConv2));
  std::memcpy(want.bytes.data(), ones.data(), q);
  std::memcpy(want.bytes.data() + q, twos.data(), n - q);
  expect_bits_equal(a.read(Chain::kConv2), want);
  EXPECT_EQ(counts(on).materialised, c0.materialised);

  // Its first quarter overwritten, then conv2's consumer (pool, a
  // primitive reading plain since its source has no shadow now) runs: it
  // sees the new quarter and the old rest.
  // conv2's f32 output is held blocked on every jit ISA (as in the chain
  // test), so exactly one write-back merges the old rest.
  for (Chain* c : {&a, &b}) {
    c->write(Chain::kX, input(501));
    c->run();
  }
  const Counts c1 = counts(on);
  Tensor mixed = b.read(Chain::kConv2);
  std::memcpy(mixed.bytes.data(), ones.data(), q);
  on.ok(on.api->copy_to_device(a.arena(), a.offset(Chain::kConv2), ones.data(), q));
  b.write(Chain::kConv2, mixed);
  a.run(3, 4);
  b.run(3, 4);
  EXPECT_EQ(counts(on).materialised, c1.materialised + 1);
  expect_bits_equal(a.read(Chain::kPool), b.read(Chain::kPool));
  expect_bits_equal(a.read(Chain::kConv2), mixed);
}

// A loop kernel (Flatten, not a oneDNN primitive) reads a blocked value and
// writes over another one's range.
TEST(OnednnLayouts, LoopKernelsReadAndOverwriteShadowedValues) {
  Plugin on(plugin_path("onednn"), kOn), off(plugin_path("onednn"), kOff);
  Chain a(on), b(off);
  NodeBuilder flat("Flatten", "flatten");
  flat.input(AMPX_DTYPE_F32, a.dims(Chain::kPool))
      .output(AMPX_DTYPE_F32, {2, 16 * 8 * 8})
      .attr_int("axis", 1);
  for (auto [c, p] : {std::pair{&a, &on}, std::pair{&b, &off}}) {
    c->write(Chain::kX, input(400));
    c->run();
    ampx_kernel* k = nullptr;
    p->ok(p->api->kernel_prepare(p->plugin, 0, &flat.desc(), &k));
    // Into conv1's range, whose value lives in a shadow on `on`.
    const ampx_buffer_view in{sizeof(ampx_buffer_view), c->arena(), c->offset(Chain::kPool)};
    const ampx_buffer_view out{sizeof(ampx_buffer_view), c->arena(), c->offset(Chain::kConv1)};
    p->ok(p->api->kernel_launch(k, &in, 1, &out, 1));
    p->api->kernel_destroy(k);
  }
  expect_bits_equal(a.read(Chain::kConv1), b.read(Chain::kConv1));
  Tensor pool = b.read(Chain::kPool);
  Tensor head = a.read(Chain::kConv1);
  head.bytes.resize(pool.bytes.size());
  EXPECT_EQ(head.bytes, pool.bytes);
}

TEST(OnednnLayouts, NoHostPointerWhileBuffersMayBeStale) {
  Plugin on(plugin_path("onednn")), off(plugin_path("onednn"), "blocked_activations=0");
  for (const Plugin* p : {&on, &off}) {
    ampx_buffer* b = nullptr;
    p->ok(p->api->buffer_alloc(p->plugin, 0, 100, &b));
    void* host = p->api->buffer_host_ptr(b);
    if (p == &on) {
      EXPECT_EQ(host, nullptr) << "blocked activations are on by default";
    } else {
      ASSERT_NE(host, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
    }
    p->api->buffer_free(b);
  }
}

// A plugin host over the build tree with these onednn options.
std::unique_ptr<plugins::PluginHost> host_with(const char* options) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  opts.plugin_options["onednn"] = options;
  return std::make_unique<plugins::PluginHost>(opts);
}

// The built-in cnn through the planner and executor (the memory planner's
// arena reuse included), fused and unfused, blocked against plain.
TEST(OnednnLayouts, CnnModelAgreesOnAndOff) {
  const auto on = host_with(kOn), off = host_with(kOff);
  const Graph g = make_builtin_model("cnn");
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities caps(on->device("onednn:0"));
  const AmpPlan plan = plan_amp(g, o0, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  const auto ref = Executor(plan.graph, on->device("cpu_ref:0")).run(random_inputs(g, 13));
  for (const Graph* graph : {&plan.graph, &fused.graph}) {
    Executor eon(*graph, on->device("onednn:0")), eoff(*graph, off->device("onednn:0"));
    for (uint64_t seed : {13, 14}) {
      const auto inputs = random_inputs(g, seed);
      const auto a = eon.run(inputs), b = eoff.run(inputs);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_LT(max_relative_error(a[i], b[i]), model_tolerance(AMPX_DTYPE_F32));
        if (seed == 13) {
          EXPECT_LT(max_relative_error(a[i], ref[i]), model_tolerance(AMPX_DTYPE_F32));
        }
      }
    }
  }
}

// The ops that follow a blocked source since the ONNX Runtime comparison:
// Concat of two convolutions (chunk copies, concat_kernel.hpp), a
// squeeze-excitation Mul whose [1, C, 1, 1] gate comes from a convolution,
// a residual Add, and a linear Resize of a convolution's output (channel
// counts that are and are not multiples of the block). Blocked and plain
// agree, and both agree with cpu_ref, fused and unfused.
Graph branchy_model() {
  GraphBuilder b("branchy");
  const ValueId x = b.input("x", DType::kF32, {1, 3, 12, 12});
  const ValueId a = b.unary(OpType::kRelu, "relu_a", b.conv2d("conv_a", x, 16, 3, 1, 1));
  const ValueId c = b.conv2d("conv_b", x, 8, 3, 1, 1);
  const ValueId cat = b.add(OpType::kConcat, "cat", {a, c}, {{"axis", int64_t{1}}});
  const ValueId m = b.conv2d("conv_m", cat, 24, 1);
  const ValueId pooled = b.add(OpType::kGlobalAveragePool, "gap", {m});
  const ValueId gate = b.unary(OpType::kSigmoid, "gate", b.conv2d("conv_gate", pooled, 24, 1));
  const ValueId se = b.add(OpType::kMul, "se", {m, gate});
  const ValueId res = b.add(OpType::kAdd, "residual", {se, m});
  const ValueId head = b.conv2d("conv_head", res, 5, 1);
  b.output(b.add(OpType::kResize, "up", {head},
                 {{"sizes", std::vector<int64_t>{1, 5, 24, 24}},
                  {"mode", std::string("linear")},
                  {"coordinate_transformation_mode", std::string("half_pixel")}}));
  b.output(b.add(
      OpType::kMaxPool, "pool", {res},
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}));
  return std::move(b).build();
}

// `g` at O0 on onednn:0, unfused and fused, blocked activations on and off,
// against each other and cpu_ref, for two seeds.
void expect_blocked_plain_and_ref_agree(const Graph& g, size_t outputs, uint64_t seed) {
  const auto on = host_with(kOn), off = host_with(kOff);
  DeviceCapabilities caps(on->device("onednn:0"));
  const AmpPlan plan = plan_amp(g, AmpPolicy{}, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  for (const Graph* graph : {&plan.graph, &fused.graph}) {
    Executor eon(*graph, on->device("onednn:0")), eoff(*graph, off->device("onednn:0"));
    Executor eref(plan.graph, on->device("cpu_ref:0"));
    for (uint64_t s : {seed, seed + 1}) {
      const auto inputs = random_inputs(g, s);
      const auto a = eon.run(inputs), b = eoff.run(inputs), r = eref.run(inputs);
      ASSERT_EQ(a.size(), outputs);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_LT(max_relative_error(a[i], b[i]), model_tolerance(AMPX_DTYPE_F32)) << i;
        EXPECT_LT(max_relative_error(a[i], r[i]), model_tolerance(AMPX_DTYPE_F32)) << i;
      }
    }
  }
}

TEST(OnednnLayouts, ConcatBinaryAndResizeFollowBlockedSources) {
  expect_blocked_plain_and_ref_agree(branchy_model(), 2, 21);
}

// Pooling on blocked sources (pool_kernel.hpp): max with padding and
// ceil_mode after 12 channels (not a multiple of the block), averages with
// and without the padding counted, a global average, each following a
// convolution's blocked output. Blocked and plain agree, and both agree
// with cpu_ref.
Graph pooling_model() {
  GraphBuilder b("pools");
  const ValueId x = b.input("x", DType::kF32, {2, 3, 15, 15});
  const ValueId a = b.unary(OpType::kRelu, "relu_a", b.conv2d("conv_a", x, 12, 3, 1, 1));
  const ValueId m = b.add(OpType::kMaxPool, "max", {a},
                          {{"kernel_shape", std::vector<int64_t>{3, 3}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                           {"ceil_mode", int64_t{1}}});
  const ValueId c = b.conv2d("conv_c", m, 16, 3, 1, 1);
  b.output(b.add(OpType::kAveragePool, "avg_in", {c},
                 {{"kernel_shape", std::vector<int64_t>{3, 3}},
                  {"strides", std::vector<int64_t>{2, 2}},
                  {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                  {"count_include_pad", int64_t{1}}}));
  b.output(b.add(OpType::kAveragePool, "avg_ex", {c},
                 {{"kernel_shape", std::vector<int64_t>{2, 2}},
                  {"strides", std::vector<int64_t>{2, 2}},
                  {"ceil_mode", int64_t{1}}}));
  b.output(b.add(OpType::kGlobalAveragePool, "gap", {b.conv2d("conv_g", c, 20, 1)}));
  return std::move(b).build();
}

TEST(OnednnLayouts, PoolingFollowsBlockedSources) {
  expect_blocked_plain_and_ref_agree(pooling_model(), 3, 31);
}

}  // namespace
}  // namespace ampx::test
