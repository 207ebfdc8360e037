/*
 * c_minimal: the smallest working plugin, in plain C99. One host-memory device,
 * no kernels: query_capability answers unsupported and kernel_prepare fails
 * with UNSUPPORTED. Proves that a pure-C plugin works with the host.
 *
 * Built three times from this file:
 *  - c_minimal: the current v1 table;
 *  - c_old (C_MINIMAL_OLD): reports the minimal v1 struct_size, so the
 *    optional buffer_host_ptr lies past it; that member points at a function
 *    that aborts, to prove the host treats it as NULL;
 *  - c_future (C_MINIMAL_FUTURE): a newer minor with a longer table;
 *  - c_native (C_MINIMAL_NATIVE): with ABI 1.6 native handles that claim
 *    CUDA (ordinal 0, a stream that is the plugin instance's address, a
 *    buffer's host memory as its "device address"): the NCCL exchange's
 *    logic tested against a stand-in for NCCL that works on host memory
 *    (tests/nccl). Nothing ever hands these handles to CUDA.
 */
#include "test_plugin.h"

#ifndef C_MINIMAL_NAME
#define C_MINIMAL_NAME "c_minimal"
#endif

static ampx_status* cm_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
  return tp_create(1, args, out);
}

static ampx_status* cm_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  (void)plugin;
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_plugin_info, note)) {
    snprintf(out->note, sizeof(out->note), "one host-memory device, no kernels");
  }
  if (TP_FITS(out, ampx_plugin_info, library)) {
    snprintf(out->library, sizeof(out->library), "C99 libc");
  }
  return NULL;
}

static ampx_status* cm_device_props(ampx_plugin* plugin, int32_t device, ampx_device_props* out) {
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_device_props, name)) {
    snprintf(out->name, sizeof(out->name), "%s host memory", C_MINIMAL_NAME);
  }
  if (TP_FITS(out, ampx_device_props, vendor)) snprintf(out->vendor, sizeof(out->vendor), "ampx");
  if (TP_FITS(out, ampx_device_props, driver_version)) {
    snprintf(out->driver_version, sizeof(out->driver_version), "1.0");
  }
  if (TP_FITS(out, ampx_device_props, fingerprint)) {
    snprintf(out->fingerprint, sizeof(out->fingerprint), "%s/1.0", C_MINIMAL_NAME);
  }
  if (TP_FITS(out, ampx_device_props, memory_bytes)) out->memory_bytes = 0;
  if (TP_FITS(out, ampx_device_props, type)) out->type = AMPX_DEVICE_CPU;
  if (TP_FITS(out, ampx_device_props, compute_units)) out->compute_units = 1;
  return NULL;
}

static ampx_status* cm_query(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                             ampx_capability* out) {
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  if (node == NULL || out == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL argument");
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_capability, support)) out->support = AMPX_SUPPORT_UNSUPPORTED;
  if (TP_FITS(out, ampx_capability, cost_us)) out->cost_us = -1.0;
  if (TP_FITS(out, ampx_capability, note)) {
    snprintf(out->note, sizeof(out->note), "%s has no kernels", C_MINIMAL_NAME);
  }
  return NULL;
}

static ampx_status* cm_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                               ampx_kernel** out) {
  ampx_status* status = tp_check_device(plugin, device);
  (void)out;
  if (status != NULL) return status;
  return tp_status(AMPX_STATUS_UNSUPPORTED, "%s has no kernels (asked for %s)", C_MINIMAL_NAME,
                   node != NULL && node->op_type != NULL ? node->op_type : "?");
}

#if defined(C_MINIMAL_OLD)
/* Lies past the reported struct_size: the host must never call it. */
static void* cm_trap_host_ptr(ampx_buffer* buffer) {
  (void)buffer;
  abort();
}
#define CM_HOST_PTR cm_trap_host_ptr
#define CM_TABLE_SIZE AMPX_PLUGIN_API_MIN_SIZE_V1
#else
#define CM_HOST_PTR tp_buffer_host_ptr
#define CM_TABLE_SIZE sizeof(ampx_plugin_api)
#endif

#if defined(C_MINIMAL_NATIVE)
static ampx_status* cm_native_device(ampx_plugin* plugin, int32_t device, ampx_native_device* out) {
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  if (out == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "native_device: NULL out");
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  out->api = AMPX_NATIVE_API_CUDA;
  out->ordinal = 0;
  out->stream = plugin;
  return NULL;
}
static ampx_status* cm_buffer_native_ptr(ampx_buffer* buffer, void** out) {
  if (buffer == NULL || out == NULL)
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "buffer_native_ptr: NULL argument");
  *out = buffer->data;
  return NULL;
}
static const ampx_native_handles_extension cm_native_ext = {
    {sizeof(ampx_native_handles_extension), AMPX_EXTENSION_NATIVE_HANDLES, NULL},
    cm_native_device,
    cm_buffer_native_ptr};
#define CM_EXTENSIONS .extensions = &cm_native_ext.base,
#else
#define CM_EXTENSIONS
#endif

#define CM_MEMBERS                                                                               \
  .abi_major = AMPX_ABI_VERSION_MAJOR, .plugin_name = C_MINIMAL_NAME, .plugin_version = "1.0.0", \
  .plugin_create = cm_create, .plugin_info = cm_info, .device_count = tp_device_count,           \
  .device_props = cm_device_props, .query_capability = cm_query, .kernel_prepare = cm_prepare,   \
  .kernel_launch = tp_launch_unsupported, .kernel_destroy = tp_kernel_destroy_none,              \
  .buffer_host_ptr = CM_HOST_PTR, CM_EXTENSIONS TP_STATUS_MEMBERS, TP_BUFFER_MEMBERS

#if defined(C_MINIMAL_FUTURE)
/* A table from a future minor version: members appended at the end. */
typedef struct cm_future_api {
  ampx_plugin_api v1;
  void (*added_in_a_later_minor)(void);
} cm_future_api;

static void cm_later(void) {
  abort();
}

static const cm_future_api cm_table = {
    {.struct_size = sizeof(cm_future_api), .abi_minor = AMPX_ABI_VERSION_MINOR + 9, CM_MEMBERS},
    cm_later};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &cm_table.v1;
}
#else
static const ampx_plugin_api cm_table = {
    .struct_size = CM_TABLE_SIZE, .abi_minor = AMPX_ABI_VERSION_MINOR, CM_MEMBERS};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &cm_table;
}
#endif
