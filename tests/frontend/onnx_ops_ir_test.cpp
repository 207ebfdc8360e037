// Schemas and shape inference of the ops added for the ONNX importer.
#include <ampx/ir/builder.hpp>
#include <ampx/ir/op_type.hpp>
#include <ampx/ir/shape_inference.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

using Ints = std::vector<int64_t>;

TensorType t(DType d, Shape s) {
  return {d, std::move(s)};
}

std::vector<TensorType> infer(OpType op, std::vector<TensorType> in, AttrMap attrs = {}) {
  return infer_output_types(op, in, attrs, "n");
}

std::string error_of(OpType op, std::vector<TensorType> in, AttrMap attrs = {}) {
  try {
    infer(op, std::move(in), std::move(attrs));
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxOpSchemas, NamesParseAndAmpCategories) {
  for (const char* name :
       {"ConvTranspose", "LeakyRelu", "PRelu",      "HardSigmoid", "HardSwish", "Erf",
        "Pow",           "Sqrt",      "Reciprocal", "Exp",         "Log",       "Neg",
        "LogSoftmax",    "ReduceMax", "ArgMax",     "Split",       "Expand",    "Pad",
        "Resize",        "Where",     "Equal"}) {
    const auto op = parse_op(name);
    ASSERT_TRUE(op.has_value()) << name;
    EXPECT_EQ(op_name(*op), name);
  }
  EXPECT_EQ(amp_category(OpType::kConvTranspose), AmpCategory::kWhite);
  EXPECT_EQ(amp_category(OpType::kPRelu), AmpCategory::kWhite);
  for (OpType op : {OpType::kExp, OpType::kLog, OpType::kPow, OpType::kErf, OpType::kReciprocal,
                    OpType::kLogSoftmax})
    EXPECT_EQ(amp_category(op), AmpCategory::kBlack) << op_name(op);
  for (OpType op : {OpType::kArgMax, OpType::kEqual, OpType::kWhere, OpType::kSplit, OpType::kPad,
                    OpType::kExpand, OpType::kResize, OpType::kReduceMax})
    EXPECT_EQ(amp_category(op), AmpCategory::kFollow) << op_name(op);
}

TEST(OnnxOpShapes, ConvTransposeFollowsTheOnnxFormula) {
  // H: 2*(5-1) + 1 + (3-1)*1 + 1 - 1 - 2 = 9; W: 3*(4-1) + 0 + (2-1)*2 + 1 - 0 - 0 = 12
  auto out =
      infer(OpType::kConvTranspose,
            {t(DType::kF32, {2, 4, 5, 4}), t(DType::kF32, {4, 3, 3, 2}), t(DType::kF32, {6})},
            {{"strides", Ints{2, 3}},
             {"pads", Ints{1, 0, 2, 0}},
             {"dilations", Ints{1, 2}},
             {"output_padding", Ints{1, 0}},
             {"group", int64_t{2}}});
  EXPECT_EQ(out[0], t(DType::kF32, {2, 6, 9, 12}));
  EXPECT_THAT(error_of(OpType::kConvTranspose,
                       {t(DType::kF32, {1, 4, 5, 5}), t(DType::kF32, {3, 2, 3, 3})}),
              HasSubstr("does not match input channels"));
  EXPECT_THAT(
      error_of(OpType::kConvTranspose, {t(DType::kF32, {1, 2, 5, 5}), t(DType::kF32, {2, 2, 3, 3})},
               {{"output_padding", Ints{1, 1}}}),
      HasSubstr("output_padding must be smaller"));
}

TEST(OnnxOpShapes, ElementwiseAndBroadcasting) {
  EXPECT_EQ(infer(OpType::kLeakyRelu, {t(DType::kF16, {3, 4})}, {{"alpha", 0.2}})[0],
            t(DType::kF16, {3, 4}));
  EXPECT_THAT(error_of(OpType::kExp, {t(DType::kI64, {3})}), HasSubstr("must be floating point"));
  EXPECT_EQ(infer(OpType::kNeg, {t(DType::kI64, {3})})[0], t(DType::kI64, {3}));
  EXPECT_EQ(infer(OpType::kPRelu, {t(DType::kF32, {2, 3, 4, 5}), t(DType::kF32, {3, 1, 1})})[0],
            t(DType::kF32, {2, 3, 4, 5}));
  EXPECT_THAT(error_of(OpType::kPRelu, {t(DType::kF32, {3, 1}), t(DType::kF32, {3, 4})}),
              HasSubstr("does not broadcast to the input"));
  EXPECT_EQ(infer(OpType::kPow, {t(DType::kF32, {2, 3}), t(DType::kF32, {})})[0],
            t(DType::kF32, {2, 3}));
  EXPECT_EQ(infer(OpType::kEqual, {t(DType::kI64, {4, 1}), t(DType::kI64, {3})})[0],
            t(DType::kBool, {4, 3}));
  EXPECT_EQ(infer(OpType::kWhere,
                  {t(DType::kBool, {3, 1}), t(DType::kF16, {1, 4}), t(DType::kF16, {2, 1, 1})})[0],
            t(DType::kF16, {2, 3, 4}));
  EXPECT_THAT(
      error_of(OpType::kWhere, {t(DType::kF32, {3}), t(DType::kF32, {3}), t(DType::kF32, {3})}),
      HasSubstr("condition must be bool"));
  // Integer shape arithmetic for the importer's constant folder.
  EXPECT_EQ(infer(OpType::kDiv, {t(DType::kI64, {2}), t(DType::kI64, {})})[0], t(DType::kI64, {2}));
}

TEST(OnnxOpShapes, ReductionsAndIndices) {
  EXPECT_EQ(infer(OpType::kReduceMax, {t(DType::kF32, {2, 3, 4})},
                  {{"axes", Ints{1}}, {"keepdims", int64_t{0}}})[0],
            t(DType::kF32, {2, 4}));
  EXPECT_EQ(infer(OpType::kReduceMax, {t(DType::kF32, {2, 3, 4})})[0], t(DType::kF32, {1, 1, 1}));
  EXPECT_EQ(infer(OpType::kArgMax, {t(DType::kBF16, {2, 3, 4})}, {{"axis", int64_t{-1}}})[0],
            t(DType::kI64, {2, 3, 1}));
  EXPECT_EQ(infer(OpType::kArgMax, {t(DType::kF32, {2, 3, 4})}, {{"keepdims", int64_t{0}}})[0],
            t(DType::kI64, {3, 4}));
  EXPECT_EQ(infer(OpType::kLogSoftmax, {t(DType::kF32, {2, 3})})[0], t(DType::kF32, {2, 3}));
}

TEST(OnnxOpShapes, DataMovement) {
  auto outs = infer(OpType::kSplit, {t(DType::kI64, {2, 7})},
                    {{"axis", int64_t{1}}, {"split", Ints{2, 0, 5}}});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[0], t(DType::kI64, {2, 2}));
  EXPECT_EQ(outs[1], t(DType::kI64, {2, 0}));
  EXPECT_EQ(outs[2], t(DType::kI64, {2, 5}));
  EXPECT_THAT(error_of(OpType::kSplit, {t(DType::kF32, {4})}, {{"split", Ints{1, 2}}}),
              HasSubstr("sum to 3"));
  EXPECT_THAT(error_of(OpType::kSplit, {t(DType::kF32, {4})}),
              HasSubstr("missing required attribute 'split'"));
  // Bidirectional: a 1 in 'shape' keeps the input dim.
  EXPECT_EQ(infer(OpType::kExpand, {t(DType::kF32, {3, 1})}, {{"shape", Ints{2, 1, 4}}})[0],
            t(DType::kF32, {2, 3, 4}));
  EXPECT_EQ(infer(OpType::kPad, {t(DType::kF32, {2, 3})}, {{"pads", Ints{0, 1, 1, -1}}})[0],
            t(DType::kF32, {3, 3}));
  EXPECT_THAT(error_of(OpType::kPad, {t(DType::kF32, {2, 3})},
                       {{"pads", Ints{0, 3, 0, 0}}, {"mode", std::string("reflect")}}),
              HasSubstr("reflect pads must be smaller"));
  EXPECT_EQ(infer(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})},
                  {{"sizes", Ints{1, 3, 8, 7}}, {"mode", std::string("linear")}})[0],
            t(DType::kF32, {1, 3, 8, 7}));
  EXPECT_THAT(
      error_of(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})}, {{"sizes", Ints{1, 6, 8, 7}}}),
      HasSubstr("only the last two dimensions"));
  EXPECT_THAT(error_of(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})},
                       {{"sizes", Ints{1, 3, 8, 7}}, {"nearest_mode", std::string("up")}}),
              HasSubstr("unsupported nearest_mode"));
  // The general form: tf_crop_and_resize needs its roi, scales one per
  // dimension and 1 where the size stays.
  using Floats = std::vector<double>;
  EXPECT_THAT(error_of(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})},
                       {{"sizes", Ints{1, 3, 8, 7}},
                        {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}),
              HasSubstr("roi must have 8 values"));
  EXPECT_THAT(error_of(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})},
                       {{"sizes", Ints{1, 3, 8, 7}}, {"scales", Floats{1, 2, 2, 1.5}}}),
              HasSubstr("only the last two dimensions"));
  EXPECT_EQ(infer(OpType::kResize, {t(DType::kF32, {1, 3, 4, 5})},
                  {{"sizes", Ints{1, 3, 6, 2}},
                   {"scales", Floats{1, 1, 1.7, 0.5}},
                   {"mode", std::string("cubic")}})[0],
            t(DType::kF32, {1, 3, 6, 2}));
}

TEST(OnnxOpShapes, SplitThroughTheBuilder) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {6, 2});
  auto outs = b.add_multi(OpType::kSplit, "s", {x}, {{"split", Ints{4, 2}}});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(b.type(outs[1]).shape, (Shape{2, 2}));
  b.output(outs[0]);
  b.output(outs[1]);
  EXPECT_NO_THROW(std::move(b).build());
}

}  // namespace
