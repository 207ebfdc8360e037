# liar, oob_writer and leaker (plugin.cpp): kernels only `ampx plugin-check`
# catches. Built into AMPX_HOSTILE_PLUGIN_DIR with the hostile zoo.
foreach(name liar oob_writer leaker)
  ampx_add_plugin(${name} SOURCES ${CMAKE_CURRENT_LIST_DIR}/plugin.cpp
                  LIBS ampx_host_plugin OUTPUT_DIR ${AMPX_HOSTILE_PLUGIN_DIR})
  target_compile_definitions(ampx_backend_${name} PRIVATE MISBEHAVING_NAME="${name}")
endforeach()
target_compile_definitions(ampx_backend_liar PRIVATE MISBEHAVING_LIAR=1)
target_compile_definitions(ampx_backend_leaker PRIVATE MISBEHAVING_LEAKER=1)
set_property(GLOBAL APPEND PROPERTY AMPX_BROKEN_PLUGIN_TARGETS ampx_backend_liar
             ampx_backend_oob_writer ampx_backend_leaker)
