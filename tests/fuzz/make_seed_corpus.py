#!/usr/bin/env python3
# Writes the seed corpora of the libFuzzer targets in tests/fuzz:
#   OUT_DIR/onnx_import/*.onnx  the test models of tests/onnx/make_models.py and
#                               one tiny valid model per importer op variant;
#   OUT_DIR/npy/*.npy           small arrays of every dtype the .npy reader takes,
#                               other format versions, and two it must reject;
#   OUT_DIR/checkpoint/*.ampxckpt  training checkpoints (safetensors' layout,
#                               format ampx.checkpoint/2 with every tensor's
#                               CRC-32), written as frontend/train/src/checkpoint.cpp does.
# Valid, small inputs let the fuzzer reach deep into the importer at once
# instead of first having to discover protobuf. Deterministic: rerunning gives
# identical bytes. Rerun after adding an op to the importer
# (frontend/onnx/src/onnx_ops.cpp) and add its seeds below.
#
# Usage: make_seed_corpus.py OUT_DIR   (with the venv of scripts/python-env.sh)
import json
import os
import struct
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx"))
import make_models  # noqa: E402

SEED = 20261203
F, F16, I64, I32, BOOL = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64,
                          TensorProto.INT32, TensorProto.BOOL)
U8, I8 = TensorProto.UINT8, TensorProto.INT8
X = [("x", F, [1, 2, 4, 4])]  # the usual input: NCHW, 32 elements


def rng_for(name):
    # Keyed by name: a seed's bytes do not change when others are added.
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def w(name, *shape, lo=-1.0, hi=1.0):
    """A float32 initializer of small random values."""
    values = rng_for(f"{name}{shape}").uniform(lo, hi, shape).astype(np.float32)
    return numpy_helper.from_array(values, name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def u8(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.uint8), name)


def i8(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int8), name)


def i16(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int16), name)


def i32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int32), name)


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


def build(name, nodes, inputs, inits=(), outputs=("y",), opset=17, domains=None):
    """A checked model whose output types come from ONNX shape inference;
    `domains` [(domain, version)] replaces the default opset import (the
    ai.onnx.ml and training models import only their domain)."""
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outputs], list(inits))
    imports = [helper.make_opsetid(d, v) for d, v in domains or [("", opset)]]
    m = helper.make_model(graph, opset_imports=imports, producer_name="ampx-fuzz-seeds")
    m.ir_version = 8 if opset <= 18 else 9 if opset <= 21 else 10 if opset == 22 else 11
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    del m.graph.value_info[:]
    for o in m.graph.output:
        dims = o.type.tensor_type.shape.dim
        if not o.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            raise SystemExit(f"{name}: output '{o.name}' has no static shape after inference")
    onnx.checker.check_model(m, full_check=True)
    return m


def op_seeds():
    """(file name, model) for each importer op and each variant of it that
    takes another path in onnx_ops.cpp."""
    s = []

    def add(name, nodes, inputs=X, inits=(), outputs=("y",), opset=17, domains=None):
        s.append((name, build(name, nodes, inputs, inits, outputs, opset, domains)))

    # element-wise
    for op in ["Erf", "Exp", "Log", "Neg", "Reciprocal", "Relu", "Sigmoid", "Sqrt", "Tanh",
               "HardSwish", "GlobalAveragePool"]:
        add(op, [node(op, ["x"])])
    add("LeakyRelu", [node("LeakyRelu", ["x"], alpha=0.1)])
    add("HardSigmoid", [node("HardSigmoid", ["x"], alpha=1.0 / 6, beta=0.5)])
    add("PRelu", [node("PRelu", ["x", "slope"])], inits=[w("slope", 2, 1, 1, lo=0.0, hi=0.3)])
    add("Gelu-opset20", [node("Gelu", ["x"])], opset=20)
    add("Gelu-opset20-tanh", [node("Gelu", ["x"], approximate="tanh")], opset=20)
    for op in ["Add", "Sub", "Mul"]:
        add(op, [node(op, ["x", "b"])], inits=[w("b", 1, 2, 1, 1)])
    add("Div", [node("Div", ["x", "b"])], inits=[w("b", 4, lo=0.5, hi=2.0)])
    add("Pow", [node("Pow", ["x", "e"])], inits=[f32("e", 2.0)])
    add("Pow-int64_exponent", [node("Pow", ["x", "e"])], inits=[i64("e", 3)])
    add("Equal", [node("Equal", ["ids", "zero"])], [("ids", I64, [1, 6])], [i64("zero", 0)])
    add("Where", [node("Where", ["c", "x", "b"])], [("c", BOOL, [1, 2, 4, 4])] + X,
        [w("b", 4)])
    add("Clip-min_max", [node("Clip", ["x", "lo", "hi"])], inits=[f32("lo", 0.0), f32("hi", 6.0)],
        opset=11)
    add("Clip-min_only", [node("Clip", ["x", "lo"])], inits=[f32("lo", -0.5)], opset=13)
    add("Clip-no_bounds", [node("Clip", ["x"])], opset=13)

    # convolution and pooling (weights [Cout, Cin/group, kH, kW])
    add("Conv", [node("Conv", ["x", "W", "B"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                      strides=[1, 1])], inits=[w("W", 3, 2, 3, 3), w("B", 3)])
    add("Conv-auto_pad_same_upper", [node("Conv", ["x", "W"], auto_pad="SAME_UPPER",
                                          strides=[2, 2])], inits=[w("W", 2, 2, 2, 2)])
    add("Conv-auto_pad_same_lower-group", [node("Conv", ["x", "W"], auto_pad="SAME_LOWER",
                                                group=2)], inits=[w("W", 2, 1, 2, 2)])
    add("Conv-dilations", [node("Conv", ["x", "W"], kernel_shape=[3, 3], pads=[2, 2, 2, 2],
                                dilations=[2, 2])], inits=[w("W", 2, 2, 3, 3)])
    add("Conv-auto_pad_valid", [node("Conv", ["x", "W", "B"], auto_pad="VALID")],
        inits=[w("W", 1, 2, 3, 3), w("B", 1)])
    # ConvTranspose weights are [Cin, Cout/group, kH, kW]
    add("ConvTranspose", [node("ConvTranspose", ["x", "W", "B"], kernel_shape=[2, 2],
                               strides=[2, 2])], inits=[w("W", 2, 3, 2, 2), w("B", 3)])
    add("ConvTranspose-output_shape", [node("ConvTranspose", ["x", "W"], strides=[2, 2],
                                            output_shape=[8, 8])], inits=[w("W", 2, 1, 3, 3)])
    add("ConvTranspose-auto_pad_same_upper",
        [node("ConvTranspose", ["x", "W"], strides=[2, 2], auto_pad="SAME_UPPER")],
        inits=[w("W", 2, 1, 3, 3)])
    add("ConvTranspose-output_padding-group",
        [node("ConvTranspose", ["x", "W"], strides=[2, 2], pads=[1, 1, 1, 1],
              output_padding=[1, 1], group=2)], inits=[w("W", 2, 1, 3, 3)])
    add("MaxPool", [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1])])
    add("MaxPool-ceil_mode", [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                                   ceil_mode=1)])
    add("MaxPool-auto_pad_same_upper", [node("MaxPool", ["x"], kernel_shape=[3, 3],
                                             strides=[2, 2], auto_pad="SAME_UPPER")])
    add("AveragePool", [node("AveragePool", ["x"], kernel_shape=[2, 2], strides=[2, 2])])
    add("AveragePool-count_include_pad", [node("AveragePool", ["x"], kernel_shape=[3, 3],
                                               pads=[1, 1, 1, 1], count_include_pad=1)])
    add("AveragePool-auto_pad_same_lower", [node("AveragePool", ["x"], kernel_shape=[3, 3],
                                                 strides=[2, 2], auto_pad="SAME_LOWER")])

    # contractions and normalisation
    add("MatMul", [node("MatMul", ["x", "W"])], inits=[w("W", 4, 3)])
    add("Gemm", [node("Gemm", ["a", "W", "C"], transB=1, alpha=0.5, beta=1.0)],
        [("a", F, [2, 4])], [w("W", 3, 4), w("C", 3)])
    add("Gemm-transA-no_bias", [node("Gemm", ["a", "W"], transA=1)], [("a", F, [4, 2])],
        [w("W", 4, 3)])
    add("BatchNormalization", [node("BatchNormalization", ["x", "scale", "B", "mean", "var"],
                                    epsilon=1e-5)],
        inits=[w("scale", 2, lo=0.5, hi=1.5), w("B", 2), w("mean", 2),
               w("var", 2, lo=0.5, hi=1.5)], opset=15)
    add("LayerNormalization", [node("LayerNormalization", ["x", "scale", "B"], axis=-1,
                                    epsilon=1e-5)],
        inits=[w("scale", 4, lo=0.5, hi=1.5), w("B", 4)])
    add("LayerNormalization-axis2-no_bias", [node("LayerNormalization", ["x", "scale"], axis=2)],
        inits=[w("scale", 4, 4, lo=0.5, hi=1.5)])
    add("LayerNormalization-mean_invstddev",
        [node("LayerNormalization", ["x", "scale"], ["y", "mean", "isd"], axis=1)],
        inits=[w("scale", 2, 4, 4, lo=0.5, hi=1.5)], outputs=("y", "mean", "isd"))
    add("RMSNormalization", [node("RMSNormalization", ["x", "scale"], axis=-1)],
        inits=[w("scale", 4, lo=0.5, hi=1.5)], opset=23)
    add("RMSNormalization-axis1-broadcast_scale",
        [node("RMSNormalization", ["x", "scale"], axis=1, epsilon=0.1)],
        inits=[w("scale", 1, 4, lo=0.5, hi=1.5)], opset=23)
    for op in ["Softmax", "LogSoftmax"]:
        add(f"{op}-opset11-axis1", [node(op, ["x"], axis=1)], opset=11)
        add(f"{op}-opset13", [node(op, ["x"], axis=-1)], opset=13)
    for op in ["ReduceMean", "ReduceMax"]:
        add(f"{op}-opset13-axes_attr", [node(op, ["x"], axes=[2, 3], keepdims=1)], opset=13)
        add(f"{op}-opset18-axes_input", [node(op, ["x", "axes"], keepdims=0)],
            inits=[i64("axes", [-1])], opset=18)
    add("ReduceSum-opset11-axes_attr", [node("ReduceSum", ["x"], axes=[1], keepdims=1)], opset=11)
    add("ReduceSum-opset13-axes_input", [node("ReduceSum", ["x", "axes"], keepdims=0)],
        inits=[i64("axes", [2, 3])], opset=13)
    add("ReduceSum-opset13-all_axes", [node("ReduceSum", ["x"], keepdims=0)], opset=13)
    add("ReduceSum-opset13-noop_with_empty_axes",  # an empty axes input: ORT fails without one
        [node("Relu", ["x"], ["r"]), node("ReduceSum", ["r", "axes"], noop_with_empty_axes=1)],
        inits=[i64("axes", [])], opset=13)
    add("ArgMax", [node("ArgMax", ["x"], axis=1, keepdims=0, select_last_index=1)], opset=13)
    add("ArgMin-opset11", [node("ArgMin", ["x"], axis=2, keepdims=1)], opset=11)
    add("ArgMin", [node("ArgMin", ["x"], axis=1, keepdims=0, select_last_index=1)], opset=13)
    # recurrent ops (onnx_recurrent.cpp): X [T=3, N=2, I=4], H = 5
    seq = [("s", F, [3, 2, 4])]
    add("LSTM-bidirectional-lens", [node("LSTM", ["s", "W", "R", "B", "lens", "h0", "c0", "P"],
                                         ["y", "yh", "yc"], hidden_size=5,
                                         direction="bidirectional", clip=3.0)], seq,
        [w("W", 2, 20, 4), w("R", 2, 20, 5), w("B", 2, 40), i32("lens", [3, 1]),
         w("h0", 2, 2, 5), w("c0", 2, 2, 5), w("P", 2, 15)], outputs=("y", "yh", "yc"), opset=14)
    add("LSTM-layout1", [node("LSTM", ["s", "W", "R"], ["", "yh"], hidden_size=5, layout=1,
                              input_forget=1)], seq, [w("W", 1, 20, 4), w("R", 1, 20, 5)],
        outputs=("yh",), opset=14)
    add("GRU-reverse", [node("GRU", ["s", "W", "R", "B"], ["y"], hidden_size=5,
                             direction="reverse", linear_before_reset=1)], seq,
        [w("W", 1, 15, 4), w("R", 1, 15, 5), w("B", 1, 30)], opset=14)
    add("RNN-activation", [node("RNN", ["s", "W", "R"], ["y", "yh"], hidden_size=5,
                                activations=["HardSigmoid"], activation_alpha=[0.3],
                                activation_beta=[0.4])], seq,
        [w("W", 1, 5, 4), w("R", 1, 5, 5)], outputs=("y", "yh"), opset=14)
    # If whose condition folds (Shape(x)[0] == 1): the then branch reads x
    then_g = helper.make_graph([node("Relu", ["x"], ["t"])], "then", [],
                               [helper.make_empty_tensor_value_info("t")])
    else_g = helper.make_graph([node("Neg", ["x"], ["e"])], "else", [],
                               [helper.make_empty_tensor_value_info("e")])
    add("If-folded", [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["d"]),
                      node("Equal", ["d", "one"], ["c"]),
                      node("If", ["c"], then_branch=then_g, else_branch=else_g)],
        inits=[i64("zero", 0), i64("one", 1)], opset=16)
    # If on a run-time condition: both branches and a Where
    add("If-runtime", [node("ReduceSum", ["x"], ["s"], keepdims=0),
                       node("Greater", ["s", "z"], ["c"]),
                       node("If", ["c"], then_branch=then_g, else_branch=else_g)],
        inits=[f32("z", 0.0)], opset=16)
    # ops imported as op-set ops (onnx_decomposed_ops.cpp); X is [1, 2, 4, 4]
    add("InstanceNormalization", [node("InstanceNormalization", ["x", "sc", "b"])],
        inits=[w("sc", 2, lo=0.5, hi=1.5), w("b", 2)])
    add("DepthToSpace-CRD", [node("DepthToSpace", ["d"], blocksize=2, mode="CRD")],
        [("d", F, [1, 8, 2, 3])])
    add("SpaceToDepth", [node("SpaceToDepth", ["x"], blocksize=2)])
    add("Tile", [node("Tile", ["x", "reps"])], inits=[i64("reps", [1, 2, 1, 3])])
    # indexing, sorting, running sums, Einsum and the losses (onnx_index_ops.cpp,
    # onnx_einsum.cpp, onnx_losses.cpp); X is [1, 2, 4, 4]
    add("Mod-fmod", [node("Mod", ["x", "b"], fmod=1)], inits=[w("b", 4, lo=0.5, hi=2.0)])
    add("CumSum-exclusive_reverse", [node("CumSum", ["x", "ax"], exclusive=1, reverse=1)],
        inits=[i64("ax", 2)])
    add("CumProd-exclusive_reverse", [node("CumProd", ["x", "ax"], exclusive=1, reverse=1)],
        inits=[i64("ax", 2)], opset=26)
    add("TopK", [node("TopK", ["x", "k"], ["y", "yi"], axis=-1)], inits=[i64("k", [2])],
        outputs=("y", "yi"))
    add("GatherElements", [node("GatherElements", ["x", "gi"], axis=2)],
        inits=[i64("gi", np.array([0, 3, -1, 2] * 8).reshape(1, 2, 4, 4))])
    add("GatherND-batch_dims", [node("GatherND", ["x", "gi"], batch_dims=1)],
        inits=[i64("gi", np.array([[[1, 3], [0, -2]]]))])
    add("ScatterND-add", [node("ScatterND", ["x", "si", "u"], reduction="add")],
        inits=[i64("si", np.array([[0, 1], [0, 1]])), w("u", 2, 4, 4)], opset=18)
    # the bit ops and the narrow and unsigned integer types (onnx_bitwise.cpp)
    U16, U64, I16 = TensorProto.UINT16, TensorProto.UINT64, TensorProto.INT16
    add("BitShift-u16", [node("BitShift", ["a", "b"], direction="LEFT")],
        [("a", U16, [2, 3]), ("b", U16, [3])], opset=11)
    add("BitwiseAnd-u64", [node("BitwiseAnd", ["a", "b"])], [("a", U64, [2, 3]), ("b", U64, [1])],
        opset=18)
    add("BitwiseNot-i16", [node("BitwiseNot", ["a"])], [("a", I16, [4])], opset=18)
    add("BitCast-f32-i32", [node("BitCast", ["x"], to=I32)], opset=26)
    add("Cast-u16-f32", [node("Cast", ["a"], to=F)], [("a", U16, [4])])
    add("Einsum", [node("Einsum", ["x", "x"], equation="bchw,bcvw->bchv")], opset=12)
    # spatial forms (onnx_ops.cpp, onnx_spatial.cpp); X is [1, 2, 4, 4]
    add("GridSample-bicubic_reflection", [node("GridSample", ["x", "gr"], mode="bicubic",
                                               padding_mode="reflection", align_corners=1)],
        inits=[w("gr", 1, 3, 5, 2, lo=-1.3, hi=1.3)], opset=16)
    add("GridSample-volumetric", [node("GridSample", ["v", "gr"], mode="linear")],
        [("v", F, [1, 2, 3, 4, 4])], inits=[w("gr", 1, 2, 3, 2, 3, lo=-1.3, hi=1.3)], opset=20)
    # the LLM blocks of opsets 27-28 (onnx_llm_ops.cpp, onnx_attention.cpp)
    add("SwiGLU-alpha", [node("SwiGLU", ["x", "x"], alpha=1.702)], opset=28)
    add("CausalConvWithState-silu_past", [node("CausalConvWithState", ["l", "cw", "cb", "cs"],
                                               ["y", "st"], activation="silu")],
        [("l", F, [1, 2, 5])], inits=[w("cw", 2, 1, 3), w("cb", 2), w("cs", 1, 2, 2)],
        outputs=("y", "st"), opset=27)
    add("LinearAttention-gated_delta_gqa",
        [node("LinearAttention", ["q", "k", "v", "", "dc", "bt"], ["y", "st"], q_num_heads=4,
              kv_num_heads=2)],
        [("q", F, [1, 3, 8]), ("k", F, [1, 3, 4]), ("v", F, [1, 3, 6])],
        inits=[w("dc", 1, 3, 4, lo=-0.3, hi=0.0), w("bt", 1, 3, 2, lo=0.0, hi=1.0)],
        outputs=("y", "st"), opset=27)
    add("LinearAttention-linear_past", [node("LinearAttention", ["q", "k", "v", "ps"], ["y", "st"],
                                             update_rule="linear", q_num_heads=2,
                                             kv_num_heads=2, scale=0.5)],
        [("q", F, [1, 3, 8]), ("k", F, [1, 3, 8]), ("v", F, [1, 3, 6])],
        inits=[w("ps", 1, 2, 4, 3)], outputs=("y", "st"), opset=27)
    add("AffineGrid-3d_align_corners",
        [node("AffineGrid", ["th", "sz"], align_corners=1)],
        [("th", F, [1, 3, 4])], inits=[i64("sz", [1, 2, 3, 2, 4])], opset=20)
    add("LRN-even_size", [node("LRN", ["x"], size=4, alpha=2e-4, beta=0.5, bias=2.0)])
    add("Det-batched", [node("Det", ["d"])], [("d", F, [2, 3, 3])])
    add("Col2Im-strided_padded",
        [node("Col2Im", ["c", "im", "bl"], strides=[1, 2], dilations=[2, 1], pads=[1, 0, 0, 1])],
        [("c", F, [1, 12, 12])], inits=[i64("im", [5, 6]), i64("bl", [2, 3])], opset=18)
    add("LpPool-p3", [node("LpPool", ["x"], kernel_shape=[2, 3], p=3, pads=[1, 0, 0, 1])],
        opset=18)
    add("MaxPool-1d", [node("MaxPool", ["l"], kernel_shape=[3], strides=[2], pads=[1, 1])],
        [("l", F, [1, 2, 9])])
    add("MaxPool-3d_dilated_ceil", [node("MaxPool", ["v"], kernel_shape=[2, 2, 2],
                                         dilations=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1],
                                         ceil_mode=1)], [("v", F, [1, 2, 5, 4, 6])], opset=12)
    add("AveragePool-2d_dilated", [node("AveragePool", ["x"], kernel_shape=[2, 2],
                                        dilations=[2, 2], pads=[1, 1, 0, 1],
                                        count_include_pad=1)], opset=19)
    add("MaxPool-indices", [node("MaxPool", ["x"], ["y", "yi"], kernel_shape=[3, 2],
                                 strides=[2, 1], pads=[1, 0, 1, 1], storage_order=1)],
        outputs=("y", "yi"), opset=12)
    add("MaxPool-uint8", [node("MaxPool", ["u"], kernel_shape=[2, 2], pads=[1, 1, 0, 0])],
        [("u", TensorProto.UINT8, [1, 2, 4, 4])], opset=12)
    add("MaxUnpool", [node("MaxPool", ["x"], ["p", "pi"], kernel_shape=[2, 2], strides=[2, 2]),
                      node("MaxUnpool", ["p", "pi"], kernel_shape=[2, 2], strides=[2, 2])],
        opset=11)
    add("ConvTranspose-1d", [node("ConvTranspose", ["l", "wt"], strides=[2], output_padding=[1])],
        [("l", F, [1, 2, 9])], inits=[w("wt", 2, 3, 3)])
    add("Resize-cubic_fractional_scales", [node("Resize", ["x", "", "sc"], mode="cubic",
                                                exclude_outside=1, cubic_coeff_a=-0.5)],
        inits=[f32("sc", [1.0, 1.0, 1.7, 0.6])], opset=13)
    add("Resize-tf_crop_and_resize", [node("Resize", ["x", "roi", "", "sz"], mode="linear",
                                           coordinate_transformation_mode="tf_crop_and_resize",
                                           extrapolation_value=2.0, axes=[3, 2])],
        inits=[f32("roi", [0.1, -0.2, 0.9, 1.1]), i64("sz", [5, 3])], opset=18)
    add("Resize-antialias_not_larger", [node("Resize", ["x", "", "", "sz"], mode="linear",
                                             antialias=1, keep_aspect_ratio_policy="not_larger",
                                             axes=[2, 3])],
        inits=[i64("sz", [3, 2])], opset=18)
    add("SoftmaxCrossEntropyLoss", [node("SoftmaxCrossEntropyLoss", ["x", "lb"], ignore_index=1)],
        inits=[i64("lb", np.array([[[0, 1, 1, 0]] * 4]))], opset=13)
    add("NonZero-folded", [node("NonZero", ["nz"], ["n"]), node("Cast", ["n"], ["nf"], to=F),
                           node("ReduceSum", ["nf"], ["r"], keepdims=0),
                           node("Add", ["x", "r"])], inits=[f32("nz", [0.0, 2.0, 0.0, -1.0])])
    # NonMaxSuppression and Unique, evaluated at import (onnx_non_max_suppression.cpp,
    # onnx_unique.cpp): their selections' sizes feed an Add on x.
    add("NonMaxSuppression-folded",
        [node("NonMaxSuppression", ["bx", "sc", "mo", "io", "st"], ["s"], center_point_box=1),
         node("Cast", ["s"], ["sf"], to=F), node("ReduceSum", ["sf"], ["r"], keepdims=0),
         node("Add", ["x", "r"])],
        inits=[f32("bx", np.array([[[0.5, 0.5, 1, 1], [0.6, 0.5, 1, 1], [3, 3, 1, 2]]])),
               f32("sc", np.array([[[0.9, 0.8, 0.7], [0.1, 0.95, 0.2]]])), i64("mo", [2]),
               f32("io", [0.5]), f32("st", [0.15])], opset=11)
    add("Unique-folded-axis",
        [node("Unique", ["uq"], ["u", "ui", "uv", "uc"], axis=-1, sorted=0),
         node("Cast", ["uc"], ["ucf"], to=F), node("ReduceSum", ["ucf"], ["r"], keepdims=0),
         node("Add", ["x", "r"])],
        inits=[f32("uq", np.array([[1.0, 0.0, 1.0, -0.0], [2.0, 3.0, 2.0, 3.0]]))], opset=11)
    # Attention and RotaryEmbedding (onnx_attention.cpp): 3-D with grouped
    # heads, a float mask and a KV cache; 4-D with a bool mask and the
    # probabilities output; opset 24's nonpad_kv_seqlen; rotary with
    # position_ids (X [1, 2, 4, 4] is [batch, heads, sequence, head size]).
    qkv3 = [("q", F, [1, 3, 16]), ("k", F, [1, 3, 8]), ("v", F, [1, 3, 8])]
    add("Attention-3d-gqa-past", [node("Attention", ["q", "k", "v", "m", "pk", "pv"],
                                       ["y", "pko", "pvo"], q_num_heads=4, kv_num_heads=2,
                                       is_causal=1, softcap=2.0)],
        qkv3, [w("m", 3, 5), w("pk", 1, 2, 2, 4), w("pv", 1, 2, 2, 4)],
        outputs=("y", "pko", "pvo"), opset=23)
    qkv4 = [("q", F, [1, 2, 3, 4]), ("k", F, [1, 2, 5, 4]), ("v", F, [1, 2, 5, 4])]
    add("Attention-4d-boolmask-probabilities",
        [node("Attention", ["q", "k", "v", "bm"], ["y", "", "", "qk"], qk_matmul_output_mode=3,
              scale=0.5)], qkv4 + [("bm", BOOL, [3, 5])], outputs=("y", "qk"), opset=23)
    add("Attention-nonpad_kv_seqlen-opset24",
        [node("Attention", ["q", "k", "v", "", "", "", "nl"], is_causal=1)], qkv4,
        [i64("nl", [4])], opset=24)
    # ai.onnx.preview's FlexAttention: the fused Attention (grouped heads),
    # and composed around a causal score_mod (indices from Shape/Range) and
    # a prob_mod, both subgraphs inlined.
    preview = [("", 26), ("ai.onnx.preview", 1)]
    gqa = [("q", F, [1, 4, 3, 4]), ("k", F, [1, 2, 5, 4]), ("v", F, [1, 2, 5, 6])]
    add("FlexAttention-gqa-scale", [node("FlexAttention", ["q", "k", "v"], domain="ai.onnx.preview",
                                         scale=0.25)], gqa, opset=26, domains=preview)
    sx = [helper.make_tensor_value_info("x", F, None)]
    sy = [helper.make_tensor_value_info("y", F, None)]
    causal = helper.make_graph(
        [node("Shape", ["x"], ["sh"]), node("Gather", ["sh", "two"], ["L"], axis=0),
         node("Gather", ["sh", "three"], ["S"], axis=0), node("Range", ["zero", "L", "one"], ["qi"]),
         node("Reshape", ["qi", "qs"], ["qc"]), node("Range", ["zero", "S", "one"], ["ki"]),
         node("GreaterOrEqual", ["qc", "ki"], ["m"]), node("Where", ["m", "x", "ninf"], ["y"])],
        "causal", sx, sy, [i64("zero", 0), i64("one", 1), i64("two", 2), i64("three", 3),
                           i64("qs", [-1, 1]), f32("ninf", -np.inf)])
    square = helper.make_graph([node("Mul", ["x", "x"])], "square", sx, sy)
    add("FlexAttention-score_mod-prob_mod",
        [node("FlexAttention", ["q", "k", "v"], domain="ai.onnx.preview", score_mod=causal,
              prob_mod=square)], gqa, opset=26, domains=preview)
    add("RotaryEmbedding-position_ids-interleaved",
        [node("RotaryEmbedding", ["x", "cs", "sn", "pos"], interleaved=1)],
        inits=[w("cs", 6, 2), w("sn", 6, 2), i64("pos", [[5, 0, 2, 1]])], opset=23)
    # Loop with a folded trip count, and Scan (onnx_loops.cpp)
    body = helper.make_graph(
        [node("Identity", ["c"], ["c_out"]), node("Mul", ["h", "h"], ["h_out"])], "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", BOOL, []),
         helper.make_tensor_value_info("h", F, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("c_out", BOOL, []),
         helper.make_tensor_value_info("h_out", F, [1, 2, 4, 4])])
    # (ONNX's inference leaves Loop's outputs unshaped: a Reshape fixes it)
    add("Loop-for", [node("Loop", ["m", "t", "x"], ["l"], body=body),
                     node("Reshape", ["l", "shp"])],
        inits=[i64("m", 3), numpy_helper.from_array(np.array(True), "t"),
               i64("shp", [1, 2, 4, 4])], opset=16)
    sbody = helper.make_graph(
        [node("Add", ["s", "xt"], ["s_out"]), node("Relu", ["s_out"], ["z"])], "scan_body",
        [helper.make_tensor_value_info("s", F, [2, 4, 4]),
         helper.make_tensor_value_info("xt", F, [2, 4, 4])],
        [helper.make_tensor_value_info("s_out", F, [2, 4, 4]),
         helper.make_tensor_value_info("z", F, [2, 4, 4])])
    add("Scan", [node("Scan", ["s0", "x"], ["l", "zs"], body=sbody, num_scan_inputs=1),
                 node("Reshape", ["l", "shp"]), node("Reshape", ["zs", "shz"], ["z"])],
        inits=[w("s0", 2, 4, 4), i64("shp", [2, 4, 4]), i64("shz", [1, 2, 4, 4])],
        outputs=("y", "z"), opset=16)
    # Loops nested past the unroll bound (4000 x 4000 iterations), refused
    # before unrolling (issue 36: it ran until killed). Ifs nested past
    # protobuf's recursion limit: raw_seeds().
    inner = helper.make_graph(
        [node("Identity", ["c2"], ["c2_out"]), node("Mul", ["h2", "h2"], ["h2_out"])], "inner",
        [helper.make_tensor_value_info("i2", I64, []), helper.make_tensor_value_info("c2", BOOL, []),
         helper.make_tensor_value_info("h2", F, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("c2_out", BOOL, []),
         helper.make_tensor_value_info("h2_out", F, [1, 2, 4, 4])])
    outer = helper.make_graph(
        [node("Identity", ["c"], ["c_out"]),
         node("Loop", ["m", "t", "h"], ["h_out"], body=inner)], "outer",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", BOOL, []),
         helper.make_tensor_value_info("h", F, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("c_out", BOOL, []),
         helper.make_tensor_value_info("h_out", F, [1, 2, 4, 4])])
    add("Loop-nested-past-bound", [node("Loop", ["m", "t", "x"], ["l"], body=outer),
                                   node("Reshape", ["l", "shp"])],
        inits=[i64("m", 4000), numpy_helper.from_array(np.array(True), "t"),
               i64("shp", [1, 2, 4, 4])], opset=16)
    # Sequences and optionals as lists at import (onnx_sequences.cpp): split,
    # insert, erase, at, a SequenceMap body per element, concatenation.
    mbody = helper.make_graph(
        [node("Relu", ["e"], ["r"])], "map_body",
        [helper.make_tensor_value_info("e", F, None)], [helper.make_tensor_value_info("r", F, None)])
    add("Sequences", [node("SplitToSequence", ["x", "parts"], ["s"], axis=1),
                      node("SequenceInsert", ["s", "x", "zero"], ["s2"]),
                      node("SequenceErase", ["s2"], ["s3"]),
                      node("SequenceMap", ["s3"], ["s4"], body=mbody),
                      node("SequenceAt", ["s4", "zero"], ["a"]),
                      node("ConcatFromSequence", ["s4"], ["c"], axis=1),
                      node("Optional", ["c"], ["o"]),
                      node("OptionalGetElement", ["o"], ["g"]),
                      node("Reshape", ["g", "shp"])],  # a static shape for ONNX's inference
        inits=[i64("parts", [1, 1]), i64("zero", 0), i64("shp", [1, 3, 4, 4])], opset=18)
    add("Conv-1d", [node("Conv", ["a", "k"], pads=[1, 2], strides=[2])], [("a", F, [1, 2, 9])],
        [w("k", 3, 2, 4)])
    for op in ["ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"]:
        add(f"{op}-opset13-axes_attr", [node(op, ["x"], axes=[1, 3], keepdims=1)], opset=13)
        add(f"{op}-opset18-axes_input", [node(op, ["x", "axes"], keepdims=0)],
            inits=[i64("axes", [2])], opset=18)
    add("ReduceMin-opset18-noop_with_empty_axes",
        [node("Relu", ["x"], ["r"]), node("ReduceMin", ["r", "axes"], noop_with_empty_axes=1)],
        inits=[i64("axes", [])], opset=18)

    # the later element-wise ops: rounding, smooth activations, comparisons,
    # logic, variadic
    for op in ["Floor", "Ceil", "Abs", "Softplus"]:
        add(op, [node(op, ["x"])])
    add("Round-opset11", [node("Round", ["x"])], opset=11)
    add("Mish-opset18", [node("Mish", ["x"])], opset=18)
    for op in ["Less", "Greater"]:
        add(op, [node(op, ["x", "b"], ["c"]), node("Cast", ["c"], to=F)], inits=[w("b", 4)])
    for op in ["LessOrEqual", "GreaterOrEqual"]:
        add(f"{op}-opset12", [node(op, ["x", "b"], ["c"]), node("Cast", ["c"], to=F)],
            inits=[w("b", 1, 2, 1, 1)], opset=12)
    add("Not-And-Or", [node("Greater", ["x", "b"], ["g"]), node("Less", ["x", "b2"], ["l"]),
                       node("Not", ["g"], ["ng"]), node("And", ["ng", "l"], ["a"]),
                       node("Or", ["a", "g"], ["o"]), node("Cast", ["o"], to=F)],
        inits=[w("b", 4), w("b2", 4)])
    for op in ["Min", "Max", "Sum", "Mean"]:
        add(op, [node(op, ["x", "b", "c"])], inits=[w("b", 4), w("c", 1, 2, 1, 1)])
    add("Min-opset7-one_input", [node("Min", ["x"])], opset=7)

    # shape and data movement
    add("Reshape", [node("Reshape", ["x", "shape"])], inits=[i64("shape", [0, -1, 4])])
    add("Reshape-allowzero", [node("Reshape", ["x", "shape"], allowzero=1)],
        inits=[i64("shape", [2, 16])], opset=14)
    add("Flatten", [node("Flatten", ["x"], axis=2)])
    add("Flatten-negative_axis", [node("Flatten", ["x"], axis=-1)])
    add("Transpose", [node("Transpose", ["x"], perm=[0, 2, 3, 1])])
    add("Transpose-default_perm", [node("Transpose", ["x"])])
    add("Concat", [node("Concat", ["x", "z"], axis=1)], X + [("z", F, [1, 3, 4, 4])])
    add("Split-opset11-split_attr", [node("Split", ["x"], ["y", "y1"], axis=2, split=[1, 3])],
        outputs=["y", "y1"], opset=11)
    add("Split-opset13-split_input", [node("Split", ["x", "split"], ["y", "y1"], axis=-1)],
        inits=[i64("split", [3, 1])], outputs=["y", "y1"], opset=13)
    add("Split-opset13-equal", [node("Split", ["x"], ["y", "y1"], axis=1)],
        outputs=["y", "y1"], opset=13)
    add("Split-opset18-num_outputs",
        [node("Split", ["x"], ["y", "y1", "y2"], axis=3, num_outputs=3)],
        [("x", F, [1, 2, 4, 5])], outputs=["y", "y1", "y2"], opset=18)
    add("Slice", [node("Slice", ["x", "starts", "ends", "axes", "steps"])],
        inits=[i64("starts", [0, 1]), i64("ends", [2, 4]), i64("axes", [2, 3]),
               i64("steps", [1, 2])])
    add("Slice-starts_ends", [node("Slice", ["x", "starts", "ends"])],
        inits=[i64("starts", [0, 0, 1, 1]), i64("ends", [1, 2, 3, 3])])
    add("Slice-negative_step", [node("Slice", ["x", "starts", "ends", "axes", "steps"])],
        inits=[i64("starts", [-1]), i64("ends", [-(2**63) + 1]), i64("axes", [3]),
               i64("steps", [-1])])
    add("Gather", [node("Gather", ["x", "idx"], axis=1)], inits=[i64("idx", [1, 0])])
    add("Gather-scalar_index", [node("Gather", ["x", "idx"], axis=2)], inits=[i64("idx", 3)])
    add("Gather-embedding", [node("Gather", ["table", "ids"])], [("ids", I64, [1, 3])],
        [w("table", 6, 4)])
    add("Squeeze-opset11-axes_attr", [node("Squeeze", ["x"], axes=[0, 2])],
        [("x", F, [1, 2, 1, 4])], opset=11)
    add("Squeeze-opset13-axes_input", [node("Squeeze", ["x", "axes"])],
        [("x", F, [1, 2, 1, 4])], [i64("axes", [-2])], opset=13)
    add("Squeeze-opset13-no_axes", [node("Squeeze", ["x"])], [("x", F, [1, 2, 1, 4])], opset=13)
    add("Unsqueeze-opset11-axes_attr", [node("Unsqueeze", ["x"], axes=[0, -1])],
        [("x", F, [2, 4])], opset=11)
    add("Unsqueeze-opset13-axes_input", [node("Unsqueeze", ["x", "axes"])],
        [("x", F, [2, 4])], [i64("axes", [1])], opset=13)
    add("Expand", [node("Expand", ["x", "shape"])], [("x", F, [2, 1, 4])],
        [i64("shape", [1, 2, 3, 4])])
    pads = i64("pads", [0, 0, 1, 1, 0, 0, 1, 1])
    add("Pad-constant", [node("Pad", ["x", "pads", "v"], mode="constant")],
        inits=[pads, f32("v", 0.5)], opset=13)
    add("Pad-opset11-reflect", [node("Pad", ["x", "pads"], mode="reflect")], inits=[pads],
        opset=11)
    add("Pad-edge", [node("Pad", ["x", "pads"], mode="edge")], inits=[pads], opset=13)
    add("Pad-opset18-axes", [node("Pad", ["x", "pads", "", "axes"])],
        inits=[i64("pads", [1, 0, 0, 1]), i64("axes", [2, 3])], opset=18)
    add("Pad-all_zero", [node("Pad", ["x", "pads"], ["p"]), node("Relu", ["p"])],
        inits=[i64("pads", [0] * 8)], opset=13)
    add("Resize-opset11-nearest-scales",
        [node("Resize", ["x", "roi", "scales"], mode="nearest",
              coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
        inits=[f32("roi", []), f32("scales", [1, 1, 2, 2])], opset=11)
    add("Resize-linear-sizes",
        [node("Resize", ["x", "", "", "sizes"], mode="linear",
              coordinate_transformation_mode="half_pixel")],
        inits=[i64("sizes", [1, 2, 8, 6])], opset=13)
    add("Resize-linear-align_corners",
        [node("Resize", ["x", "", "scales"], mode="linear",
              coordinate_transformation_mode="align_corners")],
        inits=[f32("scales", [1, 1, 2, 2])], opset=13)
    add("Resize-opset18-nearest-round_prefer_ceil",
        [node("Resize", ["x", "", "", "sizes"], mode="nearest", nearest_mode="round_prefer_ceil",
              coordinate_transformation_mode="pytorch_half_pixel")],
        inits=[i64("sizes", [1, 2, 3, 3])], opset=18)
    # the forms of opsets 7 to 10 (docs/ONNX.md, "Opsets")
    add("Upsample-opset7-scales_attr",
        [node("Upsample", ["x"], scales=[1.0, 1.0, 2.0, 2.0], mode="nearest")], opset=7)
    add("Upsample-opset9-linear", [node("Upsample", ["x", "scales"], mode="linear")],
        inits=[f32("scales", [1, 1, 2, 3])], opset=9)
    add("Resize-opset10-nearest-shrink", [node("Resize", ["x", "scales"], mode="nearest")],
        inits=[f32("scales", [1, 1, 0.5, 0.5])], opset=10)
    add("Slice-opset9-attrs", [node("Slice", ["x"], starts=[1, -3], ends=[3, 100], axes=[2, 3])],
        opset=9)
    add("Pad-opset10-attrs", [node("Pad", ["x"], pads=[0, 0, 1, 0, 0, 0, 0, 2], value=0.5)],
        opset=10)
    add("Clip-opset10-attrs", [node("Clip", ["x"], min=-0.5, max=0.5)], opset=10)
    # forms composed at import (issue 40)
    add("MatMul-1d", [node("MatMul", ["v", "W"])], [("v", F, [4])], [w("W", 2, 4, 3)])
    add("BatchNormalization-training", [node("BatchNormalization",
                                             ["x", "scale", "B", "mean", "var"],
                                             ["y", "rm", "rv"], training_mode=1)],
        inits=[w("scale", 2, lo=0.5, hi=1.5), w("B", 2), w("mean", 2),
               w("var", 2, lo=0.5, hi=1.5)], outputs=("y", "rm", "rv"), opset=15)
    add("Pad-opset19-wrap", [node("Pad", ["x", "pads"], mode="wrap")],
        inits=[i64("pads", [0, 0, 5, -1, 0, 0, 1, 2])], opset=19)
    add("Einsum-diagonal", [node("Einsum", ["x"], equation="bcii->bci")], opset=12)
    add("ReverseSequence", [node("ReverseSequence", ["s", "lens"], batch_axis=0, time_axis=1)],
        [("s", F, [3, 4, 2])], [i64("lens", [0, 2, 4])], opset=10)
    add("TensorScatter-circular", [node("TensorScatter", ["x", "u", "at"], mode="circular")],
        [("x", F, [1, 2, 4, 4]), ("u", F, [1, 2, 3, 4])], [i64("at", [3])], opset=24)
    add("Not-opset1", [node("Not", ["b"])], [("b", onnx.TensorProto.BOOL, [2, 3])], opset=1)
    add("BatchNormalization-opset7-spatial",
        [node("BatchNormalization", ["x", "scale", "B", "mean", "var"], spatial=1)],
        inits=[w("scale", 2, lo=0.5, hi=1.5), w("B", 2), w("mean", 2),
               w("var", 2, lo=0.5, hi=1.5)], opset=7)
    add("Dropout-opset7-ratio_attr", [node("Dropout", ["x"], ["t"], ratio=0.2),
                                      node("Relu", ["t"])], opset=7)
    add("Cast-to_float16", [node("Cast", ["x"], to=F16)])
    add("Cast-int64_to_float", [node("Cast", ["ids"], to=F)], [("ids", I64, [2, 3])])
    # The importer rejects a graph output that is the graph input itself, so
    # ops it turns into aliases (here, Pad-all_zero, ReduceSum noop) get a Relu.
    add("Cast-same_type", [node("Relu", ["x"], ["r"]), node("Cast", ["r"], to=F)])
    add("Identity", [node("Identity", ["x"], ["t"]), node("Relu", ["t"])])
    add("Dropout", [node("Dropout", ["x", "ratio"], ["t", "mask"]), node("Relu", ["t"])],
        inits=[f32("ratio", 0.1)], opset=13)

    # resolved at import from shapes and constants (each then meets x, so
    # the output is not a constant)
    add("Shape", [node("Shape", ["x"], ["s"]), node("Reshape", ["x", "s"])])
    add("Shape-opset15-start", [node("Shape", ["x"], ["s"], start=-3),
                                node("Reshape", ["x", "s"])], opset=15)
    add("Shape-opset15-start_end", [node("Shape", ["x"], ["s"], start=0, end=2),
                                    node("Concat", ["s", "rest"], ["s2"], axis=0),
                                    node("Reshape", ["x", "s2"])],
        inits=[i64("rest", [-1])], opset=15)
    add("Size", [node("Size", ["x"], ["n"]), node("Cast", ["n"], ["nf"], to=F),
                 node("Mul", ["x", "nf"])])
    add("Constant-value", [node("Constant", [], ["c"], value=w("c", 4)),
                           node("Add", ["x", "c"])], opset=13)
    add("Constant-value_float", [node("Constant", [], ["c"], value_float=0.5),
                                 node("Add", ["x", "c"])], opset=13)
    add("Constant-value_floats", [node("Constant", [], ["c"], value_floats=[0.5, -1.0, 2.0, 0.0]),
                                  node("Add", ["x", "c"])], opset=13)
    add("Constant-value_int", [node("Constant", [], ["c"], value_int=3),
                               node("Cast", ["c"], ["cf"], to=F), node("Mul", ["x", "cf"])],
        opset=13)
    add("Constant-value_ints", [node("Constant", [], ["c"], value_ints=[1, 8, 4]),
                                node("Reshape", ["x", "c"])], opset=13)
    add("ConstantOfShape", [node("ConstantOfShape", ["shape"], ["c"], value=f32("v", [0.5])),
                            node("Add", ["x", "c"])], inits=[i64("shape", [2, 1, 4])])
    add("ConstantOfShape-default_value", [node("ConstantOfShape", ["shape"], ["c"]),
                                          node("Add", ["x", "c"])], inits=[i64("shape", [4])])
    add("Range-float", [node("Range", ["start", "limit", "delta"], ["r"]),
                        node("Add", ["x", "r"])],
        inits=[f32("start", 0.0), f32("limit", 2.0), f32("delta", 0.5)], opset=13)
    for name, make, t in [("Range-int64", i64, I64), ("Range-int32", i32, I32)]:
        add(name, [node("Range", ["start", "limit", "delta"], ["r"]),
                   node("Cast", ["r"], ["rf"], to=F), node("Add", ["x", "rf"])],
            inits=[make("start", 0), make("limit", 8), make("delta", 2)], opset=13)

    # compositions of op-set ops (onnx_composed_ops.cpp)
    add("Trilu-lower-k", [node("Trilu", ["x", "k"], upper=0)], inits=[i64("k", -1)], opset=14)
    add("Trilu-upper", [node("Trilu", ["x"])], opset=14)
    add("Xor", [node("Xor", ["a", "b"])], [("a", BOOL, [2, 3]), ("b", BOOL, [3])])
    add("Hardmax-opset11", [node("Hardmax", ["x"], axis=2)], opset=11)
    add("Hardmax-opset13", [node("Hardmax", ["x"], axis=1)], opset=13)
    add("ReduceL1", [node("ReduceL1", ["x"], axes=[1], keepdims=0)], opset=13)
    add("ReduceLogSum-opset18", [node("ReduceLogSum", ["x", "axes"])], inits=[i64("axes", [-1])],
        opset=18)
    add("LpNormalization-p1", [node("LpNormalization", ["x"], p=1, axis=1)])
    add("LpNormalization", [node("LpNormalization", ["x"])])
    add("IsNaN", [node("IsNaN", ["x"])])
    add("IsInf-positive", [node("IsInf", ["x"], detect_negative=0)])
    for op in ["Elu", "Selu", "Softsign", "ThresholdedRelu", "Shrink", "Sign"]:
        add(op, [node(op, ["x"])])
    add("Celu", [node("Celu", ["x"], alpha=0.5)])
    add("Swish-opset24", [node("Swish", ["x"], alpha=2.0)], opset=24)
    add("MeanVarianceNormalization", [node("MeanVarianceNormalization", ["x"], axes=[2, 3])])
    add("EyeLike", [node("EyeLike", ["m"], ["e"], k=1, dtype=F), node("Add", ["m", "e"])],
        [("m", F, [3, 4])])
    add("GlobalMaxPool", [node("GlobalMaxPool", ["x"])])
    add("CenterCropPad", [node("CenterCropPad", ["x", "s"], axes=[2, 3])], inits=[i64("s", [2, 6])],
        opset=18)
    add("ScatterElements-opset18-max",
        [node("ScatterElements", ["d", "i", "u"], axis=1, reduction="max")],
        [("d", F, [3, 4]), ("i", I64, [3, 2]), ("u", F, [3, 2])], opset=18)
    add("Scatter-opset10", [node("Scatter", ["d", "i", "u"])],
        [("d", F, [3, 4]), ("i", I32, [2, 4]), ("u", F, [2, 4])], opset=10)
    add("Clip-min_above_max", [node("Clip", ["x", "lo", "hi"])],
        inits=[f32("lo", 2.0), f32("hi", 1.0)], opset=13)
    for op in ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
               "Atanh"]:
        add(op, [node(op, ["x"])])
    add("ReduceMax-bool", [node("ReduceMax", ["c"], keepdims=0)], [("c", BOOL, [2, 3])], opset=20)
    # Signal ops (onnx_signal.cpp): constants from known sizes, the DFT as a MatMul.
    for op in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
        add(op, [node(op, ["n"], ["w"], periodic=0), node("Add", ["v", "w"])], [("v", F, [8])],
            inits=[i32("n", 8)], opset=17)
    add("MelWeightMatrix",
        [node("MelWeightMatrix", ["b", "l", "r", "lo", "hi"], ["m"]), node("Add", ["v", "m"])],
        [("v", F, [9, 4])],
        inits=[i32("b", 4), i32("l", 16), i32("r", 8192), f32("lo", 0.0), f32("hi", 4096.0)],
        opset=17)
    add("DFT-opset17-rfft", [node("DFT", ["s", "len"], axis=1, onesided=1)], [("s", F, [2, 8, 1])],
        inits=[i64("len", 6)], opset=17)
    add("DFT-opset20-inverse", [node("DFT", ["c", "", "ax"], inverse=1)], [("c", F, [3, 5, 2])],
        inits=[i64("ax", -2)], opset=20)
    add("DFT-opset20-irfft", [node("DFT", ["c", "", "ax"], inverse=1, onesided=1)],
        [("c", F, [2, 5, 2])], inits=[i64("ax", 1)], opset=20)
    add("STFT-window", [node("STFT", ["s", "st", "wn"])], [("s", F, [1, 32, 1])],
        inits=[i64("st", 4), f32("wn", np.hanning(8))], opset=17)
    # OneHot (its depth a constant; Compress's output has no static shape
    # for ONNX's inference), the
    # ai.onnx.ml and training ops (onnx_index_ops.cpp, onnx_ml_ops.cpp,
    # onnx_tree_ensemble.cpp, onnx_training_ops.cpp)
    add("OneHot-axis", [node("OneHot", ["i", "d", "v"], axis=1)], [("i", I64, [2, 3])],
        inits=[i64("d", 5), f32("v", [0.0, 2.0])], opset=11)
    ml = [("ai.onnx.ml", 5)]
    add("ml-Binarizer", [node("Binarizer", ["x"], domain="ai.onnx.ml", threshold=0.5)],
        domains=ml)
    add("ml-ArrayFeatureExtractor",
        [node("ArrayFeatureExtractor", ["x", "k"], domain="ai.onnx.ml")],
        inits=[i64("k", [3, 0])], domains=ml)
    # two trees: a LEQ root over a MEMBER node and a leaf, and a degenerate one
    add("ml-TreeEnsemble",
        [node("TreeEnsemble", ["f"], domain="ai.onnx.ml", n_targets=2, aggregate_function=0,
              post_transform=2, tree_roots=[0, 2], nodes_featureids=[0, 1, 1],
              nodes_truenodeids=[1, 0, 3], nodes_trueleafs=[0, 1, 1],
              nodes_falsenodeids=[1, 1, 3], nodes_falseleafs=[1, 1, 1],
              nodes_missing_value_tracks_true=[1, 0, 0],
              nodes_modes=numpy_helper.from_array(np.array([0, 6, 3], np.uint8), "m"),
              nodes_splits=f32("s", [0.5, 0.0, -1.0]),
              membership_values=f32("mv", [1.0, 3.0, np.nan]),
              leaf_targetids=[0, 1, 1, 0], leaf_weights=f32("w", [1.0, -2.0, 0.5, 4.0]))],
        [("f", F, [4, 2])], domains=ml)
    add("ml-TreeEnsembleRegressor",
        [node("TreeEnsembleRegressor", ["f"], domain="ai.onnx.ml", n_targets=1,
              aggregate_function="AVERAGE", base_values=[0.5], nodes_treeids=[0, 0, 0, 1, 1, 1],
              nodes_nodeids=[0, 1, 2, 0, 1, 2], nodes_featureids=[1, 0, 0, 0, 0, 0],
              nodes_modes=["BRANCH_NEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
              nodes_values=[0.0, 0, 0, 0.25, 0, 0], nodes_truenodeids=[1, 0, 0, 1, 0, 0],
              nodes_falsenodeids=[2, 0, 0, 2, 0, 0],
              nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 0],
              target_treeids=[0, 0, 1, 1], target_nodeids=[1, 2, 1, 2], target_ids=[0, 0, 0, 0],
              target_weights=[1.0, -1.0, 2.0, 0.5])],
        [("f", F, [4, 2])], domains=[("ai.onnx.ml", 3)])
    training = [("ai.onnx.preview.training", 1)]
    opt = [("r", F, []), ("t", I64, [])] + [(k, F, [3]) for k in ("x", "g", "v", "h")]
    add("training-Adam",
        [node("Adam", ["r", "t", "x", "g", "v", "h"], ["x2", "v2", "h2"],
              domain="ai.onnx.preview.training", alpha=0.9, beta=0.99, epsilon=1e-6)],
        opt, outputs=("x2", "v2", "h2"), domains=training)
    add("training-Momentum-nesterov",
        [node("Momentum", ["r", "t", "x", "g", "v"], ["x2", "v2"],
              domain="ai.onnx.preview.training", alpha=0.9, beta=0.1, mode="nesterov",
              norm_coefficient=0.01)],
        opt[:5], outputs=("x2", "v2"), domains=training)
    add("training-Adagrad",
        [node("Adagrad", ["r", "t", "x", "g", "h"], ["x2", "h2"],
              domain="ai.onnx.preview.training", decay_factor=0.1)],
        opt[:4] + opt[5:], outputs=("x2", "h2"), domains=training)
    # quantization (onnx_quantization.cpp): blocked, per-axis, the integer products
    add("QuantizeLinear-blocked-partial",
        [node("QuantizeLinear", ["m", "s", "z"], axis=1, block_size=3)], [("m", F, [3, 4])],
        inits=[f32("s", [[0.5, 2.0]] * 3), u8("z", [[3, 250]] * 3)], opset=21)
    add("DequantizeLinear-axis-int16",
        [node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
         node("DequantizeLinear", ["q", "s", "z"], axis=1)],
        inits=[f32("s", [0.1, 0.2]), i16("z", [-7, 9])], opset=21)
    add("DynamicQuantizeLinear", [node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])],
        outputs=("y", "ys", "yz"), opset=11)
    add("QLinearMatMul-per-column",
        [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"])],
        [("a", U8, [2, 3, 4])],
        inits=[f32("as", 0.1), u8("az", 3), u8("b", [[1, 2, 250]] * 4), f32("bs", [0.1, 0.2, 0.3]),
               u8("bz", [0, 1, 2]), f32("ys", 0.5), u8("yz", 128)], opset=10)
    add("QLinearConv-bias",
        [node("QLinearConv", ["q", "xs", "xz", "wq", "ws", "wz", "ys", "yz", "bias"],
              pads=[1, 1, 1, 1])],
        [("q", I8, [1, 2, 4, 4])],
        inits=[f32("xs", 0.05), i8("xz", -2), i8("wq", [[[[1, -1], [2, -128]]] * 2] * 3),
               f32("ws", [0.1, 0.2, 0.3]), i8("wz", [0, 0, 0]), f32("ys", 0.2), i8("yz", 5),
               i32("bias", [100, -100, 7])], opset=10)
    add("ConvInteger-1d", [node("ConvInteger", ["c", "wc", "cz"], strides=[2])],
        [("c", U8, [1, 2, 9])], inits=[u8("wc", [[[1, 2, 3]] * 2] * 4), u8("cz", 128)], opset=10)
    add("MatMulInteger-per-row", [node("MatMulInteger", ["a", "b2", "az2"])], [("a", I8, [3, 4])],
        inits=[i8("b2", [[1, -2]] * 4), i8("az2", [1, 2, 3])], opset=10)
    return s


def raw_seeds():
    """Seeds Python's protobuf cannot build, written as wire bytes: Ifs nested
    40 deep, past protobuf's recursion limit of 100 messages (issue 36: read
    as a corrupt file before)."""
    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def fld(num, payload):  # a length-delimited field
        return varint((num << 3) | 2) + varint(len(payload)) + payload

    out_vi = helper.make_tensor_value_info("o", F, [1, 2, 4, 4]).SerializeToString()

    def graph(nodes, name):  # GraphProto: node 1, name 2, output 12
        return b"".join(fld(1, n) for n in nodes) + fld(2, name.encode()) + fld(12, out_vi)

    def node(op, ins, outs, attrs=()):  # NodeProto: input 1, output 2, op_type 4, attribute 5
        return (b"".join(fld(1, i.encode()) for i in ins) + b"".join(fld(2, o.encode()) for o in outs)
                + fld(4, op.encode()) + b"".join(fld(5, a) for a in attrs))

    def graph_attr(name, g):  # AttributeProto: name 1, g 6, type 20 = GRAPH (5)
        return fld(1, name.encode()) + fld(6, g) + varint(20 << 3) + varint(5)

    other = graph([node("Neg", ["x"], ["o"])], "other")
    branch = graph([node("Relu", ["x"], ["o"])], "leaf")
    for depth in range(40):
        branch = graph([node("If", ["t"], ["o"], [graph_attr("then_branch", branch),
                                                 graph_attr("else_branch", other)])], f"if{depth}")
    top = helper.make_graph([], "g", [helper.make_tensor_value_info("x", F, [1, 2, 4, 4])],
                            [helper.make_tensor_value_info("y", F, [1, 2, 4, 4])],
                            [numpy_helper.from_array(np.array(True), "t")])
    top_bytes = top.SerializeToString() + fld(1, node("If", ["t"], ["y"], [
        graph_attr("then_branch", branch), graph_attr("else_branch", other)]))
    m = helper.make_model(helper.make_graph([], "g", [], []),
                          opset_imports=[helper.make_opsetid("", 16)])
    m.ClearField("graph")
    return [("If-nested-past-protobuf-limit", m.SerializeToString() + fld(7, top_bytes))]


def test_models():
    """The models of tests/onnx/make_models.py (their builders share one
    seeded RNG, so they are built in a fixed order)."""
    out = []
    for name in ["resnet", "mobilenet", "encoder", "ocr", "mlp", "softmax11", "logsoftmax12"]:
        model, _feeds, _shapes = getattr(make_models, name)()
        onnx.checker.check_model(model, full_check=True)
        out.append((name, model))
    return out


def npy_seeds():
    """(file name, array, format version or None for np.save's 1.0)."""
    rng = np.random.default_rng(SEED)
    out = []
    for dtype in ["float32", "float16", "float64", "int64", "int32", "int8", "uint8", "bool"]:
        for shape in [(), (5,), (2, 3), (2, 2, 3)]:
            if dtype == "bool":
                a = rng.integers(0, 2, shape).astype(bool)
            elif dtype.startswith("float"):
                a = rng.uniform(-4, 4, shape).astype(dtype)
            else:
                a = rng.integers(0 if dtype == "uint8" else -100, 100, shape).astype(dtype)
            dims = "x".join(map(str, shape)) or "scalar"
            out.append((f"{dtype}-{dims}", np.asarray(a), None))
    a = rng.uniform(-4, 4, (2, 3)).astype(np.float32)
    out.append(("format2.0-float32-2x3", a, (2, 0)))
    out.append(("format3.0-float32-2x3", a, (3, 0)))
    out.append(("reject-fortran_order-float32-2x3", np.asfortranarray(a), None))
    out.append(("reject-big_endian-float32-2x3", a.astype(">f4"), None))
    return out


CKPT_META = {"format": "ampx.checkpoint/2", "epoch": "2", "step": "90", "seed": "5",
             "model": "0123456789abcdef",
             "options": json.dumps({"optimizer": "adam", "lr": 0.002, "batch": 32},
                                   separators=(",", ":"))}
CKPT_LOSS_SCALE = json.dumps({"schedule": "dynamic:16777216,2,2000", "scale": 32768.0,
                              "good_steps": 17, "last_overflow_step": 9, "overflow_steps": 9,
                              "steps": 26, "consecutive_overflows": 0}, separators=(",", ":"))


def checkpoint_bytes(meta, tensors):
    """A checkpoint as the C++ writer lays it out: the header length, the
    compact JSON header padded with spaces to 8 bytes, the raw tensors.
    tensors: (name, safetensors dtype, shape, little-endian bytes)."""
    meta = dict(meta)
    meta["crc32"] = json.dumps({n: f"{zlib.crc32(b):08x}" for n, _, _, b in tensors},
                               separators=(",", ":"))
    header = {"__metadata__": meta}
    offset = 0
    for name, dtype, shape, b in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(b for _, _, _, b in tensors)


def checkpoint_seeds():
    """(name, bytes): an Adam run's state, with the loss scale, with a
    fallback, scalar and empty tensors of other dtypes, no tensors."""
    w = np.array([[0.5, -1.25, 3.0], [0.0, 0.001, -7.5]], "<f4").tobytes()
    adam = [("fc1.weight", "F32", [2, 3], w),
            ("fc1.bias", "F32", [3], np.array([0.1, 0.2, 0.3], "<f4").tobytes()),
            ("fc1.weight/adam_m", "F32", [2, 3], w), ("fc1.weight/adam_v", "F32", [2, 3], w),
            ("steps", "I64", [1], np.array([90], "<i8").tobytes())]
    scaled = dict(CKPT_META, loss_scale=CKPT_LOSS_SCALE)
    fallback = dict(scaled)
    fallback["amp_fallback"] = json.dumps(
        [{"layer": "fc1", "cause": "overflow", "step": 3,
          "detail": "named first at 3 overflowed steps in the last 200"}], separators=(",", ":"))
    fallback["fallback_windows"] = json.dumps(
        [{"layer": "fc1", "first": [1, 2], "underflow": [0.25, 0.5]}], separators=(",", ":"))
    fallback["order"] = json.dumps([t[0] for t in adam], separators=(",", ":"))
    odd = [("s", "F64", [], np.array(2.5, "<f8").tobytes()),
           ("e", "F16", [0, 4], b""),
           ("h", "BF16", [2], np.array([16256, 16384], "<u2").tobytes())]  # bf16 1 and 2
    return [("adam-two-layers", checkpoint_bytes(CKPT_META, adam)),
            ("adam-loss-scale", checkpoint_bytes(scaled, adam)),
            ("adam-fallback", checkpoint_bytes(fallback, adam)),
            ("scalar-and-empty", checkpoint_bytes(CKPT_META, odd)),
            ("no-tensors", checkpoint_bytes(CKPT_META, []))]


def fresh_dir(path, ext):
    """Make path, removing the seeds an earlier run left there."""
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        if f.endswith(ext):
            os.remove(os.path.join(path, f))


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_seed_corpus.py OUT_DIR")
    onnx_dir = os.path.join(sys.argv[1], "onnx_import")
    npy_dir = os.path.join(sys.argv[1], "npy")
    ckpt_dir = os.path.join(sys.argv[1], "checkpoint")
    fresh_dir(onnx_dir, ".onnx")
    fresh_dir(npy_dir, ".npy")
    fresh_dir(ckpt_dir, ".ampxckpt")
    for name, data in checkpoint_seeds():
        with open(os.path.join(ckpt_dir, name + ".ampxckpt"), "wb") as f:
            f.write(data)
    models = test_models() + op_seeds()
    raw = raw_seeds()
    names = [n for n, _ in models + raw]
    if len(set(names)) != len(names):
        raise SystemExit("two seeds have the same name")
    for name, model in models:
        onnx.save(model, os.path.join(onnx_dir, name + ".onnx"))
    for name, data in raw:
        with open(os.path.join(onnx_dir, name + ".onnx"), "wb") as f:
            f.write(data)
    for name, array, version in npy_seeds():
        path = os.path.join(npy_dir, name + ".npy")
        if version is None:
            np.save(path, array, allow_pickle=False)
        else:
            with open(path, "wb") as f:
                np.lib.format.write_array(f, array, version=version, allow_pickle=False)
    print(f"wrote {len(models) + len(raw)} ONNX seeds to {onnx_dir}, {len(npy_seeds())} .npy seeds to {npy_dir} "
          f"and {len(checkpoint_seeds())} checkpoints to {ckpt_dir}")


if __name__ == "__main__":
    main()
