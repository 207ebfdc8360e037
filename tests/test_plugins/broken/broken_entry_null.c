/* broken_entry_null: the entry symbol exists but returns no table. */
#include "ampx/backend_api.h"

#include <stddef.h>

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return NULL;
}
