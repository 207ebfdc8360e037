// Internal to the conformance kit: the check steps that live in their own
// files.
#pragma once

#include <ampx/plugin_check/plugin_check.hpp>
#include <ampx/plugin_check/run_node.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ampx::check {

// NULL handles and arguments, and synchronize of a device out of range:
// each call is made first in a forked child, so a plugin that crashes on
// a bad argument gets a failed check ("crashed (SIGSEGV)"), not a dead
// checker; a call that survived is made again here for its message. Also:
// a kernel_prepare that failed left its out handle NULL.
void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices,
                        std::vector<AbiCheck>& out);

// Copies within and between buffers at offsets, and a kernel reading and
// writing views at offsets into larger buffers: the bytes named change, and
// no other byte does. Skipped (visibly) where the plugin has no devices.
void check_copies_and_views(const plugins::LoadedPlugin& p, int32_t devices,
                            std::vector<AbiCheck>& out);

}  // namespace ampx::check
