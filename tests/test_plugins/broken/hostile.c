/* hostile_*: plugins that would take the host down, one way each (built from
 * this file with HOSTILE_<KIND> defined): a crash, a hang or exit() in
 * ampx_plugin_entry, plugin_create, device enumeration or a capability
 * query. The host's pre-flight (ampx/plugins/preflight.hpp) runs those calls
 * in a child process first and skips the plugin with the reason. Built into
 * ${AMPX_HOSTILE_PLUGIN_DIR}, never loaded without the pre-flight. */
#include <signal.h>
#include <unistd.h>

#include "test_plugin.h"

#ifndef HOSTILE_NAME
#error "HOSTILE_NAME must be defined"
#endif

static inline void hostile_crash(void) {
  raise(SIGSEGV);
}

static inline void hostile_hang(void) {
  for (;;) pause();
}

static ampx_status* hostile_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
#if defined(HOSTILE_EXIT_CREATE)
  exit(1);
#elif defined(HOSTILE_ABORT_CREATE)
  abort();
#endif
  return tp_create(1, args, out);
}

static ampx_status* hostile_device_count(ampx_plugin* plugin, int32_t* out) {
#if defined(HOSTILE_CRASH_DEVICES)
  hostile_crash();
#endif
  return tp_device_count(plugin, out);
}

static ampx_status* hostile_query(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                                  ampx_capability* out) {
#if defined(HOSTILE_CRASH_QUERY)
  hostile_crash();
#elif defined(HOSTILE_HANG_QUERY)
  hostile_hang();
#endif
  return tp_query_unsupported(plugin, device, node, out);
}

static const ampx_plugin_api table = {
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
    .plugin_name = HOSTILE_NAME,
    .plugin_version = "0.0.1",
    .plugin_create = hostile_create,
    .device_count = hostile_device_count,
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
    .plugin_info = tp_info_empty,
    .device_props = tp_device_props_none,
    .query_capability = hostile_query,
    .kernel_prepare = tp_prepare_unsupported,
    .kernel_destroy = tp_kernel_destroy_none,
    .kernel_launch = tp_launch_unsupported,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
#if defined(HOSTILE_CRASH_ENTRY)
  hostile_crash();
#elif defined(HOSTILE_EXIT_ENTRY)
  exit(1);
#endif
  return &table;
}
