/*
 * ampx backend plugin C ABI, version 1.
 *
 * Every backend plugin is a shared library exporting exactly one symbol,
 * AMPX_PLUGIN_ENTRY_SYMBOL, a function that returns a pointer to a static,
 * immutable ampx_plugin_api function table. The host checks abi_major, the
 * table's struct_size and the presence of every required member before it
 * calls anything else.
 *
 * Rules (modelled on OpenXLA's pjrt_c_api.h and ggml's backend vtables), all
 * here and explained in docs/PLUGINS.md. A rule "since 1.x" binds plugins of
 * abi_minor >= x (plugin-check reports an older one's miss as advice only).
 *
 *  - Plain C99. No C++ types and no exceptions cross this boundary.
 *  - Versions. The host accepts a table of the same major version and any
 *    minor one. Tables are append-only within a major version: a minor bump
 *    adds members at the end (marked "since 1.x" below). Optional members may
 *    be NULL, and a member beyond the table's struct_size counts as NULL.
 *  - struct_size. Every struct begins with `size_t struct_size`. The
 *    *_STRUCT_SIZE constants below give each struct's size as of this
 *    header (up to its last member).
 *      * Structs a side passes in (node descriptions, tensors, attributes,
 *        buffer views, create args, the table): the producer sets
 *        struct_size to its own sizeof(); the reader only touches members
 *        that lie within it, and treats the rest as zero or NULL.
 *      * Structs the plugin fills (ampx_plugin_info, ampx_device_props,
 *        ampx_capability): the host zero-fills them and presets struct_size
 *        to its own sizeof(). The plugin writes at most
 *        min(host's struct_size, plugin's sizeof()) bytes, never past the
 *        host's size, and sets struct_size to that minimum. An older host's
 *        smaller struct is never overrun.
 *      * Arrays of versioned structs (ampx_node_desc::inputs, outputs,
 *        attrs): every element has element 0's struct_size, and that is the
 *        array's stride. Index with
 *        (const char*)array + i * array[0].struct_size, never with array[i],
 *        which breaks when a minor version grows the struct.
 *  - Errors: every fallible function returns `ampx_status*`; NULL means
 *    success. A non-NULL status is allocated by the plugin and must be released
 *    by the host with the same plugin's status_destroy(). A plugin must answer
 *    bad arguments (NULL handles, out-of-range devices or byte ranges, wrong
 *    input counts) with AMPX_STATUS_INVALID_ARGUMENT, never by crashing, and
 *    an allocation it cannot make with AMPX_STATUS_OUT_OF_MEMORY, after which
 *    the device stays usable. Since 1.3: a failed call that has an `out`
 *    handle parameter leaves it NULL (the host owns nothing). `ampx
 *    plugin-check` tests these.
 *  - Ownership: every pointer passed *into* a plugin is borrowed for the
 *    duration of the call only (unless documented otherwise). Handles returned
 *    through `out` parameters are owned by the host and released through the
 *    matching destroy/free function, each exactly once, all of them before
 *    plugin_destroy. The library is unloaded after plugin_destroy (a plugin
 *    whose threads outlive it links with -z nodelete).
 *  - Since 1.3: destroy and free functions (status_destroy, plugin_destroy,
 *    buffer_free, kernel_destroy) do nothing given NULL. A second destroy of
 *    a handle is the host's bug, which the host never commits; a plugin must
 *    survive it while the address was not handed out again (keep the live
 *    handles in a set, ignore others, as the SDK glue does): a host's bug
 *    costs a message, not a heap. plugin-check tests both in child processes.
 *  - Threading: a plugin instance is used from one host thread at a time.
 *  - Options (ampx_plugin_create_args::options): "key=value;key=value". The
 *    host may send `threads=N` (ampx --threads N: threads per CPU backend) to
 *    every plugin. A plugin documents its own keys and ignores keys it does
 *    not know; it may refuse a malformed value of a key it knows (plugin
 *    creation then fails with the message).
 *  - Buffers and views. buffer_alloc returns memory aligned as the device's
 *    kernels need it (host-memory plugins: 64 bytes, as cpu_ref's). The host
 *    places every tensor view (ampx_buffer_view::offset) at a multiple of 64
 *    bytes, and a view covers exactly the described tensor. The host never
 *    passes a kernel output views that overlap each other or its input
 *    views; input views may overlap each other (the same value read twice).
 *  - Ordering and completion. Work on one device (kernel launches, copies
 *    into or out of its buffers) takes effect in the order it is issued, as
 *    if executed one after the other; a plugin may run it asynchronously.
 *      * copy_to_device: `src` may be reused as soon as the call returns.
 *      * copy_to_host: `dst` holds the bytes when the call returns (earlier
 *        work on the buffer's device is waited for).
 *      * copy_device_to_device: ordered after all work issued before it on
 *        both devices and before all work issued after it on either; when it
 *        returns, later work may overwrite the source range (the copy has
 *        read it, or will before that work runs) and later work on the
 *        destination device sees the copied bytes.
 *      * synchronize(device): returns when all work issued on the device has
 *        finished.
 *      * buffer_host_ptr: the address may be read or written only after
 *        synchronize() of the buffer's device, and only until the next
 *        launch or copy on it.
 *  - Extensions (since 1.2): ampx_plugin_api::extensions is a singly linked
 *    chain of typed structs, each beginning with an ampx_extension header
 *    (struct_size, type, next). A reader walks `next` until NULL, skips
 *    types it does not know, reads only within each struct's struct_size,
 *    and stops after AMPX_EXTENSION_CHAIN_MAX links (a longer or cyclic
 *    chain is malformed). Extensions are static and immutable, like the
 *    table, and live until the library is unloaded. Types are never
 *    renumbered; a new feature that does not fit in an appended member
 *    gets a new type.
 *  - Numerics (since 1.3). A kernel the plugin answers `native` or
 *    `emulated` must match the op set's float64 reference within the
 *    tolerance of its dtype and compute mode (opset/tolerances.hpp, shipped
 *    with the SDK). The compute mode of f16 kernels is the plugin's
 *    declaration in an AMPX_EXTENSION_NUMERICS extension; without one it is
 *    AMPX_ACCUMULATE_F32 (widen to f32, compute and accumulate in f32, round
 *    each output once), the op set's own contract. bf16 kernels are always
 *    held to f32 accumulation. `ampx plugin-check` holds a plugin to the bar
 *    it declares, and reports a `native` answer that misses it as a lie.
 *  - Kernel reports (since 1.4, optional). A plugin may publish an
 *    AMPX_EXTENSION_KERNEL_INFO extension whose kernel_report() says what a
 *    prepared kernel runs on (its implementation, e.g. a library's primitive
 *    and implementation name, or "loop: reference kernel") and what its last
 *    launch did besides the kernel itself (layout and dtype conversions:
 *    count and time), so that a profile attributes them to the node that
 *    caused them. The host calls it only when it profiles a run, after a
 *    launch has finished (kernel_launch_timed, or kernel_launch then
 *    synchronize), never on the normal path; a plugin may therefore keep
 *    its per-launch figures cheaply (counters and a clock around each
 *    conversion). The struct is one the plugin fills (see struct_size).
 *    Without the extension (a 1.3 plugin) the host shows no implementation
 *    and no conversions.
 *  - Native handles (since 1.6, optional). A plugin whose devices are driven
 *    through a vendor API may publish an AMPX_EXTENSION_NATIVE_HANDLES
 *    extension that hands the host the native handles behind a device and a
 *    buffer, so that the host can enqueue work of another library (NCCL's
 *    collectives) in the device's order, without copies through the host.
 *    Its rules, for the CUDA API (AMPX_NATIVE_API_CUDA):
 *      * native_device() names the device's CUDA ordinal and ONE stream on
 *        which the plugin issues all its work on the device (kernels,
 *        copy_to_device, copy_to_host, copy_device_to_device into it), in
 *        issue order, for as long as the plugin instance lives; the answer
 *        never changes. The stream belongs to the plugin: the host never
 *        destroys or synchronizes it through CUDA, and calls CUDA on it only
 *        with that device current.
 *      * Work the host enqueues on that stream is part of the device's
 *        order: it runs after everything the plugin issued before and
 *        before everything it issues after; synchronize(device) and
 *        copy_to_host wait for it too; an error it causes may surface at
 *        the plugin's next wait on the device.
 *      * buffer_native_ptr() gives the device address of byte 0 of a
 *        buffer (CUDA: a pointer valid in the device's context, for the
 *        buffer's whole size), valid until buffer_free. The host reads and
 *        writes it only with work on the buffer's device's stream, and
 *        calls synchronize(device) before it frees a buffer that such work
 *        may still touch.
 *      * A device the plugin cannot answer for (none, another API):
 *        AMPX_STATUS_UNSUPPORTED, and the host takes its copying path.
 *        NULL arguments and out-of-range devices: INVALID_ARGUMENT.
 *    Without the extension (a 1.5 plugin, any host-memory plugin) the host
 *    copies through host memory.
 */
#ifndef AMPX_BACKEND_API_H_
#define AMPX_BACKEND_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMPX_ABI_VERSION_MAJOR 1
/* 1.1: kernel_launch_timed (device-side timing of one kernel).
 * 1.2: the extension chain (ampx_plugin_api::extensions) and its first type,
 *      AMPX_EXTENSION_OPTIONS.
 * 1.3: AMPX_EXTENSION_NUMERICS (f16 kernels' compute mode); the rules for NULL
 *      and repeated destroys and a failed call's NULL out handle.
 * 1.4: AMPX_EXTENSION_KERNEL_INFO (a kernel's implementation and its last
 *      launch's conversions, for profiles).
 * 1.5: the element types AMPX_DTYPE_I16, _U16, _U32 and _U64.
 * 1.6: AMPX_EXTENSION_NATIVE_HANDLES (a device's CUDA ordinal and stream, a
 *      buffer's device address: NCCL collectives in the device's order). */
#define AMPX_ABI_VERSION_MINOR 6

/* The one exported symbol: `const ampx_plugin_api* ampx_plugin_entry(void);` */
#define AMPX_PLUGIN_ENTRY_SYMBOL "ampx_plugin_entry"

#if defined(_WIN32)
#define AMPX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define AMPX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ types */

/* Element types. Values are part of the ABI and never renumbered: a new type
 * takes the next value, appended at the end, in a minor version (marked
 * "since 1.x"). A plugin answers `unsupported` for a node with a value it does
 * not know (plugin_support::dtype_size is 0 for one), and the host never asks
 * a plugin of an older abi_minor about a node with a type added after it: it
 * answers `unsupported` on the plugin's behalf. Integers are two's
 * complement, little-endian as the host. */
typedef enum ampx_dtype {
  AMPX_DTYPE_INVALID = 0,
  AMPX_DTYPE_F32 = 1,
  AMPX_DTYPE_F16 = 2,  /* IEEE 754 binary16 */
  AMPX_DTYPE_BF16 = 3, /* bfloat16: the upper 16 bits of an f32 */
  AMPX_DTYPE_F64 = 4,
  AMPX_DTYPE_I64 = 5,
  AMPX_DTYPE_I32 = 6,
  AMPX_DTYPE_BOOL = 7, /* one byte, 0 or 1 */
  AMPX_DTYPE_I8 = 8,
  AMPX_DTYPE_U8 = 9,
  AMPX_DTYPE_I16 = 10, /* since 1.5 */
  AMPX_DTYPE_U16 = 11, /* since 1.5 */
  AMPX_DTYPE_U32 = 12, /* since 1.5 */
  AMPX_DTYPE_U64 = 13  /* since 1.5 */
} ampx_dtype;

/* The abi_minor that introduced a dtype value (0 for the types of 1.0), for
 * the host's rule above. */
#define AMPX_DTYPE_SINCE_MINOR(dt) ((dt) >= AMPX_DTYPE_I16 && (dt) <= AMPX_DTYPE_U64 ? 5 : 0)

typedef enum ampx_status_code {
  AMPX_STATUS_OK = 0,
  AMPX_STATUS_INVALID_ARGUMENT = 1,
  AMPX_STATUS_UNSUPPORTED = 2,
  AMPX_STATUS_OUT_OF_MEMORY = 3,
  AMPX_STATUS_UNAVAILABLE = 4, /* e.g. no driver, device lost */
  AMPX_STATUS_INTERNAL = 5
} ampx_status_code;

/* Opaque, plugin-allocated error object. NULL means OK. */
typedef struct ampx_status ampx_status;
/* Opaque plugin instance, buffer and prepared kernel. */
typedef struct ampx_plugin ampx_plugin;
typedef struct ampx_buffer ampx_buffer;
typedef struct ampx_kernel ampx_kernel;

typedef enum ampx_device_type {
  AMPX_DEVICE_CPU = 1,
  AMPX_DEVICE_GPU = 2,
  AMPX_DEVICE_OTHER = 3
} ampx_device_type;

/* Precision support of one node instance on one device. */
typedef enum ampx_support {
  AMPX_SUPPORT_UNSUPPORTED = 0, /* cannot run this node as described */
  AMPX_SUPPORT_NATIVE = 1,      /* a real kernel for these dtypes: the fast path */
  AMPX_SUPPORT_EMULATED = 2     /* runs, but e.g. widens 16-bit to f32 internally */
} ampx_support;

/* ------------------------------------------------------ plugin creation */

typedef struct ampx_plugin_create_args {
  size_t struct_size;
  /* Host log level, 0 = trace .. 6 = off, so a plugin can stay quiet. */
  int32_t log_level;
  /* Optional, may be NULL: "key=value;key=value" options from the user. */
  const char* options;
} ampx_plugin_create_args;

typedef struct ampx_plugin_info {
  size_t struct_size;
  /* Why the plugin reports the device count it does, e.g. "no CUDA driver
   * found"; empty when there is nothing to say. */
  char note[256];
  /* Library the plugin is built on and its version, e.g. "oneDNN 2.6.3". */
  char library[128];
} ampx_plugin_info;

typedef struct ampx_device_props {
  size_t struct_size;
  char name[128];
  char vendor[64];
  char driver_version[64]; /* driver or library version */
  /* Stable identity of "this kind of hardware with this software": the
   * capability database keys on it. Same hardware and driver => same string. */
  char fingerprint[256];
  uint64_t memory_bytes; /* 0 when unknown */
  ampx_device_type type;
  int32_t compute_units; /* cores, SMs, ...; 0 when unknown */
} ampx_device_props;

/* ------------------------------------------------------- node description */

typedef struct ampx_tensor_desc {
  size_t struct_size;
  ampx_dtype dtype;
  int32_t rank;
  const int64_t* dims; /* rank entries, all >= 0 */
  /* Non-NULL when the tensor is a constant (a weight) whose bytes are known at
   * prepare time: lets a plugin reorder weights once. Borrowed for the call. */
  const void* const_data;
} ampx_tensor_desc;

typedef enum ampx_attr_kind {
  AMPX_ATTR_INT = 1,
  AMPX_ATTR_FLOAT = 2,
  AMPX_ATTR_INTS = 3,
  AMPX_ATTR_FLOATS = 4,
  AMPX_ATTR_STRING = 5
} ampx_attr_kind;

typedef struct ampx_attr {
  size_t struct_size;
  const char* name;
  ampx_attr_kind kind;
  int64_t i;            /* AMPX_ATTR_INT */
  double f;             /* AMPX_ATTR_FLOAT */
  const int64_t* ints;  /* AMPX_ATTR_INTS, `count` entries */
  const double* floats; /* AMPX_ATTR_FLOATS, `count` entries */
  size_t count;
  const char* s; /* AMPX_ATTR_STRING, NUL-terminated */
} ampx_attr;

/* One node instance: op type (see docs/OPS.md for the op set, its inputs and
 * attributes), the exact dtypes and shapes of its inputs and outputs. */
typedef struct ampx_node_desc {
  size_t struct_size;
  const char* op_type;
  const char* name; /* for messages only */
  size_t num_inputs;
  const ampx_tensor_desc* inputs;
  size_t num_outputs;
  const ampx_tensor_desc* outputs;
  size_t num_attrs;
  const ampx_attr* attrs;
} ampx_node_desc;

typedef struct ampx_capability {
  size_t struct_size;
  ampx_support support; /* out */
  /* out: predicted kernel time in microseconds, or < 0 when the plugin has no
   * estimate. A hint only: the capability database measures. */
  double cost_us;
  /* out: optional short reason, e.g. "oneDNN: ref implementation only". */
  char note[128];
} ampx_capability;

/* A region of a buffer: the executor packs many values into one arena. */
typedef struct ampx_buffer_view {
  size_t struct_size;
  ampx_buffer* buffer;
  uint64_t offset; /* bytes from the start of `buffer` */
} ampx_buffer_view;

/* ------------------------------------------------------------ extensions */

/* Since 1.2. The header of every extension struct. */
typedef struct ampx_extension {
  size_t struct_size;                /* of the whole extension struct, this header included */
  int32_t type;                      /* ampx_extension_type */
  const struct ampx_extension* next; /* NULL ends the chain */
} ampx_extension;

typedef enum ampx_extension_type {
  /* ampx_options_extension: the option keys the plugin documents. */
  AMPX_EXTENSION_OPTIONS = 1,
  /* ampx_numerics_extension (since 1.3): how the plugin computes on 16-bit data. */
  AMPX_EXTENSION_NUMERICS = 2,
  /* ampx_kernel_info_extension (since 1.4): what a kernel runs on, for profiles. */
  AMPX_EXTENSION_KERNEL_INFO = 3,
  /* ampx_native_handles_extension (since 1.6): native device, stream, address. */
  AMPX_EXTENSION_NATIVE_HANDLES = 4
} ampx_extension_type;

#define AMPX_EXTENSION_CHAIN_MAX 64

/* One documented key of the options string. */
typedef struct ampx_option_desc {
  size_t struct_size;
  const char* key;    /* e.g. "threads" */
  const char* values; /* the accepted values, e.g. "1..4096", "on|off" */
  const char* doc;    /* one line */
} ampx_option_desc;

/* Lets the host list a plugin's options (`ampx devices --verbose`,
 * `ampx plugin-check`) without loading its documentation. */
typedef struct ampx_options_extension {
  ampx_extension base; /* type AMPX_EXTENSION_OPTIONS */
  size_t num_options;
  const ampx_option_desc* options; /* stride: options[0].struct_size */
} ampx_options_extension;

/* Since 1.3. How f16 kernels accumulate: the accuracy bar the plugin is held
 * to (see "Numerics" above). Values are part of the ABI. */
typedef enum ampx_accumulation {
  /* Widen to f32, compute and accumulate in f32, round each output once:
   * the op set's contract and the default. Tolerance 2^-10 for f16. */
  AMPX_ACCUMULATE_F32 = 1,
  /* Partial sums kept in f16 (f16 tensor-core or shader accumulators):
   * tolerance 2^-5 for f16, covering reductions of up to ~4096 terms. */
  AMPX_ACCUMULATE_F16 = 2
} ampx_accumulation;

typedef struct ampx_numerics_extension {
  ampx_extension base;      /* type AMPX_EXTENSION_NUMERICS */
  int32_t f16_accumulation; /* ampx_accumulation of every f16 kernel of the plugin */
} ampx_numerics_extension;

/* Since 1.4. What a prepared kernel runs on and what its last launch did
 * besides the kernel itself (see "Kernel reports" above). Filled by the
 * plugin: the host zero-fills it and presets struct_size. */
typedef struct ampx_kernel_report {
  size_t struct_size;
  /* NUL-terminated, e.g. "convolution_backward_weights jit:avx2",
   * "loop: reference kernel"; empty when the plugin cannot say. For a kernel
   * that chooses among implementations per launch: the last launch's. */
  char implementation[128];
  /* Conversions the last launch ran around the kernel: reorders between
   * layouts (or dtypes) of its inputs and outputs, and write-backs of other
   * values' copies it had to read in another layout. 0 before any launch. */
  uint64_t reorders;
  double reorder_us; /* their time, microseconds */
  /* Of `reorders`, those that also changed the dtype (a Cast done inside
   * the conversion), and their time (part of reorder_us). */
  uint64_t casts;
  double cast_us;
} ampx_kernel_report;

typedef struct ampx_kernel_info_extension {
  ampx_extension base; /* type AMPX_EXTENSION_KERNEL_INFO */
  /* Fills *out for `kernel` (a handle of this plugin). Cheap: no launch, no
   * wait. NULL kernel or out: AMPX_STATUS_INVALID_ARGUMENT. */
  ampx_status* (*kernel_report)(ampx_kernel* kernel, ampx_kernel_report* out);
} ampx_kernel_info_extension;

/* Since 1.6. The vendor API whose handles ampx_native_device and
 * buffer_native_ptr give (see "Native handles" above). Values are part of
 * the ABI. */
typedef enum ampx_native_api {
  AMPX_NATIVE_API_NONE = 0,
  AMPX_NATIVE_API_CUDA = 1 /* ordinal: cudaSetDevice's; stream: a cudaStream_t */
} ampx_native_api;

/* Since 1.6. One device's native handles. Filled by the plugin: the host
 * zero-fills it and presets struct_size. */
typedef struct ampx_native_device {
  size_t struct_size;
  int32_t api;     /* ampx_native_api */
  int32_t ordinal; /* the device's number in that API (CUDA: cudaSetDevice) */
  void* stream;    /* the one queue of the device's work (CUDA: cudaStream_t), never NULL */
} ampx_native_device;

typedef struct ampx_native_handles_extension {
  ampx_extension base; /* type AMPX_EXTENSION_NATIVE_HANDLES */
  /* Fills *out for `device` of `plugin`. Cheap; may create the device's
   * context on first use. */
  ampx_status* (*native_device)(ampx_plugin* plugin, int32_t device, ampx_native_device* out);
  /* *out: the device address of the buffer's byte 0 (never NULL on success). */
  ampx_status* (*buffer_native_ptr)(ampx_buffer* buffer, void** out);
} ampx_native_handles_extension;

/* ------------------------------------------------------------ the table */

typedef struct ampx_plugin_api {
  size_t struct_size;
  uint32_t abi_major; /* AMPX_ABI_VERSION_MAJOR the plugin was built against */
  uint32_t abi_minor;
  const char* plugin_name;    /* short, [a-z0-9_]+, e.g. "cpu_ref" */
  const char* plugin_version; /* e.g. "1.0.0" */

  /* status objects */
  ampx_status_code (*status_code)(const ampx_status* status);
  const char* (*status_message)(const ampx_status* status); /* valid until destroy */
  void (*status_destroy)(ampx_status* status);

  /* lifetime; create may fail (e.g. driver missing is NOT a failure: report
   * zero devices and a note instead; failure means the plugin is unusable). */
  ampx_status* (*plugin_create)(const ampx_plugin_create_args* args, ampx_plugin** out);
  void (*plugin_destroy)(ampx_plugin* plugin);
  ampx_status* (*plugin_info)(ampx_plugin* plugin, ampx_plugin_info* out);

  /* devices */
  ampx_status* (*device_count)(ampx_plugin* plugin, int32_t* out);
  ampx_status* (*device_props)(ampx_plugin* plugin, int32_t device, ampx_device_props* out);

  /* capability: never assumed by the host; asked per node instance. */
  ampx_status* (*query_capability)(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                                   ampx_capability* out);

  /* buffers */
  ampx_status* (*buffer_alloc)(ampx_plugin* plugin, int32_t device, uint64_t bytes,
                               ampx_buffer** out);
  void (*buffer_free)(ampx_buffer* buffer);
  ampx_status* (*copy_to_device)(ampx_buffer* dst, uint64_t dst_offset, const void* src,
                                 uint64_t bytes);
  ampx_status* (*copy_to_host)(void* dst, const ampx_buffer* src, uint64_t src_offset,
                               uint64_t bytes);
  /* Both buffers belong to this plugin (any of its devices). */
  ampx_status* (*copy_device_to_device)(ampx_buffer* dst, uint64_t dst_offset,
                                        const ampx_buffer* src, uint64_t src_offset,
                                        uint64_t bytes);

  /* prepared kernels: prepare once with the full description, launch many
   * times with buffers of exactly the described sizes. */
  ampx_status* (*kernel_prepare)(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                                 ampx_kernel** out);
  ampx_status* (*kernel_launch)(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                size_t num_inputs, const ampx_buffer_view* outputs,
                                size_t num_outputs);
  void (*kernel_destroy)(ampx_kernel* kernel);

  /* Waits until all work launched on the device has finished. */
  ampx_status* (*synchronize)(ampx_plugin* plugin, int32_t device);

  /* ---- optional members (may be NULL) ---- */
  /* Host-visible address of a buffer, or NULL when it is not host-visible
   * (or the plugin keeps other copies of the bytes). Lets the host skip
   * copies for CPU devices. See "Ordering and completion" above for when the
   * address may be used. Since 1.0. */
  void* (*buffer_host_ptr)(ampx_buffer* buffer);

  /* ---- since 1.1, optional (may be NULL; absent beyond a 1.0 table) ---- */
  /* Launches `kernel` exactly as kernel_launch does, waits until it has
   * finished, and stores in *out_device_us the time the device spent
   * executing it, measured by the device itself (timestamp queries, events):
   * not the host's launch overhead, not the wait. Work launched before on
   * the same device may be waited for first and is not counted. Used only
   * when the host profiles a run (`ampx run --per-node/--trace`), never on
   * the normal path. A plugin whose kernels run on the calling thread (a
   * CPU backend) leaves it NULL: the host then times kernel_launch plus
   * synchronize with its own clock, and says so; so it does when a device of
   * the plugin cannot time and returns AMPX_STATUS_UNSUPPORTED (without
   * launching anything). On error *out_device_us is not written. */
  ampx_status* (*kernel_launch_timed)(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                      size_t num_inputs, const ampx_buffer_view* outputs,
                                      size_t num_outputs, double* out_device_us);

  /* ---- since 1.2, optional (may be NULL; absent beyond an older table) ---- */
  /* The first extension of the chain (see "Extensions" above), or NULL. */
  const ampx_extension* extensions;
} ampx_plugin_api;

/* Each struct's size as of this header: offsetof its last member plus that
 * member's size (PJRT's *_STRUCT_SIZE), so trailing padding never counts. */
#define AMPX_STRUCT_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)0)->last))
#define AMPX_PLUGIN_CREATE_ARGS_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_plugin_create_args, options)
#define AMPX_PLUGIN_INFO_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_plugin_info, library)
#define AMPX_DEVICE_PROPS_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_device_props, compute_units)
#define AMPX_TENSOR_DESC_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_tensor_desc, const_data)
#define AMPX_ATTR_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_attr, s)
#define AMPX_NODE_DESC_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_node_desc, attrs)
#define AMPX_CAPABILITY_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_capability, note)
#define AMPX_BUFFER_VIEW_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_buffer_view, offset)
#define AMPX_PLUGIN_API_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_plugin_api, extensions)
#define AMPX_OPTION_DESC_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_option_desc, doc)
#define AMPX_OPTIONS_EXTENSION_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_options_extension, options)
#define AMPX_NUMERICS_EXTENSION_STRUCT_SIZE \
  AMPX_STRUCT_SIZE(ampx_numerics_extension, f16_accumulation)
#define AMPX_KERNEL_REPORT_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_kernel_report, cast_us)
#define AMPX_KERNEL_INFO_EXTENSION_STRUCT_SIZE \
  AMPX_STRUCT_SIZE(ampx_kernel_info_extension, kernel_report)
#define AMPX_NATIVE_DEVICE_STRUCT_SIZE AMPX_STRUCT_SIZE(ampx_native_device, stream)
#define AMPX_NATIVE_HANDLES_EXTENSION_STRUCT_SIZE \
  AMPX_STRUCT_SIZE(ampx_native_handles_extension, buffer_native_ptr)

/* The smallest table a v1 host accepts: everything up to and including
 * `synchronize`. */
#define AMPX_PLUGIN_API_MIN_SIZE_V1 (offsetof(ampx_plugin_api, synchronize) + sizeof(void*))

typedef const ampx_plugin_api* (*ampx_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AMPX_BACKEND_API_H_ */
