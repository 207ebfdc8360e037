#include <ampx/capability/probe.hpp>
#include <ampx/capability/probe_catalog.hpp>
#include <ampx/capability/utc_time.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_support.hpp>
#include <ampx/plugins/status.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace ampx::capability {
namespace {

using Clock = std::chrono::steady_clock;

struct Repeats {
  int warmup;
  int max_runs;
  double window_ms;  // stop repeating once this much time was spent (>= 3 runs)
};

constexpr Repeats kQuick{1, 5, 30};
constexpr Repeats kFull{2, 15, 200};

double elapsed_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Runs `once` (which must include its own synchronize) as warm-up and then
// timed; median of the timed runs in microseconds.
template <class Fn>
double time_median(const Repeats& r, Fn&& once) {
  for (int i = 0; i < r.warmup; ++i) once();
  std::vector<double> t;
  const auto start = Clock::now();
  for (int i = 0; i < r.max_runs; ++i) {
    const auto t0 = Clock::now();
    once();
    t.push_back(elapsed_us(t0));
    if (t.size() >= 3 && elapsed_us(start) > r.window_ms * 1000) break;
  }
  return median(std::move(t));
}

// Random, non-zero, well-scaled data: positive values in [0.25, 1) (valid
// variances for BatchNorm, no denormals, no overflow in 16-bit) and valid
// indices for integer inputs.
std::vector<std::byte> random_bytes(const ampx_tensor_desc& t, std::mt19937& gen) {
  std::vector<std::byte> out(plugin_support::byte_size(t));
  const size_t n = static_cast<size_t>(plugin_support::element_count(t));
  std::uniform_real_distribution<float> val(0.25f, 1.0f);
  std::uniform_int_distribution<int> idx(0, 63);
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case AMPX_DTYPE_F32: {
        const float f = val(gen);
        std::memcpy(out.data() + i * 4, &f, 4);
        break;
      }
      case AMPX_DTYPE_F16: {  // exponent of 0.5, random mantissa: [0.5, 1)
        const uint16_t h = static_cast<uint16_t>(0x3800 | (gen() & 0x3FF));
        std::memcpy(out.data() + i * 2, &h, 2);
        break;
      }
      case AMPX_DTYPE_BF16: {  // upper half of an f32 in [0.25, 1)
        const float f = val(gen);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const uint16_t b = static_cast<uint16_t>(bits >> 16);
        std::memcpy(out.data() + i * 2, &b, 2);
        break;
      }
      case AMPX_DTYPE_I64: {
        const int64_t v = idx(gen);
        std::memcpy(out.data() + i * 8, &v, 8);
        break;
      }
      case AMPX_DTYPE_I32: {
        const int32_t v = idx(gen);
        std::memcpy(out.data() + i * 4, &v, 4);
        break;
      }
      default:
        break;  // zeros: no probe case uses other dtypes
    }
  }
  return out;
}

// Buffers for one node instance, inputs filled with random data.
struct Bound {
  std::vector<plugins::Buffer> in, out;
  std::vector<ampx_buffer_view> in_views, out_views;
};

Bound bind_buffers(const plugins::Device& dev, const NodeSpec& node,
                   const std::vector<std::vector<std::byte>>& data) {
  Bound b;
  const ampx_node_desc& desc = node.desc();
  for (size_t i = 0; i < desc.num_inputs; ++i) {
    b.in.push_back(dev.allocate(std::max<uint64_t>(plugin_support::byte_size(desc.inputs[i]), 1)));
    dev.copy_to_device(b.in.back(), 0, data[i]);
  }
  for (size_t i = 0; i < desc.num_outputs; ++i)
    b.out.push_back(
        dev.allocate(std::max<uint64_t>(plugin_support::byte_size(desc.outputs[i]), 1)));
  for (const auto& x : b.in) b.in_views.push_back(x.view());
  for (const auto& x : b.out) b.out_views.push_back(x.view());
  return b;
}

// The inputs that are weights in the models ops come from (convolution
// filters and biases, a Linear layer's Gemm B and C, normalisation
// parameters): the executor passes those as constants, so a backend can
// pre-pack them once at prepare, and the probe must time the same kernel.
// Timing them as activations would charge every launch with the weight
// reorder that real runs do not pay.
bool is_weight_input(const std::string& op, size_t index) {
  if (op == "Conv2d" || op == "Gemm" || op == "LayerNorm") return index >= 1;
  if (op == "BatchNorm") return index >= 1;
  return false;
}

double time_kernel(const plugins::Device& dev, const NodeSpec& spec, const Repeats& r,
                   std::mt19937& gen) {
  NodeSpec node = spec;
  std::vector<std::vector<std::byte>> data;
  for (size_t i = 0; i < spec.desc().num_inputs; ++i) {
    data.push_back(random_bytes(spec.desc().inputs[i], gen));
    if (is_weight_input(spec.op_type(), i)) node.constant_input(i, data.back());
  }
  plugins::Kernel k = dev.prepare(node.desc());
  Bound b = bind_buffers(dev, node, data);
  dev.synchronize();
  return time_median(r, [&] {
    k.launch(b.in_views, b.out_views);
    dev.synchronize();
  });
}

// Least squares is overkill for two points: the line through them, with the
// per-unit cost falling back to the plain ratio when noise makes it <= 0.
struct Line {
  double fixed_us, ns_per_unit;
};
Line fit_two(double n1, double t1_us, double n2, double t2_us) {
  double slope_ns = (t2_us - t1_us) * 1000 / (n2 - n1);
  if (!(slope_ns > 0)) slope_ns = t2_us * 1000 / n2;
  const double fixed = std::max(0.0, t1_us - slope_ns * n1 / 1000);
  return {fixed, slope_ns};
}

constexpr ampx_dtype kDtypes[] = {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16};

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

DeviceProfile probe_device(const plugins::Device& dev, const std::string& plugin_version,
                           const ProbeOptions& opts, const ProbeProgress& progress) {
  const auto start = Clock::now();
  const Repeats reps = opts.quick ? kQuick : kFull;
  const auto over_budget = [&] {
    return opts.budget_s > 0 && elapsed_us(start) > opts.budget_s * 1e6;
  };
  std::mt19937 gen(20261129);

  DeviceProfile p;
  const auto& props = dev.props();
  p.fingerprint = props.fingerprint;
  p.device_id = dev.id();
  p.plugin = dev.plugin_name();
  p.plugin_version = plugin_version;
  p.device_name = props.name;
  p.driver_version = props.driver_version;
  p.probed_at = utc_now_iso8601();
  p.quick = opts.quick;

  const auto cases = probe_catalog(opts.quick, opts.ops);
  const int n_casts = opts.casts ? 6 : 0, n_copies = opts.copies ? 2 : 0;
  const int total = static_cast<int>(cases.size()) * 3 + n_casts + n_copies;
  int done = 0;
  int skipped_for_budget = 0;
  const auto step = [&](const std::string& what) {
    ++done;
    if (progress) progress(done, total, what);
  };

  for (const auto& c : cases) {
    for (const ampx_dtype dt : kDtypes) {
      const NodeSpec node = c.make(dt);
      OpTiming t;
      t.op = c.op;
      t.dtype = plugin_support::dtype_name(dt);
      t.shape_class = c.shape_class;
      const auto work = opset::estimate_work(node.desc());
      t.flops = work.flops;
      t.bytes = work.bytes;
      const auto cap = dev.query(node.desc());
      t.support = cap.support;
      t.note = cap.note;
      if (cap.support != AMPX_SUPPORT_UNSUPPORTED) {
        if (over_budget()) {
          ++skipped_for_budget;
        } else {
          try {
            t.time_us = time_kernel(dev, node, reps, gen);
          } catch (const plugins::PluginError& e) {
            // The answer said it runs; it did not. Keep the answer, untimed,
            // and say why in the note (the report shows it).
            spdlog::warn("probe {} {} {} [{}]: {}", dev.id(), c.op, t.dtype, c.shape_class,
                         e.what());
            t.note = one_line(fmt::format("{}{}probe failed: {}", t.note,
                                          t.note.empty() ? "" : "; ", e.plugin_message()));
          }
        }
      }
      p.ops.push_back(std::move(t));
      step(fmt::format("{} {} {}", c.op, plugin_support::dtype_name(dt), c.shape_class));
    }
  }

  if (opts.casts) {
    const int64_t n1 = opts.quick ? 16384 : 65536, n2 = opts.quick ? 262144 : 1048576;
    for (const ampx_dtype from : kDtypes)
      for (const ampx_dtype to : kDtypes) {
        if (from == to) continue;
        const std::string what = fmt::format("Cast {}->{}", plugin_support::dtype_name(from),
                                             plugin_support::dtype_name(to));
        const NodeSpec a = make_cast(from, to, n1), b = make_cast(from, to, n2);
        if (!over_budget() && dev.query(a.desc()).support != AMPX_SUPPORT_UNSUPPORTED) {
          try {
            const double t1 = time_kernel(dev, a, reps, gen), t2 = time_kernel(dev, b, reps, gen);
            p.casts.push_back({plugin_support::dtype_name(from), plugin_support::dtype_name(to),
                               fit_two(double(n1), t1, double(n2), t2).ns_per_unit});
          } catch (const plugins::PluginError& e) {
            spdlog::warn("probe {} {}: {}", dev.id(), what, e.what());
          }
        }
        step(what);
      }
  }

  if (opts.copies && !over_budget()) {
    const uint64_t b1 = 64 << 10, b2 = opts.quick ? (1 << 20) : (4 << 20);
    std::vector<std::byte> host(b2, std::byte{1});
    const plugins::Buffer buf = dev.allocate(b2);
    const auto h2d = [&](uint64_t bytes) {
      return time_median(reps, [&] {
        dev.copy_to_device(buf, 0, std::span<const std::byte>(host.data(), bytes));
        dev.synchronize();
      });
    };
    const auto d2h = [&](uint64_t bytes) {
      return time_median(reps, [&] {
        dev.copy_to_host(std::span<std::byte>(host.data(), bytes), buf, 0);
        dev.synchronize();
      });
    };
    const Line up = fit_two(double(b1), h2d(b1), double(b2), h2d(b2));
    p.copies.push_back({"h2d", up.fixed_us, up.ns_per_unit});
    step("copy host->device");
    const Line down = fit_two(double(b1), d2h(b1), double(b2), d2h(b2));
    p.copies.push_back({"d2h", down.fixed_us, down.ns_per_unit});
    step("copy device->host");
  }
  if (skipped_for_budget > 0)
    spdlog::warn("probe {}: time budget of {:.0f} s spent; {} kernels answered but not timed",
                 dev.id(), opts.budget_s, skipped_for_budget);
  return p;
}

}  // namespace ampx::capability
