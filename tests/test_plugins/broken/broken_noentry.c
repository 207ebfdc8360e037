/* broken_noentry: a shared library without the entry symbol (a typo'd name). */
#include "ampx/backend_api.h"

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entri(void) {
  return NULL;
}
