// Tensors in host memory: what users pass in and get back, with the
// conversions and the error metric `ampx run` reports.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampx {

struct HostTensor {
  std::string name;
  TensorType type;
  std::vector<std::byte> data;
};

// A run's input read in place, its bytes not owned: what the executors
// take, so that a caller holding the data elsewhere (the Python package's
// NumPy arrays) hands it over without a copy. The bytes must stay alive
// and unchanged for the run.
struct HostTensorView {
  std::string_view name;
  TensorType type;
  std::span<const std::byte> data;
};

// Views of `tensors`, in order (they must outlive the views).
std::vector<HostTensorView> views_of(std::span<const HostTensor> tensors);

// Element i of a float or integer tensor, widened to double.
std::vector<double> to_doubles(const HostTensor& t);

// Seeded random inputs for every graph input: floats uniform in [-1, 1]
// (never zeros), integers in [0, 8), booleans 0/1.
std::vector<HostTensor> random_inputs(const Graph& graph, uint64_t seed);

// The first NaN or infinite element of a float tensor, read element by
// element (no widened copy of the tensor); nullopt when every element is
// finite, or the tensor holds integers.
struct NonFiniteElement {
  size_t index = 0;
  bool is_nan = false;
};
std::optional<NonFiniteElement> first_nonfinite(const HostTensor& t);

// What a run's HostTensors take in host memory: every graph input and
// output once (the memory check's MemoryLimit::host_bytes).
uint64_t host_tensor_bytes(const Graph& graph);

// Normwise relative error: max_i |got_i - ref_i| / max_i |ref_i| over the
// finite elements (ref all zero: the absolute error). A NaN or an infinity
// matches only the same in `ref` (and then adds nothing); any other
// mismatch of them gives inf.
// Documented in docs/PLANNER.md; the same definition the tests use.
double max_relative_error(const HostTensor& got, const HostTensor& ref);

}  // namespace ampx
