# ampx_add_plugin(<name> SOURCES <src>... [LIBS <lib>...] [OUTPUT_DIR <dir>]
#                 [NODELETE] [NO_INSTALL])
#
# Builds the backend plugin `libampx_backend_<name>.so`, the file name the
# host looks for, as a MODULE library that exports exactly one dynamic
# symbol, ampx_plugin_entry (the export map: hidden visibility alone still
# leaves libstdc++ template instantiations and unique symbols in the dynamic
# table, and two plugins' copies of them would then bind to each other).
#
#   SOURCES     the plugin's sources (one of them defines ampx_plugin_entry
#               with AMPX_PLUGIN_EXPORT).
#   LIBS        libraries linked privately (ampx::backend_api always is).
#   OUTPUT_DIR  where the module is built; default AMPX_PLUGIN_OUTPUT_DIR, or
#               <build>/lib/ampx/plugins. A plugin given OUTPUT_DIR is not
#               installed (the test plugins).
#   NODELETE    link with -z nodelete: the library stays mapped after
#               dlclose(). Needed when the plugin (or a library it loads)
#               leaves threads running after plugin_destroy, as OpenMP's
#               worker pool does: unmapping their code under them crashes.
#   NO_INSTALL  no install rule.
#
# `cmake --install` puts the plugin in <prefix>/<libdir>/ampx/plugins
# (AMPX_PLUGIN_INSTALL_SUBDIR), where the ampx host of that prefix finds it;
# any other directory works through AMPX_PLUGIN_PATH or `ampx --plugin-dir`.
#
# One definition, used in the ampx tree and installed with find_package(ampx)
# (ampxConfig.cmake sets AMPX_PLUGIN_EXPORT_MAP to the installed map).
include_guard(GLOBAL)
include(GNUInstallDirs)

if(NOT DEFINED AMPX_PLUGIN_EXPORT_MAP)
  set(AMPX_PLUGIN_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map)
endif()
if(NOT DEFINED AMPX_PLUGIN_INSTALL_SUBDIR)
  set(AMPX_PLUGIN_INSTALL_SUBDIR ${CMAKE_INSTALL_LIBDIR}/ampx/plugins)
endif()

function(ampx_add_plugin name)
  cmake_parse_arguments(P "NODELETE;NO_INSTALL" "OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  if(NOT name MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "ampx_add_plugin: plugin name '${name}' must be [a-z0-9_]+")
  endif()
  if(NOT P_SOURCES)
    message(FATAL_ERROR "ampx_add_plugin(${name}): no SOURCES")
  endif()
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ampx_add_plugin(${name}): unknown arguments ${P_UNPARSED_ARGUMENTS}")
  endif()
  set(target ampx_backend_${name})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE ampx::backend_api ${P_LIBS})
  set(install ON)
  if(P_OUTPUT_DIR OR P_NO_INSTALL)
    set(install OFF)
  endif()
  if(NOT P_OUTPUT_DIR)
    if(DEFINED AMPX_PLUGIN_OUTPUT_DIR)
      set(P_OUTPUT_DIR ${AMPX_PLUGIN_OUTPUT_DIR})
    else()
      set(P_OUTPUT_DIR ${CMAKE_BINARY_DIR}/lib/ampx/plugins)
    endif()
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE "-Wl,--version-script=${AMPX_PLUGIN_EXPORT_MAP}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${AMPX_PLUGIN_EXPORT_MAP})
  if(P_NODELETE)
    target_link_options(${target} PRIVATE "-Wl,-z,nodelete")
  endif()
  if(install)
    install(TARGETS ${target} LIBRARY DESTINATION ${AMPX_PLUGIN_INSTALL_SUBDIR})
  endif()
endfunction()
