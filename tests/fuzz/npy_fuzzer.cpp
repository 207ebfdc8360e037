// libFuzzer target: the .npy reader behind `ampx run --input NAME=FILE.npy`.
#include <ampx/exec/npy.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ampx::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = ampx::fuzz::write_input(data, size, "input.npy");
  ampx::fuzz::expect_clean_rejection([&] {
    const ampx::HostTensor tensor = ampx::read_npy(path);
    // What was read must be as large as its shape says.
    const size_t expected = static_cast<size_t>(ampx::element_count(tensor.type.shape)) *
                            ampx::dtype_size(tensor.type.dtype);
    if (tensor.data.size() != expected)
      ampx::fuzz::finding("npy", "tensor bytes do not match its shape");
  });
  return 0;
}
