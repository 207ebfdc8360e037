/* broken_small: a v1 table whose struct_size (24) is below the v1 minimum. */
#include "test_plugin.h"

TP_PLUGIN(24, AMPX_ABI_VERSION_MAJOR, AMPX_ABI_VERSION_MINOR, "broken_small", tp_create_no_devices)
