/* broken_abi: built against a future major version of the ABI. */
#include "test_plugin.h"

static const ampx_plugin_api table = {
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = 2,
    .abi_minor = 0,
    .plugin_name = "broken_abi",
    .plugin_version = "0.0.1",
    .plugin_create = tp_create_no_devices,
    .device_count = tp_device_count,
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
    TP_STUB_MEMBERS,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &table;
}
