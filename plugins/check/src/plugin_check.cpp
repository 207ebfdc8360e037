#include <ampx/plugin_check/plugin_check.hpp>

#include <ampx/opset/catalogue.hpp>
#include <ampx/opset/tolerances.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_check/op_cases.hpp>
#include <ampx/plugin_check/run_node.hpp>
#include <ampx/plugin_support.hpp>
#include <ampx/plugins/discovery.hpp>
#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/preflight.hpp>
#include <ampx/plugins/status.hpp>

#include "check_steps.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace ampx::check {
namespace {

namespace fs = std::filesystem;
using opset::relative_error;
using opset::tolerance;
using plugins::LoadedPlugin;
using plugins::PreflightOptions;

// One node on one device (the kit's run_node), timed with 5 launches.
NodeRun run_node(const LoadedPlugin& p, int32_t device, const ampx_node_desc& node,
                 const std::vector<Tensor>& inputs, bool timed) {
  return check::run_node(p.api(), p.instance(), device, node, inputs, timed ? 5 : 0);
}

ampx_capability ask(const LoadedPlugin& p, int32_t device, const ampx_node_desc& node) {
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  p.check(p.api().query_capability(p.instance(), device, &node, &cap), "query_capability");
  return cap;
}

std::unique_ptr<LoadedPlugin> load(const fs::path& file, const std::string& options) {
  auto p = LoadedPlugin::open(file);
  plugins::PluginCreateOptions co;
  co.log_level = 4;  // errors only
  co.options = options;
  p->create(co);
  return p;
}

fs::path find_reference(const CheckOptions& o) {
  if (!o.reference.empty()) return o.reference;
  for (const fs::path& dir : plugins::default_plugin_dirs()) {
    const fs::path f = dir / "libampx_backend_cpu_ref.so";
    if (fs::exists(f)) return f;
  }
  throw std::runtime_error("the reference plugin libampx_backend_cpu_ref.so is not installed");
}

// With --perf, the oneDNN plugin as the fast CPU peer: NULL when it is the
// plugin checked, not installed next to the reference, or unusable.
std::unique_ptr<LoadedPlugin> load_peer(const CheckOptions& o, const LoadedPlugin& checked) {
  if (checked.name() == "onednn") return nullptr;
  const fs::path file =
      o.peer.empty() ? find_reference(o).parent_path() / "libampx_backend_onednn.so" : o.peer;
  if (!fs::exists(file)) return nullptr;
  try {
    auto peer = load(file, o.plugin_options);
    if (peer->device_props().empty()) return nullptr;
    return peer;
  } catch (const std::exception&) {
    return nullptr;
  }
}

// A status, never a crash, for each bad call; the device usable after.
void check_error_paths(const LoadedPlugin& p, int32_t devices, std::vector<AbiCheck>& out) {
  const ampx_plugin_api& api = p.api();
  auto expect_status = [&](const std::string& what, ampx_status* s) {
    AbiCheck c{what, s != nullptr, s ? "" : "returned success"};
    if (s) {
      const char* m = api.status_message(s);
      c.detail = m ? std::string(m, strnlen(m, 300)) : "";
      api.status_destroy(s);
    }
    out.push_back(std::move(c));
  };
  const int64_t dims[] = {2, 3};
  const ampx_tensor_desc t{sizeof(ampx_tensor_desc), AMPX_DTYPE_F32, 2, dims, nullptr};
  const ampx_node_desc relu{sizeof(ampx_node_desc), "Relu", "check", 1, &t, 1, &t, 0, nullptr};
  const ampx_node_desc unknown{
      sizeof(ampx_node_desc), "NoSuchOp", "check", 1, &t, 1, &t, 0, nullptr};
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  expect_status("query_capability on device " + std::to_string(devices) + " (out of range)",
                api.query_capability(p.instance(), devices, &relu, &cap));
  if (devices == 0) return;
  ampx_kernel* k = nullptr;
  expect_status("kernel_prepare of an unknown op",
                api.kernel_prepare(p.instance(), 0, &unknown, &k));
  if (k) api.kernel_destroy(k);
  ampx_buffer* huge = nullptr;
  expect_status("buffer_alloc of 2^62 bytes",
                api.buffer_alloc(p.instance(), 0, uint64_t{1} << 62, &huge));
  if (out.back().ok)
    out.push_back({"buffer_alloc that failed left its out handle NULL", huge == nullptr, ""});
  if (huge) api.buffer_free(huge);
  try {
    Handles h(p.api(), p.instance());
    ampx_buffer* b = h.alloc(0, 64);
    const unsigned char bytes[128] = {};
    expect_status("copy_to_device past the end of a 64-byte buffer",
                  api.copy_to_device(b, 32, bytes, sizeof bytes));
    out.push_back({"a 64-byte buffer after the refused ones", true, ""});
    ampx_kernel* rk = nullptr;
    ampx_status* s = api.kernel_prepare(p.instance(), 0, &relu, &rk);
    if (s == nullptr && rk != nullptr) {
      const ampx_buffer_view v{sizeof(ampx_buffer_view), b, 0};
      expect_status("kernel_launch with no inputs", api.kernel_launch(rk, nullptr, 0, &v, 1));
      api.kernel_destroy(rk);
    } else if (s) {
      api.status_destroy(s);
    }
  } catch (const std::exception& e) {
    out.push_back({"a 64-byte buffer after the refused ones", false, e.what()});
  }
}

bool wanted(const std::vector<std::string>& ops, const std::string& op) {
  return ops.empty() || std::find(ops.begin(), ops.end(), op) != ops.end();
}

// The peer's time for the case, -1 when it does not run it or fails.
double peer_time(const LoadedPlugin* peer, const ampx_node_desc& node,
                 const std::vector<Tensor>& inputs) {
  if (!peer) return -1;
  try {
    if (ask(*peer, 0, node).support == AMPX_SUPPORT_UNSUPPORTED) return -1;
    return run_node(*peer, 0, node, inputs, true).us;
  } catch (const std::exception&) {
    return -1;
  }
}

CaseResult check_case(const LoadedPlugin& p, const LoadedPlugin& ref, const LoadedPlugin* peer,
                      int32_t device, const std::string& name, op_cases::Case& c, ampx_dtype dt,
                      bool perf, opset::ComputeMode mode) {
  const ampx_node_desc& node = c.nb.desc();
  CaseResult r;
  r.device = p.name() + ":" + std::to_string(device);
  r.name = name;
  r.op = node.op_type;
  r.dtype = dt;
  r.tolerance = tolerance(dt, mode);
  try {
    const ampx_capability cap = ask(p, device, node);
    r.answer = cap.support;
    r.note = std::string(cap.note, strnlen(cap.note, sizeof cap.note));
  } catch (const std::exception& e) {
    r.verdict = Verdict::kFail;
    r.message = e.what();
    return r;
  }
  const bool moves = opset::is_data_movement(r.op);
  if (r.answer == AMPX_SUPPORT_UNSUPPORTED) {
    r.verdict = Verdict::kUnsupported;
    // ... and prepare must refuse it too (the host never assumes support).
    ampx_kernel* k = nullptr;
    ampx_status* s = p.api().kernel_prepare(p.instance(), device, &node, &k);
    if (s) {
      p.api().status_destroy(s);
    } else {
      if (k) p.api().kernel_destroy(k);
      r.verdict = Verdict::kFail;
      r.message = "answered unsupported, but kernel_prepare accepted it";
    }
    return r;
  }
  try {
    const NodeRun got = run_node(p, device, node, c.inputs, perf);
    const NodeRun want = run_node(ref, 0, node, c.inputs, perf);
    r.plugin_us = got.us;
    r.reference_us = want.us;
    if (perf) {
      const opset::WorkEstimate w = opset::estimate_work(node);
      r.flops = w.flops;
      r.bytes = w.bytes;
      r.peer_us = peer_time(peer, node, c.inputs);
    }
    for (size_t i = 0; i < got.outputs.size(); ++i) {
      if (moves) {
        if (got.outputs[i].bytes != want.outputs[i].bytes) {
          r.error = 1;
          r.message = "output " + std::to_string(i) + " differs from cpu_ref's bytes";
        }
        continue;
      }
      const double e = relative_error(got.outputs[i].values(), want.outputs[i].values());
      r.error = std::max(r.error, e);
    }
    if (moves) r.tolerance = 0;
    if (r.error > r.tolerance || (moves && !r.message.empty())) {
      r.verdict = r.answer == AMPX_SUPPORT_NATIVE ? Verdict::kLie : Verdict::kFail;
      if (r.message.empty()) r.message = "relative error above the tolerance";
    }
  } catch (const std::exception& e) {
    r.verdict = Verdict::kFail;
    r.message = e.what();
  }
  return r;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kLie:
      return "LIE";
    case Verdict::kUnsupported:
      return "unsupported";
  }
  return "?";
}

bool CheckReport::ok() const noexcept {
  for (const AbiCheck& a : abi)
    if (!a.ok) return false;
  for (const CaseResult& c : cases)
    if (c.verdict == Verdict::kFail || c.verdict == Verdict::kLie) return false;
  return true;
}

CheckReport check_plugin(const fs::path& file, const CheckOptions& o) {
  const std::unique_ptr<LoadedPlugin> ref = load(find_reference(o), "");
  CheckReport report;
  report.file = file;
  // Loading, creation and the first queries in a child first: a plugin that
  // crashes, hangs or exits there gets a report, not a dead checker.
  PreflightOptions po;
  po.plugin_options = o.plugin_options;
  const plugins::PreflightVerdict v = plugins::preflight_plugin(file, po);
  report.abi.push_back({"loading, creation and capability queries in a child process", v.ok,
                        v.ok ? std::string() : v.reason});
  if (!v.ok) return report;
  std::unique_ptr<LoadedPlugin> p;
  try {
    p = LoadedPlugin::open(file);
    report.plugin = p->name();
    report.version = p->version();
    report.abi_major = p->abi_major();
    report.abi_minor = p->abi_minor();
    if (o.compute_mode) {
      report.compute_mode = *o.compute_mode;
      report.compute_mode_source = "command-line";
    } else if (p->declares_numerics()) {
      report.compute_mode = p->f16_accumulation() == AMPX_ACCUMULATE_F16
                                ? opset::ComputeMode::kF16Accumulate
                                : opset::ComputeMode::kF32Accumulate;
      report.compute_mode_source = "plugin";
    }
    report.abi.push_back({"entry symbol, ABI version, table size and required members", true,
                          "ABI " + std::to_string(p->abi_major()) + "." +
                              std::to_string(p->abi_minor()) + ", table " +
                              std::to_string(p->table_size()) + " bytes"});
  } catch (const std::exception& e) {
    report.abi.push_back(
        {"entry symbol, ABI version, table size and required members", false, e.what()});
    return report;
  }
  try {
    plugins::PluginCreateOptions co;
    co.log_level = 4;
    co.options = o.plugin_options;
    p->create(co);
    report.devices = static_cast<int32_t>(p->device_props().size());
    report.note = p->note();
    report.abi.push_back({"plugin_create, plugin_info and device enumeration", true,
                          std::to_string(report.devices) + " device(s)"});
  } catch (const std::exception& e) {
    report.abi.push_back({"plugin_create, plugin_info and device enumeration", false, e.what()});
    return report;
  }
  check_error_paths(*p, report.devices, report.abi);
  check_null_handles(*p, report.devices, report.abi);
  check_destroys(*p, report.devices, report.abi);
  const std::unique_ptr<LoadedPlugin> peer = o.perf ? load_peer(o, *p) : nullptr;
  if (peer) report.peer = peer->name();
  check_copies_and_views(*p, report.devices, report.abi);

  const std::vector<ampx_dtype> dtypes =
      o.dtypes.empty() ? std::vector<ampx_dtype>{AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16}
                       : o.dtypes;
  for (int32_t d = 0; d < report.devices; ++d) {
    if (o.device && *o.device != d) continue;
    for (const auto& [name, make] : op_cases::cases()) {
      for (ampx_dtype dt : dtypes) {
        Rng rng(17);
        op_cases::Case c;
        make(rng, dt, c);
        if (!wanted(o.ops, c.nb.desc().op_type)) continue;
        report.cases.push_back(
            check_case(*p, *ref, peer.get(), d, name, c, dt, o.perf, report.compute_mode));
      }
    }
  }
  return report;
}

}  // namespace ampx::check
