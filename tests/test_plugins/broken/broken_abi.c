/* broken_abi: built against a future major version of the ABI. */
#include "test_plugin.h"

TP_PLUGIN(sizeof(ampx_plugin_api), 2, 0, "broken_abi", tp_create_no_devices)
