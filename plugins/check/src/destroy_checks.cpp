// check_destroys(): the header's rules for the destroy and free functions.
// Given NULL they do nothing; given a handle destroyed before (the host's
// bug) they survive. Each probe runs only in a forked child: a plugin that
// frees twice would corrupt the checker's own heap.
#include <string>

#include "check_steps.hpp"

namespace ampx::check {
namespace {

// A probe whose setup may fail: it returns that status, and the check is
// then not applicable rather than failed. NULL: the probe survived.
struct Probe {
  std::string what;
  std::string not_run;  // detail when the setup failed
  Call call;
};

}  // namespace

void check_destroys(const plugins::LoadedPlugin& p, int32_t devices, Sink& out) {
  const ampx_plugin_api& api = p.api();
  ampx_plugin* const instance = p.instance();
  // f32 Relu of 2x3: a node every plugin that runs anything should prepare.
  const int64_t dims[] = {2, 3};
  const ampx_tensor_desc t{sizeof t, AMPX_DTYPE_F32, 2, dims, nullptr};
  const ampx_node_desc relu{sizeof relu, "Relu", "check", 1, &t, 1, &t, 0, nullptr};
  std::vector<Probe> probes;
  probes.push_back({"status_destroy, buffer_free, kernel_destroy and plugin_destroy of NULL", "",
                    [&]() -> ampx_status* {
                      api.status_destroy(nullptr);
                      api.buffer_free(nullptr);
                      api.kernel_destroy(nullptr);
                      api.plugin_destroy(nullptr);
                      return nullptr;
                    }});
  probes.push_back({"status_destroy of a status destroyed before", "no status to destroy",
                    [&]() -> ampx_status* {
                      ampx_capability cap{};
                      cap.struct_size = sizeof cap;
                      // Device `devices` is out of range: a status, by the header's rule.
                      ampx_status* s = api.query_capability(instance, devices, &relu, &cap);
                      if (s == nullptr) return nullptr;  // no status: nothing to test
                      api.status_destroy(s);
                      api.status_destroy(s);
                      return nullptr;
                    }});
  probes.push_back({"plugin_destroy of an instance destroyed before", "plugin_create failed",
                    [&]() -> ampx_status* {
                      const ampx_plugin_create_args args{sizeof args, 6, nullptr};
                      ampx_plugin* second = nullptr;
                      if (ampx_status* s = api.plugin_create(&args, &second)) return s;
                      api.plugin_destroy(second);
                      api.plugin_destroy(second);
                      return nullptr;
                    }});
  if (devices > 0) {
    probes.push_back({"buffer_free of a buffer freed before", "buffer_alloc of 64 bytes failed",
                      [&]() -> ampx_status* {
                        ampx_buffer* b = nullptr;
                        if (ampx_status* s = api.buffer_alloc(instance, 0, 64, &b)) return s;
                        api.buffer_free(b);
                        api.buffer_free(b);
                        return nullptr;
                      }});
    probes.push_back({"kernel_destroy of a kernel destroyed before",
                      "the plugin prepares no f32 Relu of 2x3", [&]() -> ampx_status* {
                        ampx_kernel* k = nullptr;
                        if (ampx_status* s = api.kernel_prepare(instance, 0, &relu, &k)) return s;
                        api.kernel_destroy(k);
                        api.kernel_destroy(k);
                        return nullptr;
                      }});
  }
  // Rules since ABI 1.3: an older plugin's failure is advice (the caller
  // decides), and the probe is made only in a child, never here.
  constexpr uint32_t since = kDestroyAndOutHandleRulesSince;
  for (const Probe& probe : probes) {
    out.begin(probe.what);
    const std::string outcome = outcome_in_child(probe.call, ChildOutput::kQuiet);
    if (outcome == "returned success")
      out.add({probe.what, true, "", since});
    else if (outcome.empty())
      out.add({probe.what, true, "not run: " + probe.not_run, since});
    else
      out.add({probe.what, false, outcome, since});
  }
}

}  // namespace ampx::check
