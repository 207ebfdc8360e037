#include <ampx/plugin_check/plugin_check.hpp>

#include <ampx/opset/catalogue.hpp>
#include <ampx/opset/tolerances.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_check/op_cases.hpp>
#include <ampx/plugin_check/run_node.hpp>
#include <ampx/plugin_support.hpp>
#include <ampx/plugins/discovery.hpp>
#include <ampx/plugins/guard_bytes.hpp>
#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/preflight.hpp>
#include <ampx/plugins/status.hpp>

#include "check_steps.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>

namespace ampx::check {
namespace {

namespace fs = std::filesystem;
using opset::relative_error;
using opset::tolerance;
using plugins::fill_guard;
using plugins::find_guard_damage;
using plugins::GuardDamage;
using plugins::guarded_size;
using plugins::kGuard;
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
std::unique_ptr<LoadedPlugin> load_peer(const CheckOptions& o, const std::string& checked) {
  if (checked == "onednn") return nullptr;
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

// The error paths (a status, never a crash, for each bad call; the device
// usable after), each its own step: a crash in one costs that one.
void add_error_path_steps(int32_t devices, std::vector<Step>& steps) {
  struct Nodes {
    int64_t dims[2] = {2, 3};
    ampx_tensor_desc t{sizeof(ampx_tensor_desc), AMPX_DTYPE_F32, 2, dims, nullptr};
    ampx_node_desc relu{sizeof(ampx_node_desc), "Relu", "check", 1, &t, 1, &t, 0, nullptr};
    ampx_node_desc unknown{sizeof(ampx_node_desc), "NoSuchOp", "check", 1, &t, 1, &t, 0, nullptr};
  };
  const auto nodes = std::make_shared<Nodes>();
  // Adds the check: ok when the call returned a status (its message the
  // detail). True when it did.
  const auto expect_status = [](const LoadedPlugin& p, Sink& out, const std::string& what,
                                ampx_status* s) {
    AbiCheck c{what, s != nullptr, s ? "" : "returned success"};
    if (s) {
      const char* m = p.api().status_message(s);
      c.detail = m ? std::string(m, strnlen(m, 300)) : "";
      p.api().status_destroy(s);
    }
    out.add(c);
    return c.ok;
  };
  const auto step = [&](const std::string& what, auto run) {
    steps.push_back({what, [run](const LoadedPlugin& p, Sink& out) -> std::optional<CaseRun> {
                       run(p, out);
                       return std::nullopt;
                     }});
  };
  const std::string out_of_range =
      "query_capability on device " + std::to_string(devices) + " (out of range)";
  step(out_of_range, [=](const LoadedPlugin& p, Sink& out) {
    ampx_capability cap{};
    cap.struct_size = sizeof cap;
    expect_status(p, out, out_of_range,
                  p.api().query_capability(p.instance(), devices, &nodes->relu, &cap));
  });
  if (devices == 0) return;
  step("kernel_prepare of an unknown op", [=](const LoadedPlugin& p, Sink& out) {
    ampx_kernel* k = nullptr;
    if (!expect_status(p, out, "kernel_prepare of an unknown op",
                       p.api().kernel_prepare(p.instance(), 0, &nodes->unknown, &k)) &&
        k != nullptr)
      p.api().kernel_destroy(k);
  });
  step("buffer_alloc of 2^62 bytes", [=](const LoadedPlugin& p, Sink& out) {
    ampx_buffer* huge = nullptr;
    if (expect_status(p, out, "buffer_alloc of 2^62 bytes",
                      p.api().buffer_alloc(p.instance(), 0, uint64_t{1} << 62, &huge))) {
      out.add({"buffer_alloc that failed left its out handle NULL", huge == nullptr, "",
               kDestroyAndOutHandleRulesSince});
    } else if (huge != nullptr) {
      p.api().buffer_free(huge);
    }
  });
  step("a 64-byte buffer after the refused ones", [=](const LoadedPlugin& p, Sink& out) {
    const ampx_plugin_api& api = p.api();
    Handles h(api, p.instance());
    ampx_buffer* b = h.alloc(0, 64);
    const unsigned char bytes[128] = {};
    out.begin("copy_to_device past the end of a 64-byte buffer");
    expect_status(p, out, "copy_to_device past the end of a 64-byte buffer",
                  api.copy_to_device(b, 32, bytes, sizeof bytes));
    out.add({"a 64-byte buffer after the refused ones", true, ""});
    out.begin("kernel_launch with no inputs");
    ampx_kernel* rk = nullptr;
    ampx_status* s = api.kernel_prepare(p.instance(), 0, &nodes->relu, &rk);
    if (s == nullptr && rk != nullptr) {
      const ampx_buffer_view v{sizeof(ampx_buffer_view), b, 0};
      expect_status(p, out, "kernel_launch with no inputs",
                    api.kernel_launch(rk, nullptr, 0, &v, 1));
      api.kernel_destroy(rk);
    } else if (s) {
      api.status_destroy(s);
    }
  });
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

// One case on the plugin, in the child: the answer, then prepare (which
// must refuse an unsupported node) or a run whose outputs lie at offset
// kGuard of buffers with pattern bytes around them.
CaseRun run_case(const LoadedPlugin& p, int32_t device, op_cases::Case& c, bool perf, Sink& out) {
  const ampx_plugin_api& api = p.api();
  const ampx_node_desc& node = c.nb.desc();
  CaseRun r;
  out.begin("query_capability");
  const ampx_capability cap = ask(p, device, node);
  r.answer = cap.support;
  r.note = std::string(cap.note, strnlen(cap.note, sizeof cap.note));
  out.answered(r.answer, r.note);
  if (r.answer == AMPX_SUPPORT_UNSUPPORTED) {
    out.begin("kernel_prepare");
    ampx_kernel* k = nullptr;
    if (ampx_status* s = api.kernel_prepare(p.instance(), device, &node, &k)) {
      api.status_destroy(s);
      r.outcome = CaseRun::Outcome::kRefused;
    } else {
      if (k) api.kernel_destroy(k);
      r.outcome = CaseRun::Outcome::kAccepted;
    }
    return r;
  }
  Handles h(api, p.instance());
  out.begin("buffer_alloc and copy_to_device");
  std::vector<ampx_buffer_view> in, outs;
  for (const Tensor& t : c.inputs) {
    ampx_buffer* b = h.alloc(device, t.bytes.size());
    h.check(api.copy_to_device(b, 0, t.bytes.data(), t.bytes.size()), "copy_to_device");
    in.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  std::vector<uint64_t> bytes;
  for (size_t i = 0; i < node.num_outputs; ++i) {
    const uint64_t n = plugin_support::byte_size(node.outputs[i]);
    std::vector<unsigned char> pattern(guarded_size(n));
    fill_guard(pattern);
    ampx_buffer* b = h.alloc(device, pattern.size());
    h.check(api.copy_to_device(b, 0, pattern.data(), pattern.size()), "copy_to_device");
    outs.push_back({sizeof(ampx_buffer_view), b, kGuard});
    bytes.push_back(n);
  }
  out.begin("kernel_prepare");
  ampx_kernel* k = h.prepare(device, node);
  const auto launch = [&] {
    h.check(api.kernel_launch(k, in.data(), in.size(), outs.data(), outs.size()), "kernel_launch");
    h.check(api.synchronize(p.instance(), device), "synchronize");
  };
  out.begin("kernel_launch");
  launch();
  if (perf) r.us = median_launch_us(5, launch);
  out.begin("copy_to_host");
  for (size_t i = 0; i < outs.size(); ++i) {
    std::vector<unsigned char> all(guarded_size(bytes[i]));
    h.check(api.copy_to_host(all.data(), outs[i].buffer, 0, all.size()), "copy_to_host");
    if (const auto d = find_guard_damage(all, bytes[i])) {
      r.outcome = CaseRun::Outcome::kError;
      r.message = d->side == GuardDamage::Side::kBefore
                      ? "wrote before output " + std::to_string(i) + " (byte " +
                            std::to_string(d->distance) + " before it changed)"
                      : "wrote past the end of output " + std::to_string(i) + " (byte " +
                            std::to_string(d->distance) + " after it changed)";
      return r;
    }
    r.outputs.emplace_back(all.begin() + kGuard, all.begin() + kGuard + bytes[i]);
  }
  r.outcome = CaseRun::Outcome::kRan;
  return r;
}

// A case step as the parent knows it.
struct CaseRef {
  int32_t device = 0;
  std::string name, op;
  ampx_dtype dtype = AMPX_DTYPE_F32;
  const op_cases::Maker* make = nullptr;
};

// The parent's half of a case: the plugin's run (or how its child ended)
// against cpu_ref's.
CaseResult judge_case(const LoadedPlugin& ref, const std::string& plugin, const CaseRef& cr,
                      const std::optional<CaseRun>& run, const std::string& failure,
                      const std::pair<ampx_support, std::string>& answer, bool perf,
                      opset::ComputeMode mode) {
  CaseResult r;
  r.device = plugin + ":" + std::to_string(cr.device);
  r.name = cr.name;
  r.op = cr.op;
  r.dtype = cr.dtype;
  r.tolerance = tolerance(cr.dtype, mode);
  if (!run) {
    r.verdict = Verdict::kFail;
    r.message = failure.empty() ? "no result" : failure;
    std::tie(r.answer, r.note) = answer;
    return r;
  }
  r.answer = run->answer;
  r.note = run->note;
  // A step that threw reports no answer of its own: the one sent before.
  if (run->outcome == CaseRun::Outcome::kError && run->answer == AMPX_SUPPORT_UNSUPPORTED)
    std::tie(r.answer, r.note) = answer;
  switch (run->outcome) {
    case CaseRun::Outcome::kRefused:
      r.verdict = Verdict::kUnsupported;
      return r;
    case CaseRun::Outcome::kAccepted:
      r.verdict = Verdict::kFail;
      r.message = "answered unsupported, but kernel_prepare accepted it";
      return r;
    case CaseRun::Outcome::kError:
      r.verdict = Verdict::kFail;
      r.message = run->message;
      return r;
    case CaseRun::Outcome::kRan:
      break;
  }
  const bool moves = opset::is_data_movement(r.op);
  try {
    Rng rng(17);
    op_cases::Case c;
    (*cr.make)(rng, cr.dtype, c);
    const ampx_node_desc& node = c.nb.desc();
    const NodeRun want = run_node(ref, 0, node, c.inputs, perf);
    r.plugin_us = run->us;
    r.reference_us = want.us;
    if (perf) {
      const opset::WorkEstimate w = opset::estimate_work(node);
      r.flops = w.flops;
      r.bytes = w.bytes;
    }
    if (run->outputs.size() != want.outputs.size())
      throw std::runtime_error("the child returned " + std::to_string(run->outputs.size()) +
                               " outputs");
    for (size_t i = 0; i < want.outputs.size(); ++i) {
      Tensor got = want.outputs[i];
      got.bytes = run->outputs[i];
      if (moves) {
        if (got.bytes != want.outputs[i].bytes) {
          r.error = 1;
          r.message = "output " + std::to_string(i) + " differs from cpu_ref's bytes";
        }
        continue;
      }
      r.error = std::max(r.error, relative_error(got.values(), want.outputs[i].values()));
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

// Every step, in order: the error paths, NULL handles, destroys, copies,
// views, then every case x dtype on every device. `cases` (the parent's)
// gets each case step's description, aligned with the steps.
std::vector<Step> build_steps(int32_t devices, const CheckOptions& o,
                              std::vector<std::optional<CaseRef>>* cases) {
  std::vector<Step> steps;
  add_error_path_steps(devices, steps);
  const auto abi_step = [&](std::string what, auto fn) {
    steps.push_back({std::move(what), [fn, devices](const LoadedPlugin& p, Sink& out) {
                       fn(p, devices, out);
                       return std::optional<CaseRun>();
                     }});
  };
  abi_step("NULL handles and arguments", check_null_handles);
  abi_step("destroys given NULL and given a destroyed handle", check_destroys);
  if (devices > 0) {
    abi_step("copies at offsets",
             [](const LoadedPlugin& p, int32_t, Sink& out) { check_copies(p, out); });
    abi_step("kernel views at offsets",
             [](const LoadedPlugin& p, int32_t, Sink& out) { check_views(p, out); });
  }
  if (cases) cases->assign(steps.size(), std::nullopt);
  const std::vector<ampx_dtype> dtypes =
      o.dtypes.empty() ? std::vector<ampx_dtype>{AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16}
                       : o.dtypes;
  for (int32_t d = 0; d < devices; ++d) {
    if (o.device && *o.device != d) continue;
    for (const auto& [name, make] : op_cases::cases()) {
      for (ampx_dtype dt : dtypes) {
        Rng rng(17);
        op_cases::Case c;
        make(rng, dt, c);
        const std::string op = c.nb.desc().op_type;
        if (!wanted(o.ops, op)) continue;
        const op_cases::Maker* maker = &make;
        const bool perf = o.perf;
        steps.push_back({"case " + name + " " + dtype_str(dt) + " on device " + std::to_string(d),
                         [maker, d, dt, perf](const LoadedPlugin& p, Sink& out) {
                           Rng r(17);
                           op_cases::Case cc;
                           (*maker)(r, dt, cc);
                           return std::optional<CaseRun>(run_case(p, d, cc, perf, out));
                         },
                         true});
        if (cases) cases->push_back(CaseRef{d, name, op, dt, maker});
      }
    }
  }
  return steps;
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
    if (!a.ok && !a.advice) return false;
  for (const CaseResult& c : cases)
    if (c.verdict == Verdict::kFail || c.verdict == Verdict::kLie) return false;
  return true;
}

CheckReport check_plugin(const fs::path& file, const CheckOptions& o) {
  const std::unique_ptr<LoadedPlugin> ref = load(find_reference(o), "");
  CheckReport report;
  report.file = file;
  // Loading, creation and the first queries in a child first: a plugin that
  // crashes, hangs or exits there gets a report, not a dead checker. Its
  // kernels are launched below, each case in a child of its own steps.
  PreflightOptions po;
  po.plugin_options = o.plugin_options;
  po.timeout_s = 2 * o.timeout_s;
  po.smoke = PreflightOptions::Smoke::kNone;
  const plugins::PreflightVerdict v = plugins::preflight_plugin(file, po);
  report.abi.push_back({"loading, creation and capability queries in a child process", v.ok,
                        v.ok ? std::string() : v.reason});
  if (!v.ok) return report;

  std::vector<std::optional<CaseRef>> cases;
  const SessionResult s =
      run_session(file, o, [&](int32_t devices) { return build_steps(devices, o, &cases); });
  report.plugin = s.plugin;
  report.version = s.version;
  report.abi_major = s.abi_major;
  report.abi_minor = s.abi_minor;
  report.devices = s.devices;
  report.note = s.note;
  if (!s.loaded) {
    report.abi.insert(report.abi.end(), s.abi.begin(), s.abi.end());
    return report;
  }
  if (o.compute_mode) {
    report.compute_mode = *o.compute_mode;
    report.compute_mode_source = "command-line";
  } else if (s.declares_numerics) {
    report.compute_mode = opset::compute_mode_of(s.f16_accumulation);
    report.compute_mode_source = "plugin";
  }
  report.abi.push_back({"entry symbol, ABI version, table size and required members", true,
                        "ABI " + std::to_string(s.abi_major) + "." + std::to_string(s.abi_minor) +
                            ", table " + std::to_string(s.table_size) + " bytes"});
  report.abi.push_back({"plugin_create, plugin_info and device enumeration", true,
                        std::to_string(s.devices) + " device(s)"});
  // A plugin is held to the rules of the ABI it declares: a newer rule it
  // misses is advice.
  for (AbiCheck a : s.abi) {
    if (!a.ok && a.since_minor > s.abi_minor) a.advice = true;
    report.abi.push_back(std::move(a));
  }

  for (size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i]) continue;
    report.cases.push_back(judge_case(*ref, s.plugin, *cases[i], s.cases[i], s.case_failures[i],
                                      s.answers[i], o.perf, report.compute_mode));
  }
  // The peer last, in this process: its threads (OpenMP) must not exist
  // when the children above are forked.
  if (o.perf) {
    const std::unique_ptr<LoadedPlugin> peer = load_peer(o, s.plugin);
    if (peer) report.peer = peer->name();
    size_t at = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (!cases[i]) continue;
      CaseResult& r = report.cases[at++];
      if (!peer || r.plugin_us < 0) continue;
      Rng rng(17);
      op_cases::Case c;
      (*cases[i]->make)(rng, cases[i]->dtype, c);
      r.peer_us = peer_time(peer.get(), c.nb.desc(), c.inputs);
    }
  }
  return report;
}

}  // namespace ampx::check
