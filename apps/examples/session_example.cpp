// docs/SESSION.md's example, built as ampx_session_example and run by the
// test suite: load a model, select devices, plan at O2, compile, run, and
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

    // 4. Precision and placement, decided together.
    ampx::AmpPolicy policy;
    policy.level = ampx::AmpLevel::kO2;
    const ampx::AmpPlan plan = session.plan(graph, policy);
    for (const ampx::NodePlan& n : plan.nodes)
      std::printf("%-20s %-5s on %-14s %s\n", n.name.c_str(),
                  std::string(ampx::dtype_name(n.effective)).c_str(),
                  plan.devices[static_cast<size_t>(n.device)].c_str(), n.placement_text().c_str());

    // 5. Compile (fusion per device, kernels, weights) and run.
    ampx::CompiledModel model = session.compile(plan);
    const auto outputs = model.run(ampx::random_inputs(graph, 1));
    std::printf("%zu output(s); %d fallbacks; %d copies (%llu bytes) per run\n", outputs.size(),
                plan.summary.fallbacks, model.stats().copies,
                static_cast<unsigned long long>(model.stats().copy_bytes));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
