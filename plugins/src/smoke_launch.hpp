// The pre-flight's smoke launch (ampx/plugins/preflight.hpp): kernels run
// in the host's process, so before a plugin is trusted with them, the
// pre-flight child prepares and launches one small Relu, Add and Gemm on
// every device, in every dtype (f32, f16, bf16) the plugin answers `native`
// for them, and checks each result against the reference kernels at the op
// set's tolerance (opset/tolerances.hpp; f16 at the plugin's declared
// compute mode). Every tensor lies in the middle of a larger buffer whose
// other bytes hold a pattern: a kernel that writes outside its output, or
// into its input, is caught there, not in the host's arena.
#pragma once

#include <ampx/plugins/loaded_plugin.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace ampx::plugins::detail {

// `stage` is told each launch before it is made ("a smoke launch (Gemm f16
// on device 0)"), so that a crash or hang is placed. Returns "" when every
// launch was right (or none was asked for: nothing answered `native`);
// otherwise what was wrong, one line ("Relu f32 on device 0: wrote past its
// output (byte 64 after it changed)"). A status from the plugin is not the
// smoke launch's business (the host reports it where it happens): that
// launch is passed over. A C++ exception across the ABI throws PluginThrew.
std::string smoke_launch(const LoadedPlugin& plugin,
                         const std::function<void(const std::string&)>& stage);

}  // namespace ampx::plugins::detail
