// Output types of the recurrent ops (LSTM, GRU, RNN; docs/OPS.md): ONNX's
// shapes in layout 0, every input checked against X, W and hidden_size.
#include "ampx/opset/recurrent.hpp"
#include "infer_common.hpp"

namespace ampx::opset::detail {

Outputs infer_recurrent(const Node& c, std::string_view op) {
  if (op != "LSTM" && op != "GRU" && op != "RNN") return std::nullopt;
  const RecurrentSpec s = recurrent_spec(c.v);
  const bool lstm = s.kind == RecurrentKind::kLstm;
  const TensorSpec& x = c.in[0];
  require_float(c, x, "X");
  AMPX_CHECK(x.dims.size() == 3,
             "X must be [seq_length, batch, input_size], got " + dims_str(x.dims));
  const int64_t T = x.dims[0], N = x.dims[1], I = x.dims[2], H = s.hidden, D = s.directions;
  const int64_t G = s.gates * H;
  auto expect = [&](int i, const char* name, const Dims& want) {
    const TensorSpec& t = c.in[static_cast<size_t>(i)];
    AMPX_CHECK(t.dims == want, std::string(name) + " has shape " + dims_str(t.dims) +
                                   ", expected " + dims_str(want));
    AMPX_CHECK(t.dtype == x.dtype, std::string(name) + " has dtype " + dtype_name(t.dtype) +
                                       " but X has " + dtype_name(x.dtype));
  };
  expect(1, "W", {D, G, I});
  expect(2, "R", {D, G, H});
  expect(3, "B", {D, 2 * G});
  expect(4, "initial_h", {D, N, H});
  int next = 5;
  if (lstm) {
    expect(5, "initial_c", {D, N, H});
    expect(6, "P", {D, 3 * H});
    next = 7;
  }
  if (c.n > next) {
    const TensorSpec& lens = c.in[static_cast<size_t>(next)];
    AMPX_CHECK(lens.dims == Dims{N},
               "sequence_lens has shape " + dims_str(lens.dims) + ", expected " + dims_str({N}));
  }
  std::vector<TensorSpec> out{{x.dtype, {T, D, N, H}}, {x.dtype, {D, N, H}}};
  if (lstm) out.push_back({x.dtype, {D, N, H}});
  return out;
}

}  // namespace ampx::opset::detail
