/* broken_name: a plugin_name outside [a-z0-9_]+. */
#include "test_plugin.h"

TP_PLUGIN(sizeof(ampx_plugin_api), AMPX_ABI_VERSION_MAJOR, AMPX_ABI_VERSION_MINOR, "Broken-Name",
          tp_create_no_devices)
