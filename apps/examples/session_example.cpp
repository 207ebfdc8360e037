// docs/SESSION.md's example, built as ampx_session_example and run by the
// test suite: load a model, select devices, plan at O2 with the 16-bit type
// the devices run natively, compile, run, check against the reference, and
// print where every node went.
//   ampx_session_example [MODEL] [DEVICES]   (default: builtin:cnn, AMPX_DEVICES or cpu_ref:0)
#include <ampx/session/session.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  try {
    // 1. Plugins: every plugin found, minus those the user excludes.
    ampx::Session session({.devices = argc > 2 ? argv[2] : "",
                           .excluded_plugins = {"cuda"}});  // e.g. a driver to keep away

    // 2. A model: `builtin:NAME` or an .onnx file.
    const ampx::Graph graph = session.load(argc > 1 ? argv[1] : "builtin:cnn");

    // 3. Devices: the list (or `auto`, ranked for this model), cpu_ref:0 as
    //    the last resort.
    const ampx::DeviceSelection& selection = session.select_devices(graph);
    for (const auto& line : selection.ranking) std::printf("auto: %s\n", line.c_str());

    // 4. Precision and placement, decided together: one PlanRequest holds
    //    everything the plan depends on (policy, dtype or auto, pins, a
    //    stored profile, tuned plans, fallback, cost step).
    ampx::PlanRequest request;
    request.policy.level = ampx::AmpLevel::kO2;
    request.half = ampx::HalfDType::kAuto;
    const ampx::PlannedModel planned = session.plan(graph, request);
    const ampx::AmpPlan& plan = planned.plan;
    std::printf("16-bit type: %s\n", std::string(ampx::dtype_name(planned.policy.half)).c_str());
    for (const ampx::NodePlan& n : plan.nodes)
      std::printf("%-20s %-5s on %-14s %s\n", n.name.c_str(),
                  std::string(ampx::dtype_name(n.effective)).c_str(),
                  plan.devices[static_cast<size_t>(n.device)].c_str(), n.placement_text().c_str());

    // 5. Compile (fusion per device, kernels, weights) and run; then the
    //    check `ampx run` prints: every output against the O0 f32 run on
    //    cpu_ref:0, within the tolerance of the plan's lowest precision.
    ampx::CompiledModel model =
        session.compile(planned, {.reference = ampx::ReferenceCheck::kPrepare});
    const auto inputs = ampx::random_inputs(graph, 1);
    const auto outputs = model.run(inputs);
    std::printf("%zu output(s); %d fallbacks; %d copies (%llu bytes) per run\n", outputs.size(),
                plan.summary.fallbacks, model.stats().copies,
                static_cast<unsigned long long>(model.stats().copy_bytes));
    model.release();  // the plan's memory back before the reference runs
    const ampx::RunCheck check = model.verify_against_reference(inputs, outputs);
    std::printf("check: %s (tolerance %.1e)\n", check.passed() ? "passed" : "FAILED",
                check.tolerance);
    return check.passed() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
