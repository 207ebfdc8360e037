// What `ampx devices` and Python's `ampx.devices()` / `ampx.plugins()` list:
// one writer of the listing, so the two shells cannot drift apart.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/plugins/plugin_host.hpp>

#include <nlohmann/json.hpp>

namespace ampx::cli {

// "cpu", "gpu" or "other".
const char* device_type_name(ampx_device_type t);

// The compute mode of a plugin's f16 kernels, as plugin-check names it.
const char* accumulation_name(const plugins::PluginRecord& p);

// `ampx devices --format json` (schema ampx.devices/1): the search
// directories, the plugins loaded, their devices (each with `native`, its
// native dtypes per op: capability::native_dtypes) and the plugins skipped.
nlohmann::json devices_json(const plugins::PluginHost& host);

}  // namespace ampx::cli
