// The kernel reports (ABI 1.4, AMPX_EXTENSION_KERNEL_INFO) that profiles
// show per node: a convolution names its oneDNN primitive and
// implementation, a loop says it is one, and a reorder is reported by the
// launch that ran it (the one that read a blocked value as plain bytes),
// in step with the plugin's own reorder counters.
#include <cstdio>
#include <cstring>
#include <string>

#include "onednn_harness.hpp"

namespace ampx::test {
namespace {

const ampx_kernel_info_extension* kernel_info(const Plugin& p) {
  for (const ampx_extension* e = p.api->extensions; e; e = e->next)
    if (e->type == AMPX_EXTENSION_KERNEL_INFO)
      return reinterpret_cast<const ampx_kernel_info_extension*>(e);
  return nullptr;
}

ampx_kernel_report report(const Plugin& p, ampx_kernel* k) {
  ampx_kernel_report r{};
  r.struct_size = sizeof r;
  const ampx_kernel_info_extension* ext = kernel_info(p);
  if (!ext) {
    ADD_FAILURE() << "no kernel-info extension";
    return r;
  }
  p.ok(ext->kernel_report(k, &r));
  return r;
}

// debug_counters=1's "activation reorders: N" in the note.
unsigned long long reorders_so_far(const Plugin& p) {
  const std::string note = plugin_note(p);
  const char* at = std::strstr(note.c_str(), "activation reorders: ");
  unsigned long long n = 0;
  EXPECT_TRUE(at && std::sscanf(at, "activation reorders: %llu", &n) == 1) << note;
  return n;
}

ampx_buffer_view view(ampx_buffer* b, uint64_t offset) {
  return {sizeof(ampx_buffer_view), b, offset};
}

// conv [2, 3, 16, 16] -> [2, 16, 16, 16] (3x3, pad 1, constant weights),
// then Flatten, a loop kernel, reading the convolution's output.
struct ConvThenLoop {
  explicit ConvThenLoop(const Plugin& p) : p(p) {
    Rng rng(3);
    w = random_tensor(rng, AMPX_DTYPE_F32, {16, 3, 3, 3}, 0.5);
    conv.input(AMPX_DTYPE_F32, {2, 3, 16, 16})
        .input(AMPX_DTYPE_F32, w.dims, w.bytes.data())
        .output(AMPX_DTYPE_F32, {2, 16, 16, 16})
        .attr_ints("pads", {1, 1, 1, 1});
    flat.input(AMPX_DTYPE_F32, {2, 16, 16, 16})
        .output(AMPX_DTYPE_F32, {2, 4096})
        .attr_int("axis", 1);
    p.ok(p.api->kernel_prepare(p.plugin, 0, &conv.desc(), &kconv));
    p.ok(p.api->kernel_prepare(p.plugin, 0, &flat.desc(), &kflat));
    for (ampx_buffer** b : {&x, &wb, &y, &z}) p.ok(p.api->buffer_alloc(p.plugin, 0, 1 << 17, b));
    const Tensor in = random_tensor(rng, AMPX_DTYPE_F32, {2, 3, 16, 16});
    p.ok(p.api->copy_to_device(x, 0, in.bytes.data(), in.bytes.size()));
    p.ok(p.api->copy_to_device(wb, 0, w.bytes.data(), w.bytes.size()));
  }
  ~ConvThenLoop() {
    for (ampx_kernel* k : {kconv, kflat}) p.api->kernel_destroy(k);
    for (ampx_buffer* b : {x, wb, y, z}) p.api->buffer_free(b);
  }
  void run_conv() {
    const ampx_buffer_view in[2] = {view(x, 0), view(wb, 0)}, out[1] = {view(y, 0)};
    p.ok(p.api->kernel_launch(kconv, in, 2, out, 1));
  }
  void run_flatten() {
    const ampx_buffer_view in[1] = {view(y, 0)}, out[1] = {view(z, 0)};
    p.ok(p.api->kernel_launch(kflat, in, 1, out, 1));
  }

  const Plugin& p;
  Tensor w;
  NodeBuilder conv{"Conv2d", "conv"}, flat{"Flatten", "flatten"};
  ampx_kernel *kconv = nullptr, *kflat = nullptr;
  ampx_buffer *x = nullptr, *wb = nullptr, *y = nullptr, *z = nullptr;
};

TEST(OnednnKernelReport, AConvolutionNamesItsImplementationAndALoopSaysSo) {
  Plugin p(plugin_path("onednn"), "debug_counters=1");
  ASSERT_GE(p.api->abi_minor, 4u);
  ASSERT_NE(kernel_info(p), nullptr);
  ConvThenLoop g(p);
  // Before any launch: what it will run on, and no reorders yet.
  ampx_kernel_report r = report(p, g.kconv);
  EXPECT_EQ(r.struct_size, sizeof r);
  EXPECT_EQ(std::string(r.implementation).rfind("convolution_forward ", 0), 0u) << r.implementation;
  // oneDNN's implementation name follows: "jit:avx2", "brgconv:avx512_core", "gemm:jit" ...
  EXPECT_NE(std::string(r.implementation).find(':'), std::string::npos) << r.implementation;
  EXPECT_EQ(r.reorders, 0u);
  g.run_conv();
  g.run_flatten();
  EXPECT_EQ(std::string(report(p, g.kflat).implementation), "loop: reference kernel");
  // NULL arguments are the caller's error, not a crash.
  const ampx_kernel_info_extension* ext = kernel_info(p);
  ampx_status* st = ext->kernel_report(nullptr, &r);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(p.api->status_code(st), AMPX_STATUS_INVALID_ARGUMENT);
  p.api->status_destroy(st);
}

TEST(OnednnKernelReport, AReorderCountsForTheLaunchThatRanIt) {
  // Blocked activations: the convolution writes its output in its own
  // layout, and the loop that reads it as plain bytes has it written back
  // first: that reorder is the loop's.
  Plugin p(plugin_path("onednn"), "debug_counters=1");
  ConvThenLoop g(p);
  for (int run = 0; run < 2; ++run) {
    const unsigned long long before = reorders_so_far(p);
    g.run_conv();
    const ampx_kernel_report conv = report(p, g.kconv);
    const unsigned long long after_conv = reorders_so_far(p);
    g.run_flatten();
    const ampx_kernel_report flat = report(p, g.kflat);
    const unsigned long long after_flat = reorders_so_far(p);
    // Each launch reports exactly the reorders the plugin counted during it.
    EXPECT_EQ(conv.reorders, after_conv - before);
    EXPECT_EQ(flat.reorders, after_flat - after_conv);
    EXPECT_GT(flat.reorders, 0u) << "the convolution's " << conv.implementation
                                 << " output is read as plain bytes";
    EXPECT_GT(flat.reorder_us, 0.0);
    EXPECT_EQ(flat.casts, 0u) << "f32 throughout";
  }
  // Plain activations: the convolution reorders in and out around itself
  // wherever its layout is not plain, and the loop reads plain bytes.
  Plugin plain(plugin_path("onednn"), "blocked_activations=0;debug_counters=1");
  ConvThenLoop h(plain);
  const unsigned long long before = reorders_so_far(plain);
  h.run_conv();
  const ampx_kernel_report conv = report(plain, h.kconv);
  EXPECT_EQ(conv.reorders, reorders_so_far(plain) - before) << conv.implementation;
  h.run_flatten();
  EXPECT_EQ(report(plain, h.kflat).reorders, 0u);
}

TEST(OnednnKernelReport, CpuRefReportsItsLoops) {
  Plugin p(plugin_path("cpu_ref"));
  ASSERT_NE(kernel_info(p), nullptr);
  ConvThenLoop g(p);
  g.run_conv();
  const ampx_kernel_report r = report(p, g.kconv);
  EXPECT_EQ(std::string(r.implementation), "loop: reference kernel");
  EXPECT_EQ(r.reorders, 0u);
}

}  // namespace
}  // namespace ampx::test
