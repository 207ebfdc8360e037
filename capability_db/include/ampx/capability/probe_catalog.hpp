// What the probe measures: each op of the op set (docs/OPS.md) at a few
// representative shape classes, built for any float dtype. The shapes are
// those of the built-in models' hot spots (ResNet-style convolutions at 28²
// and 56², transformer-sized GEMMs, activations of 64K and 1M elements), so
// the cost model interpolates rather than extrapolates.
#pragma once

#include <ampx/capability/node_spec.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ampx::capability {

struct ProbeCase {
  std::string op;
  std::string shape_class;  // stable label, stored with the timing
  bool quick = false;       // also part of the --quick catalogue
  // The node instance with every float tensor of dtype `dt`.
  std::function<NodeSpec(ampx_dtype dt)> make;
};

// The full catalogue, or only the quick cases (fewer, smaller shapes). With
// `ops` not empty, only cases of those op types (tests keep probes short).
std::vector<ProbeCase> probe_catalog(bool quick, const std::vector<std::string>& ops = {});

// A Cast of `elements` elements from `from` to `to` (the probe's cast fit).
NodeSpec make_cast(ampx_dtype from, ampx_dtype to, int64_t elements);

}  // namespace ampx::capability
