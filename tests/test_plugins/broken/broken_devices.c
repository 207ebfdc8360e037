/* broken_devices: creates fine, then fails to count its devices. The host
 * must still destroy the instance it created (checked by LeakSanitizer). */
#include "test_plugin.h"

static ampx_status* count_fails(ampx_plugin* plugin, int32_t* out) {
  (void)plugin;
  (void)out;
  return tp_status(AMPX_STATUS_UNAVAILABLE, "simulated device_count failure");
}

static ampx_status* create_one(const ampx_plugin_create_args* args, ampx_plugin** out) {
  return tp_create(1, args, out);
}

static const ampx_plugin_api table = {
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
    .plugin_name = "broken_devices",
    .plugin_version = "0.0.1",
    .plugin_create = create_one,
    .device_count = count_fails,
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
    TP_STUB_MEMBERS,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &table;
}
