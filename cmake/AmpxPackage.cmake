# The installed plugin SDK: `cmake --install` writes the headers (by their
# own directories), these libraries and <libdir>/cmake/ampx/ with
# ampxConfig.cmake, its version file (same major: the plugin ABI's rule),
# the exported targets, AmpxPlugin.cmake and the export map; and
# <libdir>/pkgconfig/ampx-plugin.pc for builds without CMake (the C ABI
# headers only). examples/plugin_template builds against it.
include(CMakePackageConfigHelpers)

file(STRINGS ${PROJECT_SOURCE_DIR}/sdk/backend_api/include/ampx/backend_api.h abi_lines
     REGEX "^#define AMPX_ABI_VERSION_(MAJOR|MINOR) [0-9]+")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" abi_major "${abi_lines}")
string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" abi_minor "${abi_lines}")
set(AMPX_ABI_VERSION "${abi_major}.${abi_minor}")

set(AMPX_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ampx)
set_target_properties(ampx_backend_api PROPERTIES EXPORT_NAME backend_api)
set_target_properties(ampx_opset PROPERTIES EXPORT_NAME opset)
set_target_properties(ampx_reference_kernels PROPERTIES EXPORT_NAME reference_kernels)
set_target_properties(ampx_host_plugin PROPERTIES EXPORT_NAME host_plugin)
install(TARGETS ampx_backend_api ampx_opset ampx_reference_kernels ampx_host_plugin
        EXPORT ampxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ampxTargets NAMESPACE ampx:: DESTINATION ${AMPX_CMAKE_INSTALL_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ampxConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ampxConfig.cmake
  INSTALL_DESTINATION ${AMPX_CMAKE_INSTALL_DIR}
  PATH_VARS AMPX_PLUGIN_INSTALL_SUBDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ampxConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ampxConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/ampxConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/AmpxPlugin.cmake
              ${AMPX_PLUGIN_EXPORT_MAP}
        DESTINATION ${AMPX_CMAKE_INSTALL_DIR})

configure_file(${CMAKE_CURRENT_LIST_DIR}/ampx-plugin.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/ampx-plugin.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ampx-plugin.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
