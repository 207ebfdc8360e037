// NumPy arrays in and out of a run, without copies: an input array's
// memory is read in place (HostTensorView), an output tensor's bytes become
// the array's (the vector is moved into the array's owner).
#include "bindings.hpp"

#include <ampx/exec/execution_plan.hpp>

#include <memory>

namespace ampx::python {
namespace {

namespace dl = nb::dlpack;

dl::dtype dlpack_dtype(DType t) {
  const auto make = [](dl::dtype_code code, int bits) {
    return dl::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::kF32:
      return make(dl::dtype_code::Float, 32);
    case DType::kF16:
      return make(dl::dtype_code::Float, 16);
    case DType::kBF16:  // its bits: NumPy has no bfloat16 of its own
      return make(dl::dtype_code::UInt, 16);
    case DType::kF64:
      return make(dl::dtype_code::Float, 64);
    case DType::kI64:
      return make(dl::dtype_code::Int, 64);
    case DType::kI32:
      return make(dl::dtype_code::Int, 32);
    case DType::kI8:
      return make(dl::dtype_code::Int, 8);
    case DType::kU8:
      return make(dl::dtype_code::UInt, 8);
    case DType::kI16:
      return make(dl::dtype_code::Int, 16);
    case DType::kU16:
      return make(dl::dtype_code::UInt, 16);
    case DType::kU32:
      return make(dl::dtype_code::UInt, 32);
    case DType::kU64:
      return make(dl::dtype_code::UInt, 64);
    case DType::kBool:
      return make(dl::dtype_code::Bool, 8);
    case DType::kInvalid:
      break;
  }
  throw std::logic_error("a tensor of no dtype");
}

bool dtype_matches(const InputArray& a, DType t) {
  if (a.dtype() == dlpack_dtype(t)) return true;
  // A DLPack producer with a bfloat16 of its own (ml_dtypes through DLPack, torch).
  return t == DType::kBF16 &&
         a.dtype() == dl::dtype{static_cast<uint8_t>(dl::dtype_code::Bfloat), 16, 1};
}

bool c_contiguous(const InputArray& a) {
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

}  // namespace

std::vector<const Value*> data_inputs(const ExecutionPlan& plan) {
  const Graph& g = *plan.graph;
  std::vector<bool> is_state(g.inputs().size(), false);
  for (const StateBinding& b : plan.state) is_state[b.input] = true;
  std::vector<const Value*> values;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (!is_state[i]) values.push_back(&g.value(g.inputs()[i]));
  return values;
}

HostTensorView input_view(std::string_view name, DType dtype, const InputArray& a) {
  if (!dtype_matches(a, dtype))
    throw TypeFailure("input '" + std::string(name) + "': expected an array of " +
                      std::string(dtype_name(dtype)) + ", got another dtype");
  if (!c_contiguous(a))
    throw TypeFailure("input '" + std::string(name) + "': the array is not C-contiguous");
  Shape shape(a.ndim());
  for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
  const auto* data = static_cast<const std::byte*>(a.data());
  return {name, TensorType{dtype, std::move(shape)}, std::span<const std::byte>(data, a.nbytes())};
}

std::vector<HostTensorView> input_views(const ExecutionPlan& plan,
                                        const std::vector<InputArray>& arrays) {
  const std::vector<const Value*> inputs = data_inputs(plan);
  if (arrays.size() != inputs.size())
    throw std::invalid_argument("the model takes " + std::to_string(inputs.size()) +
                                " inputs, got " + std::to_string(arrays.size()));
  std::vector<HostTensorView> views;
  views.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i)
    views.push_back(input_view(inputs[i]->name, inputs[i]->type.dtype, arrays[i]));
  return views;
}

nb::object to_numpy(HostTensor&& tensor) {
  auto bytes = std::make_unique<std::vector<std::byte>>(std::move(tensor.data));
  void* data = bytes->data();
  nb::capsule owner(bytes.get(),
                    [](void* p) noexcept { delete static_cast<std::vector<std::byte>*>(p); });
  (void)bytes.release();  // the capsule owns it now
  const std::vector<size_t> shape(tensor.type.shape.begin(), tensor.type.shape.end());
  return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr,
                                dlpack_dtype(tensor.type.dtype))
      .cast();
}

}  // namespace ampx::python
