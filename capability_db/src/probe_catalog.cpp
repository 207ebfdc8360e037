#include <ampx/capability/probe_catalog.hpp>

#include <fmt/format.h>
#include <algorithm>

namespace ampx::capability {
namespace {

using Dims = std::vector<int64_t>;

// Square kernel, stride 1, "same" padding, with bias.
ProbeCase conv(std::string label, int64_t c_in, int64_t c_out, int64_t k, int64_t hw, int64_t group,
               bool quick) {
  return {"Conv2d", std::move(label), quick, [=](ampx_dtype dt) {
            const int64_t pad = k / 2;
            NodeSpec n("Conv2d", "probe");
            n.input(dt, {1, c_in, hw, hw})
                .input(dt, {c_out, c_in / group, k, k})
                .input(dt, {c_out})
                .output(dt, {1, c_out, hw, hw})
                .attr_ints("pads", {pad, pad, pad, pad})
                .attr_int("group", group);
            return n;
          }};
}

ProbeCase matmul(const char* op, int64_t m, int64_t k, int64_t n_, bool quick) {
  return {op, fmt::format("{}x{}x{}", m, k, n_), quick, [=](ampx_dtype dt) {
            NodeSpec n(op, "probe");
            n.input(dt, {m, k}).input(dt, {k, n_}).output(dt, {m, n_});
            return n;
          }};
}

// A Linear layer as exporters write it: Y = A B^T + C, B [n, k] (transB=1),
// C [n].
ProbeCase linear_gemm(int64_t m, int64_t k, int64_t n_, bool quick) {
  return {"Gemm", fmt::format("{}x{}x{} transB bias", m, k, n_), quick, [=](ampx_dtype dt) {
            NodeSpec n("Gemm", "probe");
            n.input(dt, {m, k})
                .input(dt, {n_, k})
                .input(dt, {n_})
                .output(dt, {m, n_})
                .attr_int("transB", 1);
            return n;
          }};
}

std::string dims_label(const Dims& d) {
  std::string s;
  for (const int64_t x : d) s += fmt::format("{}{}", s.empty() ? "" : "x", x);
  return s;
}

// One input, output of the same shape.
ProbeCase unary(const char* op, Dims dims, bool quick) {
  return {op, dims_label(dims), quick, [=](ampx_dtype dt) {
            NodeSpec n(op, "probe");
            n.input(dt, dims).output(dt, dims);
            if (std::string_view(op) == "Clip") n.attr_float("min", -0.5).attr_float("max", 0.5);
            return n;
          }};
}

ProbeCase binary(const char* op, Dims dims, bool quick) {
  return {op, dims_label(dims), quick, [=](ampx_dtype dt) {
            NodeSpec n(op, "probe");
            n.input(dt, dims).input(dt, dims).output(dt, dims);
            return n;
          }};
}

ProbeCase layernorm(int64_t rows, int64_t cols, bool quick) {
  return {"LayerNorm", fmt::format("{}x{}", rows, cols), quick, [=](ampx_dtype dt) {
            NodeSpec n("LayerNorm", "probe");
            n.input(dt, {rows, cols}).input(dt, {cols}).input(dt, {cols}).output(dt, {rows, cols});
            return n;
          }};
}

ProbeCase batchnorm(Dims dims, bool quick) {
  return {"BatchNorm", dims_label(dims), quick, [=](ampx_dtype dt) {
            NodeSpec n("BatchNorm", "probe");
            n.input(dt, dims);
            for (int i = 0; i < 4; ++i) n.input(dt, {dims[1]});
            n.output(dt, dims);
            return n;
          }};
}

ProbeCase pool(const char* op, int64_t c, int64_t hw, bool quick) {
  return {op, fmt::format("3x3/2 {}x{}x{}", c, hw, hw), quick, [=](ampx_dtype dt) {
            NodeSpec n(op, "probe");
            const int64_t out = (hw + 2 - 3) / 2 + 1;
            n.input(dt, {1, c, hw, hw})
                .output(dt, {1, c, out, out})
                .attr_ints("kernel_shape", {3, 3})
                .attr_ints("strides", {2, 2})
                .attr_ints("pads", {1, 1, 1, 1});
            return n;
          }};
}

ProbeCase global_pool(int64_t c, int64_t hw, bool quick) {
  return {"GlobalAveragePool", fmt::format("{}x{}x{}", c, hw, hw), quick, [=](ampx_dtype dt) {
            NodeSpec n("GlobalAveragePool", "probe");
            n.input(dt, {1, c, hw, hw}).output(dt, {1, c, 1, 1});
            return n;
          }};
}

ProbeCase reduce(const char* op, int64_t rows, int64_t cols, bool quick) {
  return {op, fmt::format("{}x{} last axis", rows, cols), quick, [=](ampx_dtype dt) {
            NodeSpec n(op, "probe");
            n.input(dt, {rows, cols})
                .output(dt, {rows, 1})
                .attr_ints("axes", {-1})
                .attr_int("keepdims", 1);
            return n;
          }};
}

ProbeCase softmax(int64_t rows, int64_t cols, bool quick) {
  return {"Softmax", fmt::format("{}x{}", rows, cols), quick, [=](ampx_dtype dt) {
            NodeSpec n("Softmax", "probe");
            n.input(dt, {rows, cols}).output(dt, {rows, cols});
            return n;
          }};
}

// Data movement: one size, in both catalogues.
std::vector<ProbeCase> data_ops() {
  const Dims x{1, 64, 32, 32};
  std::vector<ProbeCase> v;
  v.push_back({"Reshape", "1x64x32x32 -> 1x64x1024", true, [=](ampx_dtype dt) {
                 NodeSpec n("Reshape", "probe");
                 n.input(dt, x).output(dt, {1, 64, 1024}).attr_ints("shape", {1, 64, 1024});
                 return n;
               }});
  v.push_back({"Flatten", "1x64x32x32", true, [=](ampx_dtype dt) {
                 NodeSpec n("Flatten", "probe");
                 n.input(dt, x).output(dt, {1, 65536}).attr_int("axis", 1);
                 return n;
               }});
  v.push_back({"Transpose", "1x64x32x32 NCHW->NHWC", true, [=](ampx_dtype dt) {
                 NodeSpec n("Transpose", "probe");
                 n.input(dt, x).output(dt, {1, 32, 32, 64}).attr_ints("perm", {0, 2, 3, 1});
                 return n;
               }});
  v.push_back(
      {"Concat", "2x 1x32x32x32 axis 1", true, [=](ampx_dtype dt) {
         NodeSpec n("Concat", "probe");
         n.input(dt, {1, 32, 32, 32}).input(dt, {1, 32, 32, 32}).output(dt, x).attr_int("axis", 1);
         return n;
       }});
  v.push_back({"Slice", "1x64x32x32 half channels", true, [=](ampx_dtype dt) {
                 NodeSpec n("Slice", "probe");
                 n.input(dt, x)
                     .output(dt, {1, 32, 32, 32})
                     .attr_ints("starts", {0})
                     .attr_ints("ends", {32})
                     .attr_ints("axes", {1});
                 return n;
               }});
  v.push_back({"Gather", "1000x256 rows, 64 i64 indices", true, [=](ampx_dtype dt) {
                 NodeSpec n("Gather", "probe");
                 n.input(dt, {1000, 256})
                     .input(AMPX_DTYPE_I64, {64})
                     .output(dt, {64, 256})
                     .attr_int("axis", 0);
                 return n;
               }});
  return v;
}

std::vector<ProbeCase> full_catalog() {
  std::vector<ProbeCase> v;
  v.push_back(conv("conv3x3 64->64 28x28 n1", 64, 64, 3, 28, 1, true));
  v.push_back(conv("conv3x3 64->64 56x56 n1", 64, 64, 3, 56, 1, false));
  v.push_back(conv("conv1x1 64->256 28x28 n1", 64, 256, 1, 28, 1, true));
  v.push_back(conv("conv1x1 64->256 56x56 n1", 64, 256, 1, 56, 1, false));
  v.push_back(conv("dwconv3x3 128 28x28 n1", 128, 128, 3, 28, 128, true));
  v.push_back(matmul("MatMul", 128, 256, 256, true));
  v.push_back(matmul("MatMul", 512, 512, 512, false));
  v.push_back(linear_gemm(128, 256, 256, true));
  v.push_back(linear_gemm(512, 512, 512, false));
  const Dims small{1, 64, 32, 32}, large{1, 256, 64, 64};  // 64K and 1M elements
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Gelu", "Clip", "Dropout"}) {
    v.push_back(unary(op, small, true));
    v.push_back(unary(op, large, false));
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    v.push_back(binary(op, small, true));
    v.push_back(binary(op, large, false));
  }
  v.push_back(softmax(128, 512, true));
  v.push_back(softmax(1024, 1024, false));
  v.push_back(layernorm(128, 512, true));
  v.push_back(layernorm(1024, 1024, false));
  v.push_back(batchnorm(small, true));
  v.push_back(batchnorm(large, false));
  for (const char* op : {"MaxPool", "AveragePool"}) {
    v.push_back(pool(op, 64, 32, true));
    v.push_back(pool(op, 64, 112, false));
  }
  v.push_back(global_pool(64, 32, true));
  v.push_back(global_pool(256, 64, false));
  for (const char* op : {"ReduceMean", "ReduceSum"}) {
    v.push_back(reduce(op, 128, 512, true));
    v.push_back(reduce(op, 1024, 1024, false));
  }
  for (auto& c : data_ops()) v.push_back(std::move(c));
  return v;
}

}  // namespace

std::vector<ProbeCase> probe_catalog(bool quick, const std::vector<std::string>& ops) {
  std::vector<ProbeCase> out;
  for (auto& c : full_catalog()) {
    if (quick && !c.quick) continue;
    if (!ops.empty() && std::find(ops.begin(), ops.end(), c.op) == ops.end()) continue;
    out.push_back(std::move(c));
  }
  return out;
}

NodeSpec make_cast(ampx_dtype from, ampx_dtype to, int64_t elements) {
  NodeSpec n("Cast", "probe");
  n.input(from, {elements}).output(to, {elements}).attr_int("to", static_cast<int64_t>(to));
  return n;
}

}  // namespace ampx::capability
