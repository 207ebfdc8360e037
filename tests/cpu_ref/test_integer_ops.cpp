// The integer types (i8 to i64, u8 to u64) in the reference kernels, bit for
// bit: wrapping arithmetic in each width, BitShift at ONNX opset 28's edges,
// the bitwise ops, BitCast, and Cast through u64's top bit and into the
// narrow types. NumPy's side of the same tables: tests/python/test_integer_dtypes.py.
#include <cstring>
#include <limits>

#include "harness.hpp"

namespace ampx::test {
namespace {

using Ints = std::vector<int64_t>;

template <class T>
Tensor raw(ampx_dtype dt, Ints dims, const std::vector<T>& v) {
  Tensor t = Tensor::zeros(dt, std::move(dims));
  EXPECT_EQ(t.bytes.size(), v.size() * sizeof(T));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

template <class T>
std::vector<T> as(const Tensor& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

template <class T>
std::vector<T> binary(const char* op, ampx_dtype dt, const std::vector<T>& a,
                      const std::vector<T>& b, const char* direction = nullptr) {
  const Tensor ta = raw(dt, {static_cast<int64_t>(a.size())}, a);
  const Tensor tb = raw(dt, {static_cast<int64_t>(b.size())}, b);
  NodeBuilder nb(op, "n");
  add_input(nb, ta);
  add_input(nb, tb);
  nb.output(dt, {static_cast<int64_t>(a.size())});
  if (direction) nb.attr_str("direction", direction);
  return as<T>(run_node(nb, {&ta, &tb})[0]);
}

TEST(IntegerOps, ArithmeticWrapsInTheNarrowAndUnsignedTypes) {
  using U16 = std::vector<uint16_t>;
  EXPECT_EQ(binary("Add", AMPX_DTYPE_U16, U16{65535, 40000}, U16{1, 40000}), (U16{0, 14464}));
  EXPECT_EQ(binary("Sub", AMPX_DTYPE_U16, U16{0, 5}, U16{1, 3}), (U16{65535, 2}));
  EXPECT_EQ(binary("Mul", AMPX_DTYPE_U16, U16{300, 7}, U16{300, 3}), (U16{24464, 21}));
  using I16 = std::vector<int16_t>;
  EXPECT_EQ(binary("Div", AMPX_DTYPE_I16, I16{-7, 7, -32768}, I16{2, -2, -1}),
            (I16{-3, -3, -32768}));
  using U32 = std::vector<uint32_t>;
  // u32's divisor of UINT32_MAX is no -1: a true quotient, not a negation.
  EXPECT_EQ(binary("Div", AMPX_DTYPE_U32, U32{4294967295u, 9, 5}, U32{4294967295u, 2, 4294967295u}),
            (U32{1, 4, 0}));
  EXPECT_EQ(binary("Mod", AMPX_DTYPE_U32, U32{4294967295u, 9, 5}, U32{4294967295u, 4, 4294967295u}),
            (U32{0, 1, 5}));
  using U64 = std::vector<uint64_t>;
  constexpr uint64_t kTop = uint64_t{1} << 63;
  EXPECT_EQ(binary("Max", AMPX_DTYPE_U64, U64{kTop, 1}, U64{5, 2}), (U64{kTop, 2}));
  using I8 = std::vector<int8_t>;
  EXPECT_EQ(binary("Add", AMPX_DTYPE_I8, I8{127, -128}, I8{1, -1}), (I8{-128, 127}));
}

TEST(IntegerOps, BitShiftFollowsOpset28AtEveryAmount) {
  using U8 = std::vector<uint8_t>;
  EXPECT_EQ(binary("BitShift", AMPX_DTYPE_U8, U8{16, 4, 255, 1, 1}, U8{1, 2, 1, 7, 8}, "LEFT"),
            (U8{32, 16, 254, 128, 0}));
  EXPECT_EQ(binary("BitShift", AMPX_DTYPE_U8, U8{16, 4, 255, 255}, U8{1, 2, 7, 200}, "RIGHT"),
            (U8{8, 1, 1, 0}));
  using I32 = std::vector<int32_t>;
  // Arithmetic right shift; negative or too large amounts give the sign extension alone.
  EXPECT_EQ(
      binary("BitShift", AMPX_DTYPE_I32, I32{-16, -16, 16, -16, 5}, I32{2, 32, 40, -1, 0}, "RIGHT"),
      (I32{-4, -1, 0, -1, 5}));
  EXPECT_EQ(binary("BitShift", AMPX_DTYPE_I32, I32{1, -1, 3, 3}, I32{31, 4, 32, -3}, "LEFT"),
            (I32{std::numeric_limits<int32_t>::min(), -16, 0, 0}));
  using U64 = std::vector<uint64_t>;
  EXPECT_EQ(binary("BitShift", AMPX_DTYPE_U64, U64{3, 1}, U64{63, 64}, "LEFT"),
            (U64{uint64_t{1} << 63, 0}));
}

TEST(IntegerOps, BitwiseOpsInEveryWidth) {
  using I64 = std::vector<int64_t>;
  EXPECT_EQ(binary("BitwiseAnd", AMPX_DTYPE_I64, I64{-1, 12}, I64{5, 10}), (I64{5, 8}));
  EXPECT_EQ(binary("BitwiseOr", AMPX_DTYPE_I64, I64{-128, 12}, I64{1, 3}), (I64{-127, 15}));
  EXPECT_EQ(binary("BitwiseXor", AMPX_DTYPE_I64, I64{-1, 12}, I64{5, 10}), (I64{-6, 6}));
  using U16 = std::vector<uint16_t>;
  const Tensor x = raw(AMPX_DTYPE_U16, {3}, U16{0, 1, 0xF0F0});
  NodeBuilder nb("BitwiseNot", "n");
  add_input(nb, x);
  nb.output(AMPX_DTYPE_U16, {3});
  EXPECT_EQ(as<uint16_t>(run_node(nb, {&x})[0]), (U16{0xFFFF, 0xFFFE, 0x0F0F}));
  // Floats have no bits to combine here: refused, not computed as floats.
  const Tensor f = Tensor::of(AMPX_DTYPE_F32, {2}, {1, 2});
  NodeBuilder bad("BitwiseAnd", "bad");
  add_input(bad, f);
  add_input(bad, f);
  bad.output(AMPX_DTYPE_F32, {2});
  EXPECT_FALSE(reference::can_run(bad.desc(), nullptr));
}

TEST(IntegerOps, BitCastKeepsTheBytesAndNeedsTheSameWidth) {
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {3}, {1.0, -2.5, 3.75});
  NodeBuilder nb("BitCast", "n");
  add_input(nb, x);
  nb.output(AMPX_DTYPE_I32, {3}).attr_int("to", AMPX_DTYPE_I32);
  EXPECT_EQ(as<int32_t>(run_node(nb, {&x})[0]),
            (std::vector<int32_t>{1065353216, -1071644672, 1081081856}));
  NodeBuilder wide("BitCast", "wide");
  add_input(wide, x);
  wide.output(AMPX_DTYPE_I64, {3}).attr_int("to", AMPX_DTYPE_I64);
  std::string why;
  EXPECT_FALSE(reference::can_run(wide.desc(), &why));
  EXPECT_NE(why.find("width"), std::string::npos) << why;
}

TEST(IntegerOps, CastThroughU64sTopBitAndIntoTheNarrowTypes) {
  const uint64_t big = (uint64_t{1} << 63) + 4096;
  const Tensor x = raw(AMPX_DTYPE_U64, {2}, std::vector<uint64_t>{big, 7});
  NodeBuilder to_f64("Cast", "c");
  add_input(to_f64, x);
  to_f64.output(AMPX_DTYPE_F64, {2}).attr_int("to", AMPX_DTYPE_F64);
  EXPECT_EQ(as<double>(run_node(to_f64, {&x})[0]),
            (std::vector<double>{static_cast<double>(big), 7.0}));
  NodeBuilder to_i16("Cast", "w");  // narrowing wraps: low 16 bits
  add_input(to_i16, x);
  to_i16.output(AMPX_DTYPE_I16, {2}).attr_int("to", AMPX_DTYPE_I16);
  EXPECT_EQ(as<int16_t>(run_node(to_i16, {&x})[0]), (std::vector<int16_t>{4096, 7}));
  const Tensor f = Tensor::of(AMPX_DTYPE_F32, {4}, {70000, -3, 1e20, 12.9});
  NodeBuilder to_u16("Cast", "s");  // floats saturate and truncate
  add_input(to_u16, f);
  to_u16.output(AMPX_DTYPE_U16, {4}).attr_int("to", AMPX_DTYPE_U16);
  EXPECT_EQ(as<uint16_t>(run_node(to_u16, {&f})[0]), (std::vector<uint16_t>{65535, 0, 65535, 12}));
  const Tensor u = raw(AMPX_DTYPE_U64, {1}, std::vector<uint64_t>{~uint64_t{0}});
  NodeBuilder to_bf16("Cast", "b");  // one rounding: 2^64 - 1 -> 2^64
  add_input(to_bf16, u);
  to_bf16.output(AMPX_DTYPE_BF16, {1}).attr_int("to", AMPX_DTYPE_BF16);
  EXPECT_EQ(run_node(to_bf16, {&u})[0].values(), (std::vector<double>{18446744073709551616.0}));
}

TEST(IntegerOps, NegIsRefusedForTheUnsignedTypes) {
  for (ampx_dtype dt : {AMPX_DTYPE_U8, AMPX_DTYPE_U16, AMPX_DTYPE_U32, AMPX_DTYPE_U64}) {
    const Tensor x = Tensor::of(dt, {2}, {1, 2});
    NodeBuilder nb("Neg", "n");
    add_input(nb, x);
    nb.output(dt, {2});
    std::string why;
    EXPECT_FALSE(reference::can_run(nb.desc(), &why)) << plugin_support::dtype_name(dt);
    EXPECT_NE(why.find("unsigned"), std::string::npos) << why;
  }
  for (ampx_dtype dt : {AMPX_DTYPE_I8, AMPX_DTYPE_I16}) {
    const Tensor x = Tensor::of(dt, {2}, {1, -3});
    NodeBuilder nb("Neg", "n");
    add_input(nb, x);
    nb.output(dt, {2});
    EXPECT_EQ(run_node(nb, {&x})[0].values(), (std::vector<double>{-1, 3}));
  }
}

}  // namespace
}  // namespace ampx::test
