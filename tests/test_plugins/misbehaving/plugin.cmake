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

# The hostile zoo's kernels and C++ exceptions (plugin.cpp, HOSTILE_*): with
# the hostile C plugins, where only tests look.
foreach(kind LAUNCH_CRASH LAUNCH_HANG LAUNCH_OOB_256 LAUNCH_OOB_16M THROW_DEVICES THROW_QUERY)
  string(TOLOWER "hostile_${kind}" name)
  ampx_add_plugin(${name} SOURCES ${CMAKE_CURRENT_LIST_DIR}/plugin.cpp
                  LIBS ampx_host_plugin OUTPUT_DIR ${AMPX_HOSTILE_PLUGIN_DIR})
  target_compile_definitions(ampx_backend_${name} PRIVATE MISBEHAVING_NAME="${name}")
  if(kind STREQUAL "LAUNCH_OOB_256")
    target_compile_definitions(ampx_backend_${name} PRIVATE HOSTILE_LAUNCH_OOB=256)
  elseif(kind STREQUAL "LAUNCH_OOB_16M")
    target_compile_definitions(ampx_backend_${name} PRIVATE HOSTILE_LAUNCH_OOB=16777216)
  else()
    target_compile_definitions(ampx_backend_${name} PRIVATE HOSTILE_${kind})
  endif()
  set_property(GLOBAL APPEND PROPERTY AMPX_BROKEN_PLUGIN_TARGETS ampx_backend_${name})
endforeach()
