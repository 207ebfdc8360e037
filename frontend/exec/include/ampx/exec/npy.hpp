// NumPy .npy files (format versions 1-3, little-endian, C order) for real
// inputs and saved outputs: float32, float16, float64, int64, int32, int8,
// uint8 and bool. bfloat16 has no NumPy dtype: such outputs are written as
// float32 (exactly representable).
#pragma once

#include <ampx/exec/host_tensor.hpp>

#include <filesystem>
#include <stdexcept>

namespace ampx {

// One line naming the file and the problem.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

HostTensor read_npy(const std::filesystem::path& path);

// The whole file is written to a temporary name beside `path` and renamed
// over it, so a reader never sees half a file.
void write_npy(const std::filesystem::path& path, const HostTensor& tensor);

}  // namespace ampx
