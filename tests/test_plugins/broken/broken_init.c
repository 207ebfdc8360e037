/* broken_init: a valid table whose plugin_create fails. */
#include "test_plugin.h"

static ampx_status* create_fails(const ampx_plugin_create_args* args, ampx_plugin** out) {
  (void)args;
  (void)out;
  return tp_status(AMPX_STATUS_UNAVAILABLE, "simulated init failure");
}

static const ampx_plugin_api table = {
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
    .plugin_name = "broken_init",
    .plugin_version = "0.0.1",
    .plugin_create = create_fails,
    .device_count = tp_device_count,
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
    TP_STUB_MEMBERS,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &table;
}
