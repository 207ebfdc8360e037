// NCCL for CUDA devices (frontend/nccl, docs/DISTRIBUTED.md "NCCL"): the
// module, the CUDA plugin's native handles (ABI 1.6) and ncclAllReduce on
// the plugin's stream against the host path's sums. Here (no GPU) the
// module must load and every device test skips with "no CUDA device";
// scripts/device-check.sh runs it on a GPU with AMPX_EXPECT_CUDA_DEVICE=1,
// where a skip is a failure. No MPI: the ranks are communicators of this
// process (one per GPU), as NCCL allows.
#include <gtest/gtest.h>
#include <ampx/half.hpp>
#include <ampx/nccl/nccl_loader.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace ampx::nccl {
namespace {

bool expect_device() {
  const char* e = std::getenv("AMPX_EXPECT_CUDA_DEVICE");
  return e != nullptr && std::string(e) == "1";
}

std::filesystem::path plugin_dir() {
  const char* d = std::getenv("AMPX_TEST_PLUGIN_DIR");
  return d != nullptr && *d != '\0' ? std::filesystem::path(d)
                                    : std::filesystem::path(AMPX_PLUGIN_BUILD_DIR);
}

Module& module() {
  std::string why;
  Module* m = nccl_module(why);
  if (m == nullptr) throw std::runtime_error(why);
  return *m;
}

#define REQUIRE_GPUS(n)                                                                         \
  do {                                                                                          \
    const int have = module().device_count();                                                   \
    if (have < (n)) {                                                                           \
      const std::string why =                                                                   \
          have == 0 ? std::string("no CUDA device") : std::to_string(have) + " CUDA device(s)"; \
      if ((n) == 1 && expect_device()) FAIL() << "AMPX_EXPECT_CUDA_DEVICE=1 but " << why;       \
      GTEST_SKIP() << why;                                                                      \
    }                                                                                           \
  } while (0)

std::vector<float> data(size_t n, int seed) {
  std::vector<float> v(n);
  uint32_t s = 2463534242u + static_cast<uint32_t>(seed);
  for (float& x : v) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x = (static_cast<float>(s % 20001) - 10000.0f) * 1e-3f;
  }
  return v;
}

// The CUDA plugin's device `index`, with its native handles. No pre-flight
// child: CUDA is initialised in this process already (the module counted
// the devices), and a forked child cannot use it.
struct CudaDevice {
  static plugins::PluginHostOptions options() {
    plugins::PluginHostOptions o;
    o.use_env_path = false;
    o.own_dirs = {plugin_dir()};
    o.preflight = false;
    return o;
  }
  plugins::PluginHost host;
  const plugins::Device* device = nullptr;
  plugins::NativeDevice native;
  explicit CudaDevice(int index) : host(options()) {
    device = host.find_device("cuda:" + std::to_string(index));
    if (device == nullptr) throw std::runtime_error("no cuda:" + std::to_string(index));
    native = device->native().value();
  }
};

// On `d`'s stream: `values` summed over comm's ranks (this rank's part),
// through `wire`, then read back.
std::vector<float> allreduce_on(CudaDevice& d, Comm& comm, const std::vector<float>& values,
                                WireType wire) {
  plugins::Buffer f32 = d.device->allocate(values.size() * 4);
  plugins::Buffer half = d.device->allocate(values.size() * 2);
  d.device->copy_to_device(f32, 0, std::as_bytes(std::span(values)));
  auto* p = static_cast<float*>(d.device->native_ptr(f32));
  void* h = d.device->native_ptr(half);
  if (wire == WireType::kF32) {
    comm.allreduce_sum(p, values.size(), wire, d.native.stream);
  } else {
    comm.narrow(p, h, values.size(), wire, d.native.stream);
    comm.allreduce_sum(h, values.size(), wire, d.native.stream);
    comm.widen(h, p, values.size(), wire, d.native.stream);
  }
  std::unique_ptr<Marker> m = comm.marker();
  m->record(d.native.stream);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!m->reached()) {
    if (!comm.async_error().empty()) throw std::runtime_error(comm.async_error());
    if (std::chrono::steady_clock::now() > deadline) {
      comm.abort();
      throw std::runtime_error("the all-reduce did not complete in 60 s");
    }
  }
  std::vector<float> out(values.size());
  d.device->copy_to_host(std::as_writable_bytes(std::span(out)), f32, 0);  // after it: in order
  return out;
}

float round_to(float x, WireType t) {
  return t == WireType::kBF16 ? bf16_bits_to_float(float_to_bf16_bits(x))
                              : f16_bits_to_float(float_to_f16_bits(x));
}

TEST(NcclModule, LoadsAndNamesItsVersion) {
  const std::string v = module().version();
  EXPECT_NE(v.find("NCCL 2."), std::string::npos) << v;
  std::cout << "module: " << v << ", CUDA devices: " << module().device_count() << "\n";
}

// One rank: the sum is the rank's own bucket, bit for bit as the host path
// leaves it (f32), or the value rounded once to the wire's type (16-bit,
// as the host path's float_to_*_bits).
TEST(NcclDevice, OneRankSumsAsTheHostPath) {
  REQUIRE_GPUS(1);
  CudaDevice d(0);
  ASSERT_EQ(d.native.api, AMPX_NATIVE_API_CUDA);
  auto comms = module().init_all(std::vector<int>{d.native.ordinal}, InitOptions{});
  const std::vector<float> x = data(100003, 1);
  EXPECT_EQ(allreduce_on(d, *comms[0], x, WireType::kF32), x);
  for (WireType t : {WireType::kF16, WireType::kBF16}) {
    const std::vector<float> got = allreduce_on(d, *comms[0], x, t);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(got[i], round_to(x[i], t)) << "element " << i << " wire " << static_cast<int>(t);
  }
}

// Two GPUs, one rank each (threads of this process): f32 a + b bit for bit
// (one addition), 16-bit: the sum of the rounded values rounded once (one
// hop, as the host path's operator with two ranks).
TEST(NcclDevice, TwoGpusSumAsTheHostPath) {
  REQUIRE_GPUS(2);
  CudaDevice d0(0), d1(1);
  auto comms =
      module().init_all(std::vector<int>{d0.native.ordinal, d1.native.ordinal}, InitOptions{});
  const std::vector<float> a = data(70001, 2), b = data(70001, 3);
  for (WireType t : {WireType::kF32, WireType::kF16, WireType::kBF16}) {
    std::vector<float> r0, r1;
    std::thread t1([&] { r1 = allreduce_on(d1, *comms[1], b, t); });
    r0 = allreduce_on(d0, *comms[0], a, t);
    t1.join();
    for (size_t i = 0; i < a.size(); ++i) {
      const float want =
          t == WireType::kF32 ? a[i] + b[i] : round_to(round_to(a[i], t) + round_to(b[i], t), t);
      ASSERT_EQ(r0[i], want) << "element " << i << " wire " << static_cast<int>(t);
      ASSERT_EQ(r1[i], want) << "element " << i;
    }
  }
}

// NCCL refuses two ranks of one communicator on one GPU: the attempt ends
// in one line within the timeout, never in a hang.
TEST(NcclDevice, TwoRanksOnOneGpuEndInOneLine) {
  REQUIRE_GPUS(1);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto comms = module().init_all(std::vector<int>{0, 0}, InitOptions{.timeout_ms = 20000});
    std::cout << "NCCL accepted two ranks on one GPU\n";
  } catch (const std::runtime_error& e) {
    const std::string line = e.what();
    std::cout << "refused: " << line << "\n";
    EXPECT_EQ(line.find('\n'), std::string::npos);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

}  // namespace
}  // namespace ampx::nccl
