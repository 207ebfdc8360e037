/* broken_small: a v1 table whose struct_size (24) is below the v1 minimum. */
#include "test_plugin.h"

static const ampx_plugin_api table = {
    .struct_size = 24,
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
    .plugin_name = "broken_small",
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
