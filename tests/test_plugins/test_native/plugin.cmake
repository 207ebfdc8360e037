# test_native: the reference kernels behind configurable capability answers
# (see plugin.cpp). Built into AMPX_TEST_PLUGIN_DIR, never the default path.
ampx_add_plugin(test_native
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/plugin.cpp
  LIBS ampx_host_plugin
  OUTPUT_DIR ${AMPX_TEST_PLUGIN_DIR})
