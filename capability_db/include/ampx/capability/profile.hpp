// What a probe measured on one device: the plugin's answer and the kernel
// time for each op at a few representative shapes ("shape classes") and
// dtypes, Cast cost per element for each dtype pair, and host<->device copy
// cost. A value type: the SQLite store keeps them keyed by fingerprint, `ampx
// db export/import` moves them between machines as JSON (schema
// "ampx.profile/1", docs/capability-db.md), and the cost model predicts node
// times from them.
#pragma once

#include <ampx/backend_api.h>

#include <string>
#include <vector>

namespace ampx::capability {

struct OpTiming {
  std::string op;           // op type as in docs/OPS.md
  std::string dtype;        // "f32", "f16", "bf16"
  std::string shape_class;  // the probe's label, e.g. "conv3x3 64->64 28x28"
  // Amount of work of the probed instance: FLOPs for contractions and
  // normalisations, else elements read + written (opset::estimate_work).
  double flops = 0;
  double bytes = 0;
  ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
  std::string note;     // the plugin's capability note
  double time_us = -1;  // median kernel time; < 0: not measured
};

struct CastCost {
  std::string from, to;       // dtype names
  double ns_per_element = 0;  // fitted from probed Casts
};

struct CopyCost {
  std::string direction;  // "h2d" or "d2h"
  double latency_us = 0;  // fixed part
  double ns_per_byte = 0;
};

struct DeviceProfile {
  std::string fingerprint;  // the key (ampx_device_props::fingerprint)
  std::string device_id;    // "onednn:0" when probed
  std::string plugin;
  std::string plugin_version;
  std::string device_name;
  std::string driver_version;
  std::string probed_at;  // ISO 8601 UTC
  bool quick = false;     // probed with --quick
  std::vector<OpTiming> ops;
  std::vector<CastCost> casts;
  std::vector<CopyCost> copies;
};

}  // namespace ampx::capability
