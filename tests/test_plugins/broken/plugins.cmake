# Test plugins for the plugin host, all in C99 (which also proves that the ABI
# header compiles as C): working ones (c_minimal and its c_old / c_future
# variants, c_relu) next to broken ones, in ${AMPX_BROKEN_PLUGIN_DIR} so one
# discovery sees good and bad side by side. Never on the default search path.
# Included from tests/test_plugins/CMakeLists.txt.

set(_ampx_broken_dir ${CMAKE_CURRENT_LIST_DIR})
set(_ampx_broken_targets)

function(_ampx_c_test_plugin name source)
  set(src ${_ampx_broken_dir}/${source})
  set_source_files_properties(${src} PROPERTIES LANGUAGE C)
  ampx_add_plugin(${name} SOURCES ${src} OUTPUT_DIR ${AMPX_BROKEN_PLUGIN_DIR})
  set(target ampx_backend_${name})
  set_target_properties(${target} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_include_directories(${target} PRIVATE ${_ampx_broken_dir})
  target_compile_options(${target} PRIVATE
    $<$<C_COMPILER_ID:GNU,Clang,AppleClang>:-pedantic-errors -Wstrict-prototypes>)
  set(_ampx_broken_targets ${_ampx_broken_targets} ${target} PARENT_SCOPE)
endfunction()

_ampx_c_test_plugin(c_minimal c_minimal.c)
_ampx_c_test_plugin(c_old c_minimal.c)
target_compile_definitions(ampx_backend_c_old PRIVATE C_MINIMAL_OLD C_MINIMAL_NAME="c_old")
_ampx_c_test_plugin(c_future c_minimal.c)
target_compile_definitions(ampx_backend_c_future PRIVATE C_MINIMAL_FUTURE C_MINIMAL_NAME="c_future")
_ampx_c_test_plugin(c_relu c_relu.c)

_ampx_c_test_plugin(broken_noentry broken_noentry.c)
_ampx_c_test_plugin(broken_entry_null broken_entry_null.c)
_ampx_c_test_plugin(broken_abi broken_abi.c)
_ampx_c_test_plugin(broken_small broken_small.c)
_ampx_c_test_plugin(broken_init broken_init.c)
_ampx_c_test_plugin(broken_null broken_null.c)
_ampx_c_test_plugin(broken_name broken_name.c)
_ampx_c_test_plugin(broken_devices broken_devices.c)
_ampx_c_test_plugin(broken_ext broken_ext.c)

# The hostile zoo (hostile.c): each would crash, hang or exit() the host in
# loading, creation, enumeration or a capability query. Their own directory:
# only the pre-flight tests look there.
foreach(kind CRASH_ENTRY EXIT_ENTRY EXIT_CREATE ABORT_CREATE CRASH_DEVICES CRASH_QUERY HANG_QUERY)
  string(TOLOWER "hostile_${kind}" name)
  set(src ${_ampx_broken_dir}/hostile.c)
  set_source_files_properties(${src} PROPERTIES LANGUAGE C)
  ampx_add_plugin(${name} SOURCES ${src} OUTPUT_DIR ${AMPX_HOSTILE_PLUGIN_DIR})
  set(target ampx_backend_${name})
  set_target_properties(${target} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
  target_include_directories(${target} PRIVATE ${_ampx_broken_dir})
  target_compile_definitions(${target} PRIVATE HOSTILE_${kind} HOSTILE_NAME="${name}"
                             _POSIX_C_SOURCE=200809L)
  list(APPEND _ampx_broken_targets ${target})
endforeach()

# c_relu without its NULL-kernel check, reading input views at offset 0 and
# freeing kernels without a live-handle table (a second destroy frees twice):
# what `ampx plugin-check` must report (a crash on a bad argument, a wrong
# view) without dying itself. With the hostile zoo: only tests look there.
set(src ${_ampx_broken_dir}/c_relu.c)
ampx_add_plugin(c_relu_careless SOURCES ${src} OUTPUT_DIR ${AMPX_HOSTILE_PLUGIN_DIR})
set_target_properties(ampx_backend_c_relu_careless PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_include_directories(ampx_backend_c_relu_careless PRIVATE ${_ampx_broken_dir})
target_compile_definitions(ampx_backend_c_relu_careless PRIVATE C_RELU_CARELESS
                           C_RELU_NAME="c_relu_careless")
list(APPEND _ampx_broken_targets ampx_backend_c_relu_careless)

# A vendor's plugin built against ABI 1.0 that follows 1.0's rules only (no
# survivable double destroys, no NULLed out handle on failure: 1.3's rules).
# With the hostile zoo: only tests look there.
ampx_add_plugin(c_relu_abi10 SOURCES ${src} OUTPUT_DIR ${AMPX_HOSTILE_PLUGIN_DIR})
set_target_properties(ampx_backend_c_relu_abi10 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_include_directories(ampx_backend_c_relu_abi10 PRIVATE ${_ampx_broken_dir})
target_compile_definitions(ampx_backend_c_relu_abi10 PRIVATE C_RELU_ABI_1_0 TP_ABI_1_0_DESTROYS
                           C_RELU_NAME="c_relu_abi10")
list(APPEND _ampx_broken_targets ampx_backend_c_relu_abi10)

# tests/plugin_host depends on these (a sibling directory: a global property).
set_property(GLOBAL APPEND PROPERTY AMPX_BROKEN_PLUGIN_TARGETS ${_ampx_broken_targets})
unset(_ampx_broken_targets)
