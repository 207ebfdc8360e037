// The built plugins, loaded through the C ABI exactly as a host would.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "harness.hpp"
#include "loaded_plugin.hpp"
#include "run_on_plugin.hpp"
#include "scoped_env.hpp"

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
constexpr ampx_dtype F16 = AMPX_DTYPE_F16;
constexpr ampx_dtype BF16 = AMPX_DTYPE_BF16;

std::string cpu_ref_path() {
  return std::string(AMPX_PLUGIN_BUILD_DIR) + "/libampx_backend_cpu_ref.so";
}
std::string test_native_path() {
  return std::string(AMPX_TEST_PLUGIN_DIR) + "/libampx_backend_test_native.so";
}

NodeBuilder relu(ampx_dtype dt, std::vector<int64_t> dims = {4, 8}) {
  NodeBuilder b("Relu", "relu");
  b.input(dt, dims).output(dt, dims);
  return b;
}

NodeBuilder matmul(ampx_dtype dt) {
  NodeBuilder b("MatMul", "mm");
  b.input(dt, {16, 64}).input(dt, {64, 32}).output(dt, {16, 32});
  return b;
}

TEST(PluginAbi, TableAndInfo) {
  Plugin p(cpu_ref_path());
  const ampx_plugin_api* api = p.api;
  EXPECT_GE(api->struct_size, AMPX_PLUGIN_API_MIN_SIZE_V1);
  EXPECT_EQ(api->abi_major, static_cast<uint32_t>(AMPX_ABI_VERSION_MAJOR));
  EXPECT_STREQ(api->plugin_name, "cpu_ref");
  EXPECT_STREQ(api->plugin_version, "1.0.0");
  EXPECT_NE(api->buffer_host_ptr, nullptr);

  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(api->plugin_info(p.plugin, &info));
  EXPECT_STREQ(info.library, "ampx reference kernels");
  EXPECT_EQ(info.struct_size, sizeof info);

  int32_t n = -1;
  p.ok(api->device_count(p.plugin, &n));
  EXPECT_EQ(n, 1);
  ampx_device_props props{};
  p.ok(api->device_props(p.plugin, 0, &props));  // struct_size 0: filled in full
  EXPECT_EQ(props.struct_size, sizeof props);
  EXPECT_EQ(props.type, AMPX_DEVICE_CPU);
  EXPECT_GT(props.compute_units, 0);
  EXPECT_GT(props.memory_bytes, 0u);
  EXPECT_STREQ(props.driver_version, "1.0.0");
  const std::string fp = props.fingerprint;
  EXPECT_EQ(fp.rfind("cpu_ref/1.0.0/", 0), 0u) << fp;
  EXPECT_EQ(fp.find(' '), std::string::npos) << fp;
  EXPECT_EQ(std::string(props.name).rfind("Reference CPU (", 0), 0u) << props.name;
  p.fails(api->device_props(p.plugin, 1, &props), AMPX_STATUS_INVALID_ARGUMENT, "device");

  // A second instance reports the same fingerprint.
  ampx_plugin* other = nullptr;
  p.ok(api->plugin_create(nullptr, &other));
  ampx_device_props props2{};
  p.ok(api->device_props(other, 0, &props2));
  EXPECT_STREQ(props2.fingerprint, props.fingerprint);
  api->plugin_destroy(other);
}

TEST(PluginAbi, OlderHostOutStructIsNotOverrun) {
  Plugin p(cpu_ref_path());
  // A host whose ampx_capability ended after `support`.
  struct {
    ampx_capability cap;
    unsigned char guard[8];
  } mem;
  std::memset(&mem, 0xab, sizeof mem);
  mem.cap.struct_size = offsetof(ampx_capability, cost_us);
  NodeBuilder b = relu(F32);
  p.ok(p.api->query_capability(p.plugin, 0, &b.desc(), &mem.cap));
  EXPECT_EQ(mem.cap.support, AMPX_SUPPORT_NATIVE);
  const auto* raw = reinterpret_cast<const unsigned char*>(&mem.cap);
  for (size_t i = offsetof(ampx_capability, cost_us); i < sizeof mem; ++i)
    EXPECT_EQ(raw[i], 0xab) << i;
}

TEST(PluginAbi, CapabilityAnswers) {
  Plugin p(cpu_ref_path());
  NodeBuilder f32 = matmul(F32), f16 = matmul(F16), bf16 = matmul(BF16);
  const ampx_capability c32 = p.capability(f32);
  EXPECT_EQ(c32.support, AMPX_SUPPORT_NATIVE);
  EXPECT_GT(c32.cost_us, 0);
  EXPECT_EQ(c32.struct_size, sizeof c32);
  const ampx_capability c16 = p.capability(f16);
  EXPECT_EQ(c16.support, AMPX_SUPPORT_EMULATED);
  EXPECT_STREQ(c16.note, "16-bit storage, f32 compute");
  EXPECT_GT(c16.cost_us, 0);
  EXPECT_EQ(p.capability(bf16).support, AMPX_SUPPORT_EMULATED);

  NodeBuilder cast("Cast", "cast");
  cast.input(F32, {4}).output(AMPX_DTYPE_I64, {4}).attr_int("to", AMPX_DTYPE_I64);
  EXPECT_EQ(p.capability(cast).support, AMPX_SUPPORT_NATIVE);
  NodeBuilder cast16("Cast", "cast");
  cast16.input(F32, {4}).output(F16, {4}).attr_int("to", F16);
  EXPECT_EQ(p.capability(cast16).support, AMPX_SUPPORT_EMULATED);

  NodeBuilder unknown("Mystery", "m");
  unknown.input(F32, {4}).output(F32, {4});
  const ampx_capability cu = p.capability(unknown);
  EXPECT_EQ(cu.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_STREQ(cu.note, "unknown op type");
  NodeBuilder bad("Relu", "r");
  bad.input(AMPX_DTYPE_I32, {4}).output(AMPX_DTYPE_I32, {4});
  EXPECT_EQ(p.capability(bad).support, AMPX_SUPPORT_UNSUPPORTED);

  // cpu_ref runs the reference kernels' float64 mode: every float op in f64,
  // but the updates stay f32 only.
  NodeBuilder f64 = matmul(AMPX_DTYPE_F64);
  EXPECT_EQ(p.capability(f64).support, AMPX_SUPPORT_NATIVE);
  NodeBuilder sgd("SgdUpdate", "sgd");
  sgd.input(AMPX_DTYPE_F64, {4})
      .input(AMPX_DTYPE_F64, {4})
      .input(AMPX_DTYPE_F64, {3})
      .output(AMPX_DTYPE_F64, {4});
  EXPECT_EQ(p.capability(sgd).support, AMPX_SUPPORT_UNSUPPORTED);
}

TEST(PluginAbi, RunsAnF64MatMul) {
  Plugin p(cpu_ref_path());
  Rng rng(5);
  NodeBuilder nb = matmul(AMPX_DTYPE_F64);
  const Tensor a = random_tensor(rng, AMPX_DTYPE_F64, {16, 64});
  const Tensor b = random_tensor(rng, AMPX_DTYPE_F64, {64, 32});
  const std::vector<Tensor> got = run_on(p, nb, {a, b});
  ASSERT_EQ(got.size(), 1u);
  std::vector<double> ref(16 * 32, 0.0);
  for (size_t i = 0; i < 16; ++i)
    for (size_t j = 0; j < 32; ++j)
      for (size_t k = 0; k < 64; ++k) ref[i * 32 + j] += a.get(i * 64 + k) * b.get(k * 32 + j);
  EXPECT_LE(relative_error(got[0].values(), ref), tolerance(AMPX_DTYPE_F64));
}

TEST(PluginAbi, RunsANodeEndToEnd) {
  Plugin p(cpu_ref_path());
  const ampx_plugin_api* api = p.api;
  Rng rng(3);
  for (ampx_dtype dt : {F32, F16}) {
    NodeBuilder nb = matmul(dt);
    const Tensor a = random_tensor(rng, dt, {16, 64}), b = random_tensor(rng, dt, {64, 32});
    const uint64_t na = a.bytes.size(), nbb = b.bytes.size(), ny = 16 * 32 * elem_size(dt);
    // One arena holding A, B and Y at offsets, as the executor packs them.
    ampx_buffer* arena = nullptr;
    p.ok(api->buffer_alloc(p.plugin, 0, na + nbb + ny, &arena));
    ASSERT_NE(arena, nullptr);
    void* host = api->buffer_host_ptr(arena);
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
    p.ok(api->copy_to_device(arena, 0, a.bytes.data(), na));
    p.ok(api->copy_to_device(arena, na, b.bytes.data(), nbb));
    ampx_kernel* k = nullptr;
    p.ok(api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
    ASSERT_NE(k, nullptr);
    const ampx_buffer_view in[2] = {{sizeof(ampx_buffer_view), arena, 0},
                                    {sizeof(ampx_buffer_view), arena, na}};
    const ampx_buffer_view out[1] = {{sizeof(ampx_buffer_view), arena, na + nbb}};
    p.ok(api->kernel_launch(k, in, 2, out, 1));
    p.ok(api->synchronize(p.plugin, 0));
    Tensor y = Tensor::zeros(dt, {16, 32});
    p.ok(api->copy_to_host(y.bytes.data(), arena, na + nbb, ny));
    // Same result as running the kernel library directly.
    expect_bits_equal(y, run_node(nb, {&a, &b})[0]);

    // Errors come back as statuses, never as crashes or exceptions.
    p.fails(api->kernel_launch(k, in, 1, out, 1), AMPX_STATUS_INVALID_ARGUMENT, "expects 2 inputs");
    const ampx_buffer_view past[1] = {{sizeof(ampx_buffer_view), arena, na + nbb + 2}};
    p.fails(api->kernel_launch(k, in, 2, past, 1), AMPX_STATUS_INVALID_ARGUMENT, "output 0");
    const ampx_buffer_view nobuf[1] = {{sizeof(ampx_buffer_view), nullptr, 0}};
    p.fails(api->kernel_launch(k, in, 2, nobuf, 1), AMPX_STATUS_INVALID_ARGUMENT, "no buffer");
    api->kernel_destroy(k);
    api->buffer_free(arena);
  }
}

TEST(PluginAbi, CopyBoundsAndBadArguments) {
  Plugin p(cpu_ref_path());
  const ampx_plugin_api* api = p.api;
  ampx_buffer* buf = nullptr;
  p.ok(api->buffer_alloc(p.plugin, 0, 100, &buf));
  char data[128] = {};
  p.ok(api->copy_to_device(buf, 0, data, 100));
  p.ok(api->copy_to_device(buf, 100, data, 0));
  p.fails(api->copy_to_device(buf, 1, data, 100), AMPX_STATUS_INVALID_ARGUMENT,
          "outside the buffer");
  p.fails(api->copy_to_device(buf, UINT64_MAX, data, 2), AMPX_STATUS_INVALID_ARGUMENT);
  p.fails(api->copy_to_host(data, buf, 64, 37), AMPX_STATUS_INVALID_ARGUMENT, "outside the buffer");
  p.fails(api->copy_to_host(data, buf, 8, UINT64_MAX - 4), AMPX_STATUS_INVALID_ARGUMENT);
  ampx_buffer* other = nullptr;
  p.ok(api->buffer_alloc(p.plugin, 0, 10, &other));
  p.ok(api->copy_device_to_device(other, 0, buf, 90, 10));
  p.ok(api->copy_device_to_device(buf, 1, buf, 0, 99));  // overlapping is fine
  p.fails(api->copy_device_to_device(other, 5, buf, 0, 6), AMPX_STATUS_INVALID_ARGUMENT,
          "destination");
  p.fails(api->copy_to_device(nullptr, 0, data, 1), AMPX_STATUS_INVALID_ARGUMENT);
  ampx_buffer* huge = nullptr;
  p.fails(api->buffer_alloc(p.plugin, 0, UINT64_MAX, &huge), AMPX_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(huge, nullptr);
  p.fails(api->buffer_alloc(p.plugin, 3, 10, &huge), AMPX_STATUS_INVALID_ARGUMENT, "device");
  ampx_buffer* empty = nullptr;
  p.ok(api->buffer_alloc(p.plugin, 0, 0, &empty));
  p.ok(api->copy_to_host(data, empty, 0, 0));
  api->buffer_free(empty);
  api->buffer_free(other);
  api->buffer_free(buf);
  api->buffer_free(nullptr);

  // kernel_prepare: invalid node -> INVALID_ARGUMENT, unknown op -> UNSUPPORTED.
  NodeBuilder bad("Relu", "r1");
  bad.input(F32, {4}).output(F32, {5});
  ampx_kernel* k = nullptr;
  p.fails(api->kernel_prepare(p.plugin, 0, &bad.desc(), &k), AMPX_STATUS_INVALID_ARGUMENT,
          "node 'r1' (Relu)");
  EXPECT_EQ(k, nullptr);
  NodeBuilder unknown("Mystery", "m");
  unknown.input(F32, {4}).output(F32, {4});
  p.fails(api->kernel_prepare(p.plugin, 0, &unknown.desc(), &k), AMPX_STATUS_UNSUPPORTED,
          "unknown op");
  // A Gather index error surfaces from kernel_launch.
  NodeBuilder g("Gather", "emb");
  g.input(F32, {4, 2}).input(AMPX_DTYPE_I32, {1}).output(F32, {1, 2});
  p.ok(api->kernel_prepare(p.plugin, 0, &g.desc(), &k));
  ampx_buffer* gb = nullptr;
  p.ok(api->buffer_alloc(p.plugin, 0, 64, &gb));
  const int32_t idx = 9;
  p.ok(api->copy_to_device(gb, 32, &idx, 4));
  const ampx_buffer_view gin[2] = {{sizeof(ampx_buffer_view), gb, 0},
                                   {sizeof(ampx_buffer_view), gb, 32}};
  const ampx_buffer_view gout[1] = {{sizeof(ampx_buffer_view), gb, 40}};
  p.fails(api->kernel_launch(k, gin, 2, gout, 1), AMPX_STATUS_INVALID_ARGUMENT, "index 9");
  api->kernel_destroy(k);
  api->buffer_free(gb);
}

TEST(PluginAbi, InPlaceAndMisalignedViewsAreStaged) {
  Plugin p(cpu_ref_path());
  const ampx_plugin_api* api = p.api;
  // Transpose in place (output view == input view) and an f32 view at an odd offset.
  NodeBuilder nb("Transpose", "t");
  nb.input(F32, {2, 3}).output(F32, {3, 2});
  ampx_kernel* k = nullptr;
  p.ok(api->kernel_prepare(p.plugin, 0, &nb.desc(), &k));
  ampx_buffer* buf = nullptr;
  p.ok(api->buffer_alloc(p.plugin, 0, 64, &buf));
  const float x[6] = {1, 2, 3, 4, 5, 6};
  for (uint64_t off : {uint64_t{0}, uint64_t{3}}) {
    p.ok(api->copy_to_device(buf, off, x, sizeof x));
    const ampx_buffer_view v[1] = {{sizeof(ampx_buffer_view), buf, off}};
    p.ok(api->kernel_launch(k, v, 1, v, 1));
    float y[6];
    p.ok(api->copy_to_host(y, buf, off, sizeof y));
    EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{1, 4, 2, 5, 3, 6})) << off;
  }
  api->kernel_destroy(k);
  api->buffer_free(buf);
}

// ----------------------------------------------------------- test_native

TEST(TestNativePlugin, DefaultsAreEmulated) {
  ScopedEnv a("AMPX_TEST_NATIVE_OPS", nullptr), b("AMPX_TEST_UNSUPPORTED_OPS", nullptr),
      c("AMPX_TEST_NATIVE_DTYPES", nullptr);
  Plugin p(test_native_path());
  EXPECT_STREQ(p.api->plugin_name, "test_native");
  NodeBuilder r32 = relu(F32), r16 = relu(F16);
  EXPECT_EQ(p.capability(r32).support, AMPX_SUPPORT_NATIVE);
  EXPECT_EQ(p.capability(r16).support, AMPX_SUPPORT_EMULATED);
  // The reference kernels' float64 mode is cpu_ref's alone: another policy
  // over the same kernels keeps the op set's rule (f64 compute unsupported).
  NodeBuilder m64 = matmul(AMPX_DTYPE_F64);
  const ampx_capability c64 = p.capability(m64);
  EXPECT_EQ(c64.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(c64.note).find("f64"), std::string::npos) << c64.note;
  ampx_device_props props{};
  p.ok(p.api->device_props(p.plugin, 0, &props));
  EXPECT_EQ(std::string(props.fingerprint).rfind("test_native/1.0.0/", 0), 0u) << props.fingerprint;
}

TEST(TestNativePlugin, ConfiguredByEnvironment) {
  ScopedEnv a("AMPX_TEST_NATIVE_OPS", "MatMul, Relu"), b("AMPX_TEST_UNSUPPORTED_OPS", "Softmax"),
      c("AMPX_TEST_NATIVE_DTYPES", "f16");
  Plugin p(test_native_path());
  NodeBuilder m32 = matmul(F32), m16 = matmul(F16), mbf = matmul(BF16);
  const ampx_capability c32 = p.capability(m32), c16 = p.capability(m16);
  EXPECT_EQ(c32.support, AMPX_SUPPORT_NATIVE);
  EXPECT_EQ(c16.support, AMPX_SUPPORT_NATIVE);
  EXPECT_DOUBLE_EQ(c16.cost_us, c32.cost_us / 2);
  EXPECT_EQ(p.capability(mbf).support, AMPX_SUPPORT_EMULATED);  // bf16 not configured
  NodeBuilder add("Add", "add");
  add.input(F16, {4}).input(F16, {4}).output(F16, {4});
  EXPECT_EQ(p.capability(add).support, AMPX_SUPPORT_EMULATED);
  NodeBuilder sm("Softmax", "sm");
  sm.input(F16, {4}).output(F16, {4});
  EXPECT_EQ(p.capability(sm).support, AMPX_SUPPORT_UNSUPPORTED);
  NodeBuilder sm32("Softmax", "sm");
  sm32.input(F32, {4}).output(F32, {4});
  EXPECT_EQ(p.capability(sm32).support, AMPX_SUPPORT_NATIVE);

  // It runs the reference kernels.
  Rng rng(8);
  const Tensor x = random_tensor(rng, F16, {4, 8});
  NodeBuilder r = relu(F16);
  ampx_kernel* k = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &r.desc(), &k));
  ampx_buffer* buf = nullptr;
  p.ok(p.api->buffer_alloc(p.plugin, 0, 128, &buf));
  p.ok(p.api->copy_to_device(buf, 0, x.bytes.data(), 64));
  const ampx_buffer_view vi[1] = {{sizeof(ampx_buffer_view), buf, 0}};
  const ampx_buffer_view vo[1] = {{sizeof(ampx_buffer_view), buf, 64}};
  p.ok(p.api->kernel_launch(k, vi, 1, vo, 1));
  Tensor y = Tensor::zeros(F16, {4, 8});
  p.ok(p.api->copy_to_host(y.bytes.data(), buf, 64, 64));
  expect_bits_equal(y, run_node(r, {&x})[0]);
  p.api->kernel_destroy(k);
  p.api->buffer_free(buf);
}

TEST(TestNativePlugin, StarMeansEveryOp) {
  ScopedEnv a("AMPX_TEST_NATIVE_OPS", "*"), b("AMPX_TEST_UNSUPPORTED_OPS", ""),
      c("AMPX_TEST_NATIVE_DTYPES", nullptr);
  Plugin p(test_native_path());
  NodeBuilder m16 = matmul(F16), mbf = matmul(BF16), r16 = relu(F16);
  EXPECT_EQ(p.capability(m16).support, AMPX_SUPPORT_NATIVE);
  EXPECT_EQ(p.capability(mbf).support, AMPX_SUPPORT_NATIVE);
  EXPECT_EQ(p.capability(r16).support, AMPX_SUPPORT_NATIVE);
  NodeBuilder unknown("Mystery", "m");
  unknown.input(F16, {4}).output(F16, {4});
  EXPECT_EQ(p.capability(unknown).support, AMPX_SUPPORT_UNSUPPORTED);  // kernels can't run it
}

}  // namespace
}  // namespace ampx::test
