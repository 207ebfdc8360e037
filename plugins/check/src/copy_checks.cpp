// check_copies_and_views(): the copy and view semantics of the ABI header
// ("Buffers and views"), checked byte for byte with guard patterns.
#include <cstring>
#include <string>

#include "check_steps.hpp"

namespace ampx::check {
namespace {

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>((i * 131 + seed * 17 + 7) & 0xff);
  return v;
}

std::vector<unsigned char> read_all(const plugins::LoadedPlugin& p, const ampx_buffer* b,
                                    size_t n) {
  std::vector<unsigned char> v(n);
  p.check(p.api().copy_to_host(v.data(), b, 0, n), "copy_to_host");
  return v;
}

// The first byte where got and want differ, or "" when none does.
std::string first_difference(const std::vector<unsigned char>& got,
                             const std::vector<unsigned char>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]);
  return "";
}

void check(Sink& out, const std::string& what, const std::string& diff) {
  out.add({what, diff.empty(), diff});
}

void copies(const plugins::LoadedPlugin& p, Sink& out) {
  const ampx_plugin_api& api = p.api();
  constexpr size_t n = 256;
  Handles h(p.api(), p.instance());
  ampx_buffer* a = h.alloc(0, n);
  ampx_buffer* b = h.alloc(0, n);
  const auto pa = pattern(n, 1), pb = pattern(n, 2);
  p.check(api.copy_to_device(a, 0, pa.data(), n), "copy_to_device");
  p.check(api.copy_to_device(b, 0, pb.data(), n), "copy_to_device");
  check(out, "copy_to_device / copy_to_host round trip of 256 bytes",
        first_difference(read_all(p, a, n), pa));

  std::vector<unsigned char> part(64);
  p.check(api.copy_to_host(part.data(), a, 64, 64), "copy_to_host");
  check(out, "copy_to_host of bytes [64, 128)",
        first_difference(part, std::vector<unsigned char>(pa.begin() + 64, pa.begin() + 128)));

  const auto small = pattern(32, 3);
  p.check(api.copy_to_device(a, 96, small.data(), small.size()), "copy_to_device");
  auto want = pa;
  std::memcpy(want.data() + 96, small.data(), small.size());
  check(out, "copy_to_device of 32 bytes at offset 96 leaves the rest",
        first_difference(read_all(p, a, n), want));

  p.check(api.copy_device_to_device(b, 128, a, 0, 64), "copy_device_to_device");
  auto want_b = pb;
  std::memcpy(want_b.data() + 128, want.data(), 64);
  check(out, "copy_device_to_device of [0, 64) to offset 128 leaves the rest",
        first_difference(read_all(p, b, n), want_b));
}

// Relu f32 [2, 8] (64 bytes) reading bytes [64, 128) of one buffer and
// writing [128, 192) of another: the output view gets Relu of the input
// view, and the guard bytes around it stay.
void views(const plugins::LoadedPlugin& p, Sink& out) {
  const ampx_plugin_api& api = p.api();
  const int64_t dims[] = {2, 8};
  const ampx_tensor_desc t{sizeof(ampx_tensor_desc), AMPX_DTYPE_F32, 2, dims, nullptr};
  const ampx_node_desc relu{sizeof(ampx_node_desc), "Relu", "views", 1, &t, 1, &t, 0, nullptr};
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  p.check(api.query_capability(p.instance(), 0, &relu, &cap), "query_capability");
  if (cap.support == AMPX_SUPPORT_UNSUPPORTED) {
    out.add({"Relu on views at offsets 64 and 128 (skipped: Relu f32 unsupported)", true, ""});
    return;
  }
  constexpr size_t n = 256;
  std::vector<float> x(n / 4), y(n / 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0 ? -1.0f : 1.0f) * (0.5f + i);
  for (size_t i = 0; i < y.size(); ++i) y[i] = 1000.0f + i;  // the guard
  Handles h(p.api(), p.instance());
  ampx_buffer* in = h.alloc(0, n);
  ampx_buffer* outb = h.alloc(0, n);
  p.check(api.copy_to_device(in, 0, x.data(), n), "copy_to_device");
  p.check(api.copy_to_device(outb, 0, y.data(), n), "copy_to_device");
  ampx_kernel* k = h.prepare(0, relu);
  const ampx_buffer_view vi{sizeof(ampx_buffer_view), in, 64};
  const ampx_buffer_view vo{sizeof(ampx_buffer_view), outb, 128};
  p.check(api.kernel_launch(k, &vi, 1, &vo, 1), "kernel_launch");
  p.check(api.synchronize(p.instance(), 0), "synchronize");
  std::vector<float> want = y;
  for (size_t i = 0; i < 16; ++i) want[32 + i] = x[16 + i] > 0 ? x[16 + i] : 0.0f;
  std::vector<unsigned char> want_bytes(n);
  std::memcpy(want_bytes.data(), want.data(), n);
  check(out, "Relu reading a view at offset 64, writing one at offset 128, guards kept",
        first_difference(read_all(p, outb, n), want_bytes));
  check(out, "the input buffer is unchanged by the launch", [&] {
    std::vector<unsigned char> xb(n);
    std::memcpy(xb.data(), x.data(), n);
    return first_difference(read_all(p, in, n), xb);
  }());
}

}  // namespace

void check_copies(const plugins::LoadedPlugin& p, Sink& out) {
  try {
    copies(p, out);
  } catch (const std::exception& e) {
    out.add({"copies at offsets", false, e.what()});
  }
}

void check_views(const plugins::LoadedPlugin& p, Sink& out) {
  try {
    views(p, out);
  } catch (const std::exception& e) {
    out.add({"kernel views at offsets", false, e.what()});
  }
}

}  // namespace ampx::check
