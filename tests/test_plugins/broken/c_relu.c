/*
 * c_relu: a small working C99 plugin with kernels, for the host's lifetime
 * tests. Two host-memory devices; one kernel: Relu on f32 (native).
 * C_RELU_ABI_1_0 (c_relu_abi10): a vendor's plugin built against ABI 1.0,
 * following 1.0's rules only: a 1.0 table (up to buffer_host_ptr), no live
 * handle table (a second destroy frees twice) and a failed kernel_prepare
 * leaves its out handle as it was (both rules came with 1.3).
 */
#include "test_plugin.h"

#ifndef C_RELU_NAME
#define C_RELU_NAME "c_relu"
#endif

struct ampx_kernel {
  int32_t device;
  uint64_t count; /* elements */
};

static ampx_status* cr_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
  return tp_create(2, args, out);
}

static ampx_status* cr_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  (void)plugin;
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_plugin_info, library)) {
    snprintf(out->library, sizeof(out->library), "C99 libc");
  }
  return NULL;
}

static ampx_status* cr_device_props(ampx_plugin* plugin, int32_t device, ampx_device_props* out) {
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_device_props, name)) {
    snprintf(out->name, sizeof(out->name), "c_relu device %d", (int)device);
  }
  if (TP_FITS(out, ampx_device_props, fingerprint)) {
    snprintf(out->fingerprint, sizeof(out->fingerprint), "c_relu/1.0");
  }
  if (TP_FITS(out, ampx_device_props, type)) out->type = AMPX_DEVICE_CPU;
  return NULL;
}

/* Number of elements of a fully described f32 tensor, or -1. */
static int64_t cr_f32_elements(const ampx_tensor_desc* tensor) {
  int64_t count = 1;
  int32_t i;
  if (!TP_FITS(tensor, ampx_tensor_desc, dims) || tensor->dtype != AMPX_DTYPE_F32) return -1;
  if (tensor->rank < 0 || (tensor->rank > 0 && tensor->dims == NULL)) return -1;
  for (i = 0; i < tensor->rank; ++i) {
    if (tensor->dims[i] < 0) return -1;
    count *= tensor->dims[i];
  }
  return count;
}

/* NULL when the node is a Relu this plugin runs; *count gets its size. */
static const char* cr_why_not(const ampx_node_desc* node, uint64_t* count) {
  int64_t in_count, out_count;
  if (node == NULL) return "NULL node";
  if (!TP_FITS(node, ampx_node_desc, outputs) || node->op_type == NULL) return "bad node";
  if (strcmp(node->op_type, "Relu") != 0) return "c_relu runs Relu only";
  if (node->num_inputs != 1 || node->num_outputs != 1) return "Relu takes one input, one output";
  in_count = cr_f32_elements(&node->inputs[0]);
  out_count = cr_f32_elements(&node->outputs[0]);
  if (in_count < 0 || out_count < 0) return "f32 only";
  if (in_count != out_count) return "input and output sizes differ";
  *count = (uint64_t)in_count;
  return NULL;
}

static ampx_status* cr_query(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                             ampx_capability* out) {
  uint64_t count = 0;
  const char* why_not;
  ampx_status* status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  if (out == NULL || node == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL argument");
  why_not = cr_why_not(node, &count);
  out->struct_size = TP_MIN(out->struct_size, sizeof(*out));
  if (TP_FITS(out, ampx_capability, support)) {
    out->support = why_not == NULL ? AMPX_SUPPORT_NATIVE : AMPX_SUPPORT_UNSUPPORTED;
  }
  if (TP_FITS(out, ampx_capability, cost_us)) {
    out->cost_us = why_not == NULL ? 0.001 * (double)count : -1.0;
  }
  if (TP_FITS(out, ampx_capability, note)) {
    snprintf(out->note, sizeof(out->note), "%s", why_not == NULL ? "" : why_not);
  }
  return NULL;
}

static ampx_status* cr_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                               ampx_kernel** out) {
  uint64_t count = 0;
  const char* why_not;
  ampx_kernel* kernel;
  ampx_status* status;
  if (out == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL out");
#ifndef C_RELU_ABI_1_0
  *out = NULL; /* a failed call leaves it NULL (since ABI 1.3) */
#endif
  status = tp_check_device(plugin, device);
  if (status != NULL) return status;
  why_not = cr_why_not(node, &count);
  if (why_not != NULL) return tp_status(AMPX_STATUS_UNSUPPORTED, "%s", why_not);
  kernel = (ampx_kernel*)malloc(sizeof(ampx_kernel));
  if (kernel == NULL) return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "out of memory");
  kernel->device = device;
  kernel->count = count;
#if !defined(C_RELU_CARELESS) && !defined(C_RELU_ABI_1_0)
  if (!tp_live_add(kernel)) {
    free(kernel);
    return tp_status(AMPX_STATUS_OUT_OF_MEMORY, "too many live handles");
  }
#endif
  *out = kernel;
  return NULL;
}

static ampx_status* cr_launch(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                              size_t num_inputs, const ampx_buffer_view* outputs,
                              size_t num_outputs) {
  uint64_t bytes;
  const float* x;
  float* y;
  uint64_t i;
  ampx_status* status;
#ifndef C_RELU_CARELESS
  if (kernel == NULL) return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL kernel");
#endif
  bytes = kernel->count * sizeof(float);
  if (num_inputs != 1 || num_outputs != 1) {
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "Relu takes one input and one output");
  }
  if (inputs[0].buffer == NULL || outputs[0].buffer == NULL) {
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "NULL buffer");
  }
  status = tp_check_range(inputs[0].buffer, inputs[0].offset, bytes);
  if (status == NULL) status = tp_check_range(outputs[0].buffer, outputs[0].offset, bytes);
  if (status != NULL) return status;
#ifdef C_RELU_CARELESS
  x = (const float*)inputs[0].buffer->data; /* the view's offset ignored */
#else
  x = (const float*)(inputs[0].buffer->data + inputs[0].offset);
#endif
  y = (float*)(outputs[0].buffer->data + outputs[0].offset);
  for (i = 0; i < kernel->count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return NULL;
}

static void cr_kernel_destroy(ampx_kernel* kernel) {
#if defined(C_RELU_CARELESS) || defined(C_RELU_ABI_1_0)
  free(kernel); /* no live-handle table: a second destroy frees twice */
#else
  if (kernel != NULL && tp_live_remove(kernel)) free(kernel);
#endif
}

#ifndef C_RELU_ABI_1_0
/* ABI 1.2: the options it documents, behind an extension of a type no host
   knows (skipped), to test the chain walk. */
static const ampx_option_desc cr_options[] = {
    {sizeof(ampx_option_desc), "threads", "ignored", "accepted and ignored"},
    {sizeof(ampx_option_desc), "relu_slope", "0", "reserved"}};
/* ABI 1.3: a declared compute mode (c_relu has no f16 kernel: this only
   tests that plugin-check reads the declaration). */
static const ampx_options_extension cr_options_ext = {
    {sizeof(ampx_options_extension), AMPX_EXTENSION_OPTIONS, NULL}, 2, cr_options};
static const ampx_numerics_extension cr_numerics_ext = {
    {sizeof(ampx_numerics_extension), AMPX_EXTENSION_NUMERICS, &cr_options_ext.base},
    AMPX_ACCUMULATE_F16};
/* ABI 1.6: native handles the host must check. Device 0 has none
   (UNSUPPORTED: the host copies); device 1 answers an API no ABI names
   (the host refuses it, naming the plugin). A buffer's "device address" is
   its host memory: no host test ever hands it to CUDA. */
static ampx_status* cr_native_device(ampx_plugin* plugin, int32_t device, ampx_native_device* out) {
  if (plugin == NULL || out == NULL || device < 0 || device >= plugin->num_devices)
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "native_device: bad argument");
  if (device == 0) return tp_status(AMPX_STATUS_UNSUPPORTED, "c_relu:0 has no native handles");
  out->struct_size = TP_MIN(out->struct_size, sizeof(ampx_native_device));
  out->api = 7;
  out->ordinal = 1;
  out->stream = plugin;
  return NULL;
}
static ampx_status* cr_buffer_native_ptr(ampx_buffer* buffer, void** out) {
  if (buffer == NULL || out == NULL)
    return tp_status(AMPX_STATUS_INVALID_ARGUMENT, "buffer_native_ptr: NULL argument");
  *out = buffer->data;
  return NULL;
}
static const ampx_native_handles_extension cr_native_ext = {
    {sizeof(ampx_native_handles_extension), AMPX_EXTENSION_NATIVE_HANDLES, &cr_numerics_ext.base},
    cr_native_device,
    cr_buffer_native_ptr};
static const ampx_extension cr_unknown_ext = {sizeof(ampx_extension), 4242, &cr_native_ext.base};
#endif

static const ampx_plugin_api cr_table = {
#ifdef C_RELU_ABI_1_0
    .struct_size = AMPX_STRUCT_SIZE(ampx_plugin_api, buffer_host_ptr),
    .abi_major = 1,
    .abi_minor = 0,
#else
    .struct_size = sizeof(ampx_plugin_api),
    .abi_major = AMPX_ABI_VERSION_MAJOR,
    .abi_minor = AMPX_ABI_VERSION_MINOR,
#endif
    .plugin_name = C_RELU_NAME,
    .plugin_version = "1.0.0",
    .plugin_create = cr_create,
    .plugin_info = cr_info,
    .device_count = tp_device_count,
    .device_props = cr_device_props,
    .query_capability = cr_query,
    .kernel_prepare = cr_prepare,
    .kernel_launch = cr_launch,
    .kernel_destroy = cr_kernel_destroy,
    .buffer_host_ptr = tp_buffer_host_ptr,
#ifndef C_RELU_ABI_1_0
    .extensions = &cr_unknown_ext,
#endif
    TP_STATUS_MEMBERS,
    TP_BUFFER_MEMBERS,
};

AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return &cr_table;
}
