// Internal to the conformance kit: the check steps that live in their own
// files.
#pragma once

#include <ampx/plugin_check/plugin_check.hpp>
#include <ampx/plugin_check/run_node.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx::check {

// One call of the plugin's, made in a forked child (10 s at most): "" when it
// returned a status, "returned success" when it returned NULL, else how it
// ended ("crashed (SIGSEGV)", "hung (killed after 10 s)", ...). "" too when
// no child could be made (the caller then makes the call in-process only).
// quiet: the child's stderr goes to /dev/null (a call expected to print).
using Call = std::function<ampx_status*()>;
std::string outcome_in_child(const Call& call, bool quiet = false);

// NULL handles and arguments, and synchronize of a device out of range:
// each call is made first in a forked child, so a plugin that crashes on
// a bad argument gets a failed check ("crashed (SIGSEGV)"), not a dead
// checker; a call that survived is made again here for its message. Also:
// a kernel_prepare that failed left its out handle NULL.
void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices,
                        std::vector<AbiCheck>& out);

// The destroy and free functions given NULL, and given a handle destroyed
// before (backend_api.h: both are survived), each in a forked child.
void check_destroys(const plugins::LoadedPlugin& p, int32_t devices, std::vector<AbiCheck>& out);

// Copies within and between buffers at offsets, and a kernel reading and
// writing views at offsets into larger buffers: the bytes named change, and
// no other byte does. Skipped (visibly) where the plugin has no devices.
void check_copies_and_views(const plugins::LoadedPlugin& p, int32_t devices,
                            std::vector<AbiCheck>& out);

}  // namespace ampx::check
