/*
 * Shared pieces of the C99 test plugins in this directory: status objects,
 * the plugin instance, malloc'd host buffers, and stubs for the members a
 * plugin does not care about. Everything is `static inline` so that each
 * plugin uses what it needs without unused-function warnings.
 */
#ifndef AMPX_TEST_PLUGIN_H_
#define AMPX_TEST_PLUGIN_H_

#include "ampx/backend_api.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does `member` of the struct at `p` lie within p->struct_size bytes? A plugin
 * must not write past what the host declared. */
#define TP_FITS(p, type, member) \
  (offsetof(type, member) + sizeof(((type*)0)->member) <= (p)->struct_size)
#define TP_MIN(a, b) ((a) < (b) ? (a) : (b))

/* -------------------------------------------------------- live handles */

/* The handles handed out and not destroyed yet, so that a second destroy (the
 * host's bug; backend_api.h asks a plugin to survive it) is ignored instead of
 * freeing twice. A fixed table: the host calls one thread at a time. */
#define TP_MAX_LIVE 4096
static inline const void** tp_live_table(size_t** count) {
  static const void* table[TP_MAX_LIVE];
  static size_t n = 0;
  *count = &n;
  return table;
}
/* TP_ABI_1_0_DESTROYS: no table, as ABI 1.0 asked none (the NULL and
 * repeated-destroy rules came with 1.3): a second destroy frees twice. */
/* 0 when the table is full (the caller's create then fails). */
static inline int tp_live_add(const void* handle) {
#ifdef TP_ABI_1_0_DESTROYS
  (void)handle;
  return 1;
#else
  size_t* n;
  const void** table = tp_live_table(&n);
  if (*n == TP_MAX_LIVE) return 0;
  table[(*n)++] = handle;
  return 1;
#endif
}
/* 1 when `handle` was live; it is no longer. */
static inline int tp_live_remove(const void* handle) {
#ifdef TP_ABI_1_0_DESTROYS
  (void)handle;
  return 1;
#else
  size_t* n;
  size_t i;
  const void** table = tp_live_table(&n);
  for (i = 0; i < *n; ++i) {
    if (table[i] == handle) {
      table[i] = table[--*n];
      return 1;
    }
  }
  fprintf(stderr, "[ampx test plugin] handle %p is not live (destroyed twice?): ignored\n", handle);
  return 0;
#endif
}

/* ------------------------------------------------------------ statuses */

struct ampx_status {
  ampx_status_code code;
  char message[256];
};

/* Returned when a status cannot be allocated; never freed. */
static ampx_status tp_oom_status = {AMPX_STATUS_OUT_OF_MEMORY, "out of memory"};

static inline ampx_status* tp_status(ampx_status_code code, const char* format, ...) {
  va_list args;
  ampx_status* status = (ampx_status*)malloc(sizeof(ampx_status));
  if (status == NULL) return &tp_oom_status;
  if (!tp_live_add(status)) {
    free(status);
    return &tp_oom_status;
  }
  status->code = code;
  va_start(args, format);
  vsnprintf(status->message, sizeof(status->message), format, args);
  va_end(args);
  return status;
}

static inline ampx_status_code tp_status_code(const ampx_status* status) {
  return status->code;
}
static inline const char* tp_status_message(const ampx_status* status) {
  return status->message;
}
static inline void tp_status_destroy(ampx_status* status) {
  if (status != NULL && status != &tp_oom_status && tp_live_remove(status)) free(status);
}

/* ------------------------------------------------------------ instance */

struct ampx_plugin {
  int32_t log_level;
  int32_t num_devices;
};

static inline ampx_status* tp_create(int32_t num_devices, const ampx_plugin_create_args* args,
                                     ampx_plugin** out) {
  ampx_plugin* plugin;
  if (args == NULL || out == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL argument");
  plugin = (ampx_plugin*)malloc(sizeof(ampx_plugin));
  if (plugin == NULL) return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "out of memory");
  plugin->log_level = TP_FITS(args, ampx_plugin_create_args, log_level) ? args->log_level : 2;
  plugin->num_devices = num_devices;
  if (!tp_live_add(plugin)) {
    free(plugin);
    return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "too many live handles");
  }
  *out = plugin;
  return NULL;
}

static inline ampx_status* tp_create_no_devices(const ampx_plugin_create_args* args,
                                                ampx_plugin** out) {
  return tp_create(0, args, out);
}

static inline void tp_plugin_destroy(ampx_plugin* plugin) {
  if (plugin != NULL && tp_live_remove(plugin)) free(plugin);
}

static inline ampx_status* tp_device_count(ampx_plugin* plugin, int32_t* out) {
  *out = plugin->num_devices;
  return NULL;
}

static inline ampx_status* tp_check_device(const ampx_plugin* plugin, int32_t device) {
  if (device < 0 || device >= plugin->num_devices) {
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "no device %d (have %d)", (int)device,
                     (int)plugin->num_devices);
  }
  return NULL;
}

static inline ampx_status* tp_synchronize(ampx_plugin* plugin, int32_t device) {
  return tp_check_device(plugin, device); /* everything is synchronous */
}

/* ------------------------------------------------------------- buffers */

struct ampx_buffer {
  uint64_t size;
  int32_t device;
  unsigned char* data;
};

static inline ampx_status* tp_buffer_alloc(ampx_plugin* plugin, int32_t device, uint64_t bytes,
                                           ampx_buffer** out) {
  ampx_buffer* buffer;
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  /* A test plugin: refuse absurd sizes rather than ask malloc (ASan aborts). */
  if (bytes > ((uint64_t)1 << 40) || bytes > (uint64_t)SIZE_MAX) {
    return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "%llu bytes is too large",
                     (unsigned long long)bytes);
  }
  buffer = (ampx_buffer*)malloc(sizeof(ampx_buffer));
  if (buffer == NULL) return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "out of memory");
  buffer->data = (unsigned char*)malloc(bytes > 0 ? (size_t)bytes : 1);
  if (buffer->data == NULL) {
    free(buffer);
    return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                     (unsigned long long)bytes);
  }
  buffer->size = bytes;
  buffer->device = device;
  if (!tp_live_add(buffer)) {
    free(buffer->data);
    free(buffer);
    return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "too many live handles");
  }
  *out = buffer;
  return NULL;
}

static inline void tp_buffer_free(ampx_buffer* buffer) {
  if (buffer == NULL || !tp_live_remove(buffer)) return;
  free(buffer->data);
  free(buffer);
}

static inline ampx_status* tp_check_range(const ampx_buffer* buffer, uint64_t offset,
                                          uint64_t bytes) {
  if (buffer == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL buffer");
  if (offset > buffer->size || bytes > buffer->size - offset) {
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT,
                     "%llu bytes at offset %llu are outside a buffer of %llu bytes",
                     (unsigned long long)bytes, (unsigned long long)offset,
                     (unsigned long long)buffer->size);
  }
  return NULL;
}

static inline ampx_status* tp_copy_to_device(ampx_buffer* dst, uint64_t dst_offset, const void* src,
                                             uint64_t bytes) {
  ampx_status* status = tp_check_range(dst, dst_offset, bytes);
  if (status != NULL) return status;
  if (src == NULL && bytes > 0) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL source");
  if (bytes > 0) memcpy(dst->data + dst_offset, src, (size_t)bytes);
  return NULL;
}

static inline ampx_status* tp_copy_to_host(void* dst, const ampx_buffer* src, uint64_t src_offset,
                                           uint64_t bytes) {
  ampx_status* status = tp_check_range(src, src_offset, bytes);
  if (status != NULL) return status;
  if (dst == NULL && bytes > 0) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL destination");
  if (bytes > 0) memcpy(dst, src->data + src_offset, (size_t)bytes);
  return NULL;
}

static inline ampx_status* tp_copy_device_to_device(ampx_buffer* dst, uint64_t dst_offset,
                                                    const ampx_buffer* src, uint64_t src_offset,
                                                    uint64_t bytes) {
  ampx_status* status = tp_check_range(dst, dst_offset, bytes);
  if (status == NULL) status = tp_check_range(src, src_offset, bytes);
  if (status != NULL) return status;
  if (bytes > 0) memmove(dst->data + dst_offset, src->data + src_offset, (size_t)bytes);
  return NULL;
}

static inline void* tp_buffer_host_ptr(ampx_buffer* buffer) {
  return buffer->data;
}

/* --------------------------------------------------------------- stubs */

static inline ampx_status* tp_info_empty(ampx_plugin* plugin, ampx_plugin_info* out) {
  (void)plugin;
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  return NULL;
}

static inline ampx_status* tp_device_props_none(ampx_plugin* plugin, int32_t device,
                                                ampx_device_props* out) {
  (void)out;
  return tp_check_device(plugin, device);
}

static inline ampx_status* tp_query_unsupported(ampx_plugin* plugin, int32_t device,
                                                const ampx_node_desc* node, ampx_capability* out) {
  (void)node;
  (void)out;
  return tp_check_device(plugin, device);
}

static inline ampx_status* tp_prepare_unsupported(ampx_plugin* plugin, int32_t device,
                                                  const ampx_node_desc* node, ampx_kernel** out) {
  (void)plugin;
  (void)device;
  (void)out;
  return tp_status(AMPX_STATUS_UNSUPPORTED, "no kernel for %s", node->op_type);
}

static inline ampx_status* tp_launch_unsupported(ampx_kernel* kernel, const ampx_buffer_view* in,
                                                 size_t num_in, const ampx_buffer_view* outs,
                                                 size_t num_out) {
  (void)kernel;
  (void)in;
  (void)num_in;
  (void)outs;
  (void)num_out;
  return tp_status(AMPX_STATUS_INTERNAL, "there are no kernels to launch");
}

static inline void tp_kernel_destroy_none(ampx_kernel* kernel) {
  (void)kernel;
}

/* Designated initializers for a table, minus the members each plugin sets
 * itself: the version fields, plugin_create, device_count and what it breaks
 * or implements. */
#define TP_STATUS_MEMBERS                                             \
  .status_code = tp_status_code, .status_message = tp_status_message, \
  .status_destroy = tp_status_destroy

#define TP_BUFFER_MEMBERS                                                             \
  .plugin_destroy = tp_plugin_destroy, .buffer_alloc = tp_buffer_alloc,               \
  .buffer_free = tp_buffer_free, .copy_to_device = tp_copy_to_device,                 \
  .copy_to_host = tp_copy_to_host, .copy_device_to_device = tp_copy_device_to_device, \
  .synchronize = tp_synchronize

#define TP_STUB_MEMBERS_BUT_LAUNCH                                                    \
  .plugin_info = tp_info_empty, .device_props = tp_device_props_none,                 \
  .query_capability = tp_query_unsupported, .kernel_prepare = tp_prepare_unsupported, \
  .kernel_destroy = tp_kernel_destroy_none

#define TP_STUB_MEMBERS TP_STUB_MEMBERS_BUT_LAUNCH, .kernel_launch = tp_launch_unsupported

/* A whole table with every member filled, plus the entry point: each broken
   plugin passes the one field it breaks and keeps the rest valid. */
#define TP_PLUGIN(size, major, minor, name, create)                   \
  static const ampx_plugin_api table = {                              \
      .struct_size = (size),                                          \
      .abi_major = (major),                                           \
      .abi_minor = (minor),                                           \
      .plugin_name = (name),                                          \
      .plugin_version = "0.0.1",                                      \
      .plugin_create = (create),                                      \
      .device_count = tp_device_count,                                \
      TP_STATUS_MEMBERS,                                              \
      TP_BUFFER_MEMBERS,                                              \
      TP_STUB_MEMBERS,                                                \
  };                                                                  \
  AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) { \
    return &table;                                                    \
  }

#endif /* AMPX_TEST_PLUGIN_H_ */
