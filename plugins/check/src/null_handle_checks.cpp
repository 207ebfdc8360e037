// check_null_handles(): the header's rule that bad arguments get statuses,
// never crashes, for NULL handles and arguments; each probe isolated in a
// child process first.
#include <ampx/plugins/forked_call.hpp>

#include <cstring>
#include <functional>
#include <string>

#include "check_steps.hpp"

namespace ampx::check {

std::string outcome_in_child(const Call& call, ChildOutput output) {
  plugins::ForkOptions fo;
  fo.timeout_s = 10;
  fo.output = output == ChildOutput::kQuiet ? plugins::ForkOptions::Output::kNothing
                                            : plugins::ForkOptions::Output::kStderr;
  const plugins::ForkOutcome o = plugins::run_forked(
      [&](const plugins::ChildPipe& pipe) { pipe.send(call() != nullptr ? "status" : "success"); },
      fo);
  if (o.kind == plugins::ForkOutcome::Kind::kNotForked) return "";  // make the call in-process only
  if (o.returned() && !o.messages.empty())
    return o.messages[0] == "success" ? "returned success" : "";
  if (o.kind == plugins::ForkOutcome::Kind::kExited)
    return "crashed (exit status " + std::to_string(o.exit_status) +
           ": a sanitizer's report or the plugin's exit())";
  return o.describe();
}

void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices, Sink& out) {
  const ampx_plugin_api& api = p.api();
  auto expect_status = [&](const std::string& what, const Call& call) {
    out.begin(what);
    AbiCheck c{what, true, outcome_in_child(call)};
    if (!c.detail.empty()) {
      c.ok = false;
    } else if (ampx_status* s = call()) {
      const char* m = api.status_message(s);
      c.detail = m ? std::string(m, strnlen(m, 300)) : "";
      api.status_destroy(s);
    } else {
      c = {what, false, "returned success"};
    }
    const bool ok = c.ok;
    out.add(std::move(c));
    return ok;
  };
  unsigned char byte = 0;
  expect_status("copy_to_device to a NULL buffer",
                [&] { return api.copy_to_device(nullptr, 0, &byte, 1); });
  expect_status("copy_to_host from a NULL buffer",
                [&] { return api.copy_to_host(&byte, nullptr, 0, 1); });
  expect_status("kernel_launch of a NULL kernel",
                [&] { return api.kernel_launch(nullptr, nullptr, 0, nullptr, 0); });
  if (devices == 0) return;
  ampx_kernel* k = nullptr;
  if (expect_status("kernel_prepare of a NULL node", [&] {
        k = reinterpret_cast<ampx_kernel*>(&byte);  // not NULL: the plugin must clear it
        return api.kernel_prepare(p.instance(), 0, nullptr, &k);
      })) {
    out.add({"kernel_prepare that failed left its out handle NULL", k == nullptr,
             k == nullptr ? "" : "the out handle was left as it was",
             kDestroyAndOutHandleRulesSince});
  }
  if (k != nullptr && k != reinterpret_cast<ampx_kernel*>(&byte)) api.kernel_destroy(k);
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  expect_status("query_capability of a NULL node",
                [&] { return api.query_capability(p.instance(), 0, nullptr, &cap); });
  expect_status("synchronize of device " + std::to_string(devices) + " (out of range)",
                [&] { return api.synchronize(p.instance(), devices); });
}

}  // namespace ampx::check
