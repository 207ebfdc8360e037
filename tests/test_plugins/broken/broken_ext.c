/* broken_ext: an ABI 1.2 extension chain that loops (two extensions naming
   each other as `next`): the host must refuse it, not walk it forever. */
#include "test_plugin.h"

static const ampx_extension ext_b;
static const ampx_extension ext_a = {sizeof(ampx_extension), 999, &ext_b};
static const ampx_extension ext_b = {sizeof(ampx_extension), 998, &ext_a};

static const ampx_plugin_api table = {
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
    .plugin_name = "broken_ext",
    .plugin_version = "0.0.1",
    .plugin_create = tp_create_no_devices,
    .device_count = tp_device_count,
    .extensions = &ext_a,
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
    TP_STUB_MEMBERS,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &table;
}
