/* broken_init: a valid table whose plugin_create fails. */
#include "test_plugin.h"

static ampx_status* create_fails(const ampx_plugin_create_args* args, ampx_plugin** out) {
  (void)args;
  (void)out;
  return tp_status(AMPX_STATUS_UNAVAILABLE, "simulated init failure");
}

TP_PLUGIN(sizeof(ampx_plugin_api), AMPX_ABI_VERSION_MAJOR, AMPX_ABI_VERSION_MINOR, "broken_init",
          create_fails)
