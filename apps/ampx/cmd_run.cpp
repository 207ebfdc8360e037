// `ampx run`: execute a plan, time it, and compare every output with the
// f32 run on the reference backend (run_check.hpp): over the plan's
// tolerance, one line on stderr and exit code 1.
#include "commands.hpp"
#include "plan_output.hpp"
#include "run_check.hpp"
#include "run_profile_output.hpp"

#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/npy.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace ampx::cli {
namespace {

constexpr const char* kReferenceDevice = "cpu_ref:0";

struct RunOptions {
  std::string model;
  DeviceArgs devices;
  ModelArgs model_args;
  PolicyOptions policy;
  int iters = 10;
  int warmup = 2;
  uint64_t seed = 1;
  bool no_fuse = false;
  bool no_check = false;     // --no-check: no reference run, no verdict
  bool per_node = false;     // --per-node: profiled runs, a table per node and per op
  std::string trace;         // --trace FILE: the profiled runs as Chrome trace events
  InputArgs inputs;          // --input NAME=FILE.npy
  MemoryArgs memory;         // --max-memory
  std::string save_outputs;  // directory
  Format format = Format::kText;
};

// Output names become file names: anything but [A-Za-z0-9._-] turns into '_'
// ("/encoder/out:0" -> "_encoder_out_0.npy").
std::string npy_file_name(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return s + ".npy";
}

void save_outputs(const Graph& graph, const std::vector<HostTensor>& outputs,
                  const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--save-outputs '" + dir + "': " + ec.message());
  for (size_t i = 0; i < outputs.size(); ++i)
    write_npy(std::filesystem::path(dir) / npy_file_name(graph.value(graph.outputs()[i]).name),
              outputs[i]);
}

nlohmann::json fused_to_json(const FusedGraph& fused) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& g : fused.groups) j.push_back({{"node", g.node}, {"absorbed", g.absorbed}});
  return j;
}

std::string fused_str(const FusedGraph& fused) {
  if (fused.groups.empty()) return "none";
  std::string s;
  for (const auto& g : fused.groups) {
    if (!s.empty()) s += ", ";
    s += g.node;
    for (const auto& a : g.absorbed) s += "+" + a;
  }
  return s;
}

int run_run(const GlobalOptions& global, const RunOptions& opts) {
  if (!opts.trace.empty()) check_trace_path(opts.trace);
  AmpPolicy policy = opts.policy.to_policy();
  std::vector<GivenInput> given = read_given_inputs(opts.inputs);
  const Graph graph =
      load_model(opts.model, with_given_inputs(opts.model_args.to_options(), opts.model, given));
  for (const std::string& name : graph.specialised_on)
    spdlog::info(
        "the graph is built for the value of input '{}' (a shape, axes, scales or k "
        "computed from it): another value needs another run",
        name);
  const auto host = make_plugin_host(global);
  const plugins::Device* ref_device = host.find_device(kReferenceDevice);
  if (!ref_device && !opts.no_check)
    throw std::runtime_error(std::string("the reference device ") + kReferenceDevice +
                             " is not available (see `ampx devices`; --no-check runs without it)");
  const PlannedModel pm =
      plan_model(host, graph, opts.model, opts.devices, opts.policy, policy, true, true);
  const AmpPlan& plan = pm.plan;
  const auto& choice = pm.dtype_choice;

  // The plan, then the reference (the same inputs through the f32 plan on
  // cpu_ref, run after the plan's executor is gone, beside the inputs and
  // both runs' outputs): each checked for memory before anything of it is
  // allocated, both before the inputs are made. A plan larger than the
  // machine is refused at once.
  const uint64_t io_bytes = host_tensor_bytes(graph);
  uint64_t output_bytes = 0;
  for (ValueId v : graph.outputs()) output_bytes += graph.value(v).byte_size();
  FusionOptions fusion;
  if (opts.no_fuse) fusion = {.fold_batchnorm = false, .epilogues = false};
  const FusedGraph fused = fuse_placed(plan.graph, pm.caps(), fusion);
  auto exec =
      std::make_unique<Executor>(fused.graph, pm.runtime_devices(), std::span<const StateBinding>{},
                                 ExecutorOptions{.memory = opts.memory.limit(io_bytes)});
  std::optional<DeviceCapabilities> ref_caps;
  std::optional<AmpPlan> ref_plan;
  if (!opts.no_check) {
    ref_caps.emplace(*ref_device);
    ref_plan = plan_amp(graph, AmpPolicy{}, *ref_caps);
    const plugins::Device* ref_devices[] = {ref_device};
    try {
      check_memory(Executor::memory_needs(ref_plan->graph, ref_devices), ref_devices,
                   opts.memory.limit(io_bytes + output_bytes));
    } catch (const MemoryError& e) {
      throw MemoryError(fmt::format("the reference run on {}: {}", kReferenceDevice, e.what()));
    }
  }
  const auto inputs = make_inputs(graph, opts.seed, std::move(given));
  for (int i = 0; i < opts.warmup; ++i) (void)exec->run(inputs);
  std::vector<double> times_ms, copy_ms;
  std::vector<HostTensor> outputs;
  for (int i = 0; i < opts.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    outputs = exec->run(inputs);
    const auto t1 = std::chrono::steady_clock::now();
    times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    copy_ms.push_back(exec->stats().last_run_copy_us / 1000.0);
  }
  // Profiled runs come after the timed ones, so that their per-step waits
  // never enter the median above.
  std::vector<RunProfile> profiles;
  if (opts.per_node || !opts.trace.empty()) {
    profiles.resize(static_cast<size_t>(opts.iters));
    for (RunProfile& p : profiles) (void)exec->run(inputs, p);
  }
  const ExecutorStats st = exec->stats();
  exec.reset();
  std::vector<double> predicted;
  std::optional<ProfileSummary> per_node;
  if (!profiles.empty()) {
    predicted = step_predictions(plan, fused, profiles.front());
    if (!opts.trace.empty())
      fileio::write_file_atomically(opts.trace,
                                    chrome_trace_json(profiles, plan.devices, predicted));
    if (opts.per_node) per_node = summarize_profiles(profiles, predicted);
  }
  std::sort(copy_ms.begin(), copy_ms.end());
  std::sort(times_ms.begin(), times_ms.end());
  const double median =
      times_ms.size() % 2
          ? times_ms[times_ms.size() / 2]
          : 0.5 * (times_ms[times_ms.size() / 2 - 1] + times_ms[times_ms.size() / 2]);

  // Reference: the same inputs through the f32 plan on cpu_ref.
  std::optional<RunCheck> check;
  if (ref_plan) {
    Executor ref_exec(ref_plan->graph, *ref_device, {},
                      {.memory = opts.memory.limit(io_bytes + output_bytes)});
    check = check_run(graph, plan.graph, outputs, ref_exec.run(inputs));
  }
  const std::string reference = std::string(kReferenceDevice) + " O0 f32";

  // Written whatever the verdict: a failing run's outputs are the evidence.
  if (!opts.save_outputs.empty()) save_outputs(graph, outputs, opts.save_outputs);

  const int exit_code = !check || check->passed() ? 0 : 1;
  if (opts.format == Format::kJson) {
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      nlohmann::json o{{"name", graph.value(graph.outputs()[i]).name},
                       {"dtype", std::string(dtype_name(outputs[i].type.dtype))},
                       {"shape", outputs[i].type.shape}};
      if (check) {
        const OutputCheck& c = check->outputs[i];
        o["max_rel_error"] = c.max_rel_error;
        if (c.exact_kind) {
          o["mismatches"] = c.mismatches;
          o["allowed_mismatches"] = c.allowed_mismatches;
        }
        o["passed"] = c.passed;
      }
      outs.push_back(std::move(o));
    }
    nlohmann::json verdict{{"status", !check ? "skipped" : check->passed() ? "passed" : "failed"}};
    if (check) {
      verdict["tolerance"] = check->tolerance;
      verdict["tolerance_dtype"] = std::string(dtype_name(check->tolerance_dtype));
    }
    nlohmann::json j{{"schema", "ampx.run/1"},
                     {"model", opts.model},
                     {"device", plan.device_id},
                     {"amp", std::string(amp_level_name(policy.level))},
                     {"dtype", std::string(dtype_name(policy.half))},
                     {"iters", opts.iters},
                     {"warmup", opts.warmup},
                     {"median_ms", median},
                     {"min_ms", times_ms.front()},
                     {"reference", check ? nlohmann::json(reference) : nlohmann::json()},
                     {"check", std::move(verdict)},
                     {"memory",
                      {{"planned_peak_bytes", st.arena_bytes},
                       {"no_reuse_bytes", st.no_reuse_bytes},
                       {"constant_bytes", st.constant_bytes}}},
                     {"kernels", st.kernels},
                     {"placement", placement_to_json(plan)},
                     {"kernels_per_device", st.kernels_per_device},
                     {"copies_per_run",
                      {{"copies", st.copies},
                       {"bytes", st.copy_bytes},
                       {"median_ms", copy_ms[copy_ms.size() / 2]}}},
                     {"folded_at_load", st.folded_nodes},
                     {"fused", fused_to_json(fused)},
                     {"summary", summary_to_json(plan.summary)},
                     {"outputs", std::move(outs)}};
    if (choice) j["dtype_auto"] = half_choice_to_json(*choice);
    if (!plan.tuned.empty()) j["tuned"] = plan.tuned;
    if (per_node) j["per_node"] = per_node_to_json(*per_node, plan.devices);
    if (!opts.trace.empty()) j["trace"] = opts.trace;
    std::cout << j.dump(2) << "\n";
    if (exit_code != 0) std::cerr << "ampx: error: " << check->failure_line(reference) << "\n";
    return exit_code;
  }
  const auto& s = plan.summary;
  std::cout << fmt::format("{}: {}\n", opts.model, plan_title(plan));
  std::cout << fmt::format("  nodes effectively 16-bit: {} of {} intended; casts: {}\n",
                           s.effective_16bit, s.intended_16bit, s.casts);
  if (!plan.tuned.empty()) std::cout << fmt::format("  the stored {}\n", plan.tuned);
  std::cout << fmt::format(
      "  time per run: median {:.3f} ms, min {:.3f} ms ({} iters, {} warm-up)\n", median,
      times_ms.front(), opts.iters, opts.warmup);
  std::cout << fmt::format("  kernels per run: {}; fused: {}\n", st.kernels, fused_str(fused));
  if (plan.devices.size() > 1) {
    std::string per;
    for (size_t d = 0; d < plan.devices.size(); ++d)
      per += fmt::format("{}{} on {}", d ? ", " : "", st.kernels_per_device[d], plan.devices[d]);
    std::cout << fmt::format("  placement: {}; {} fallbacks\n", per, s.fallbacks);
    std::cout << fmt::format("  copies per run: {} ({:.1f} KiB), median {:.3f} ms\n", st.copies,
                             static_cast<double>(st.copy_bytes) / 1024.0,
                             copy_ms[copy_ms.size() / 2]);
  }
  std::cout << fmt::format(
      "  memory: planned peak {:.2f} MiB (no reuse: {:.2f} MiB), weights {:.2f} MiB\n",
      static_cast<double>(st.arena_bytes) / 1048576.0,
      static_cast<double>(st.no_reuse_bytes) / 1048576.0,
      static_cast<double>(st.constant_bytes) / 1048576.0);
  if (check) {
    std::cout << fmt::format("  outputs vs {} (tolerance {:.1e}: the plan computes in {}):\n",
                             reference, check->tolerance, dtype_name(check->tolerance_dtype));
  } else {
    std::cout << "  outputs (not checked: --no-check):\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string verdict;
    if (check) {
      const OutputCheck& c = check->outputs[i];
      verdict = fmt::format("  max relative error {:.3e}", c.max_rel_error);
      if (c.exact_kind)
        verdict +=
            fmt::format(", {} elements differ ({} allowed)", c.mismatches, c.allowed_mismatches);
      if (!c.passed) verdict += "  OVER TOLERANCE";
    }
    std::cout << fmt::format("    {:<16} {}{}{}\n", graph.value(graph.outputs()[i]).name,
                             dtype_name(outputs[i].type.dtype), shape_str(outputs[i].type.shape),
                             verdict);
  }
  if (per_node) print_per_node(std::cout, *per_node, plan.devices);
  if (!opts.trace.empty())
    std::cout << fmt::format("  trace: {} ({} profiled runs; Perfetto or chrome://tracing)\n",
                             opts.trace, profiles.size());
  if (exit_code != 0) {
    std::cout.flush();
    std::cerr << "ampx: error: " << check->failure_line(reference) << "\n";
  }
  return exit_code;
}

}  // namespace

Action add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("run", "Execute a model under an AMP plan and check it");
  auto opts = std::make_shared<RunOptions>();
  cmd->add_option("MODEL", opts->model, "builtin:cnn, builtin:mlp, builtin:encoder or FILE.onnx")
      ->required();
  opts->model_args.add_to(*cmd);
  opts->devices.add_to(*cmd);
  opts->policy.add_to(*cmd);
  opts->policy.add_stored_plan_sources_to(*cmd);
  cmd->add_option("--iters", opts->iters, "timed runs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "untimed runs first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", opts->seed, "seed of the random inputs")
      ->check(kUnsigned64)
      ->capture_default_str();
  opts->inputs.add_to(*cmd);
  opts->memory.add_to(*cmd);
  cmd->add_option("--save-outputs", opts->save_outputs,
                  "write every output to DIR/<output name>.npy");
  cmd->add_flag("--per-node", opts->per_node,
                "also profile --iters runs: each kernel, Cast and copy timed (on the device "
                "where it can be), a table per node and per op with predicted and measured time");
  cmd->add_option("--trace", opts->trace,
                  "also profile --iters runs and write them to FILE in the Chrome trace-event "
                  "format (Perfetto, chrome://tracing)");
  cmd->add_flag("--no-check", opts->no_check,
                "skip the reference run on cpu_ref:0 and its check (by default an output over the "
                "plan's tolerance fails the run: one line on stderr, exit code 1)");
  cmd->add_flag("--no-fuse", opts->no_fuse,
                "run the plan's nodes one kernel each (no BatchNorm folding, no epilogues)");
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_run(global, *opts); };
}

}  // namespace ampx::cli
