#!/usr/bin/env python3
"""Builds the ONNX test models, their inputs and ONNX Runtime's outputs.

Each model is small but shaped like what people run (a residual CNN, a
MobileNet block, a BERT-like encoder exported with decomposed LayerNorm and
GELU and shape subgraphs, an OCR detector/recogniser, an MLP), written the
way real exporters write them. Weights and inputs are seeded random, never
zeros. For each model NAME the output directory gets:
  NAME.onnx, NAME.inputs/<input>.npy, NAME.expected/<output>.npy (ORT),
  NAME.shapes (the --input-shape arguments it needs, one per line).
Also the broken files the error tests use.

Usage: make_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261129)
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def w(name, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
    return numpy_helper.from_array(RNG.uniform(-s, s, shape).astype(np.float32), name)


def pos(name, *shape):  # strictly positive (variances, scales)
    return numpy_helper.from_array(RNG.uniform(0.5, 1.5, shape).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


class G:
    """A tiny graph writer: nodes get exporter-like names."""

    def __init__(self):
        self.nodes, self.inits = [], []
        self.n = 0

    def init(self, t):
        self.inits.append(t)
        return t.name

    def op(self, op, inputs, outputs=1, name=None, **attrs):
        self.n += 1
        name = name or f"/{op}_{self.n}"
        outs = [f"{name}_output_{i}" for i in range(outputs)] if isinstance(outputs, int) else outputs
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def const(self, array, name=None):
        self.n += 1
        name = name or f"/Constant_{self.n}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node("Constant", [], [out], name=name,
                                           value=numpy_helper.from_array(array)))
        return out

    def model(self, name, inputs, outputs, opset, check=True):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="ampx-tests")
        m.ir_version = 8 if opset <= 18 else 10
        if any(not o.type.tensor_type.HasField("shape") for o in m.graph.output):
            # outputs given without a shape take ONNX's inferred one; strict:
            # a node that is not valid at this opset (an attribute or input
            # of another version) is an error here, not a wrong test
            inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
            for o, i in zip(m.graph.output, inferred.graph.output):
                o.type.CopyFrom(i.type)
        if check:
            onnx.checker.check_model(m)
        return m


def conv_bn_relu(g, x, cin, cout, k, stride=1, group=1, prefix="/conv", act="Relu"):
    wname = g.init(w(f"{prefix}.weight", cout, cin // group, k, k))
    y = g.op("Conv", [x, wname], name=f"{prefix}/Conv", kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4, group=group)
    bn = [g.init(pos(f"{prefix}.bn.scale", cout)), g.init(w(f"{prefix}.bn.bias", cout, scale=0.1)),
          g.init(w(f"{prefix}.bn.mean", cout, scale=0.1)), g.init(pos(f"{prefix}.bn.var", cout))]
    y = g.op("BatchNormalization", [y] + bn, name=f"{prefix}/BatchNormalization", epsilon=1e-5)
    return g.op(act, [y], name=f"{prefix}/{act}") if act else y


def resnet():
    """Residual CNN, opset 13, symbolic batch (pinned with --input-shape)."""
    g = G()
    x = "input"
    y = conv_bn_relu(g, x, 3, 16, 3, prefix="/stem")
    y = g.op("MaxPool", [y], name="/stem/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for b in range(2):
        p = f"/layer1.{b}"
        r = conv_bn_relu(g, y, 16, 16, 3, prefix=p + "/conv1")
        r = conv_bn_relu(g, r, 16, 16, 3, prefix=p + "/conv2", act=None)
        y = g.op("Relu", [g.op("Add", [r, y], name=p + "/Add")], name=p + "/Relu")
    y = g.op("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = g.op("Flatten", [y], name="/Flatten", axis=1)
    g.op("Gemm", [y, g.init(w("fc.weight", 10, 16)), g.init(w("fc.bias", 10, scale=0.1))],
         ["logits"], name="/fc/Gemm", transB=1)
    m = g.model("resnet", [helper.make_tensor_value_info("input", F, ["batch", 3, 32, 32])],
                [helper.make_tensor_value_info("logits", F, ["batch", 10])], 13)
    return m, {"input": RNG.uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)}, ["input=2x3x32x32"]


def mobilenet():
    """MobileNetV3-like block, opset 17: HardSwish, depthwise, SE with HardSigmoid,
    ReLU6 as Clip with min/max inputs, a Shape->Gather->Unsqueeze->Concat->Reshape
    flatten, weights as Constant nodes."""
    g = G()
    y = conv_bn_relu(g, "image", 3, 16, 3, stride=2, prefix="/features.0", act="HardSwish")
    y = conv_bn_relu(g, y, 16, 16, 3, group=16, prefix="/features.1/dw", act=None)
    y = g.op("Clip", [y, g.init(f32("six.min", 0.0)), g.init(f32("six.max", 6.0))], name="/features.1/Clip")
    # squeeze-and-excitation
    s = g.op("GlobalAveragePool", [y], name="/features.1/se/GlobalAveragePool")
    s = g.op("Conv", [s, g.const(RNG.uniform(-0.5, 0.5, (8, 16, 1, 1)).astype(np.float32)),
                      g.const(RNG.uniform(-0.1, 0.1, (8,)).astype(np.float32))],
             name="/features.1/se/fc1/Conv", kernel_shape=[1, 1])
    s = g.op("Relu", [s], name="/features.1/se/Relu")
    s = g.op("Conv", [s, g.init(w("se.fc2.weight", 16, 8, 1, 1)), g.init(w("se.fc2.bias", 16, scale=0.1))],
             name="/features.1/se/fc2/Conv", kernel_shape=[1, 1])
    s = g.op("HardSigmoid", [s], name="/features.1/se/HardSigmoid", alpha=1.0 / 6, beta=0.5)
    y = g.op("Mul", [y, s], name="/features.1/se/Mul")
    y = conv_bn_relu(g, y, 16, 24, 1, prefix="/features.1/pw", act=None)
    y = g.op("AveragePool", [y], name="/avgpool/AveragePool", kernel_shape=[2, 2], strides=[2, 2])
    # torch.flatten(x, 1) as traced: Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape
    shp = g.op("Shape", [y], name="/Shape")
    n0 = g.op("Gather", [shp, g.init(i64("zero", 0))], name="/Gather", axis=0)
    n0 = g.op("Unsqueeze", [n0, g.init(i64("axes0", [0]))], name="/Unsqueeze")
    shape = g.op("Concat", [n0, g.init(i64("minus1", [-1]))], name="/Concat", axis=0)
    y = g.op("Reshape", [y, shape], name="/Reshape")
    y = g.op("Gemm", [y, g.init(w("classifier.weight", 12, 24 * 8 * 8)), g.init(w("classifier.bias", 12))],
             name="/classifier/Gemm", transB=1)
    g.op("Softmax", [y], ["probs"], name="/Softmax", axis=-1)
    m = g.model("mobilenet", [helper.make_tensor_value_info("image", F, [1, 3, 32, 32])],
                [helper.make_tensor_value_info("probs", F, [1, 12])], 17)
    return m, {"image": RNG.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)}, []


def layer_norm_decomposed(g, x, d, prefix):
    """LayerNorm as older exporters write it."""
    m = g.op("ReduceMean", [x], name=f"{prefix}/ReduceMean", axes=[-1])
    c = g.op("Sub", [x, m], name=f"{prefix}/Sub")
    p = g.op("Pow", [c, g.init(f32(f"{prefix}.two", 2.0))], name=f"{prefix}/Pow")
    v = g.op("ReduceMean", [p], name=f"{prefix}/ReduceMean_1", axes=[-1])
    v = g.op("Add", [v, g.init(f32(f"{prefix}.eps", 1e-12))], name=f"{prefix}/Add")
    s = g.op("Sqrt", [v], name=f"{prefix}/Sqrt")
    y = g.op("Div", [c, s], name=f"{prefix}/Div")
    y = g.op("Mul", [y, g.init(pos(f"{prefix}.weight", d))], name=f"{prefix}/Mul")
    return g.op("Add", [y, g.init(w(f"{prefix}.bias", d, scale=0.1))], name=f"{prefix}/Add_1")


def gelu_decomposed(g, x, prefix):
    h = g.op("Div", [x, g.init(f32(f"{prefix}.sqrt2", 1.4142135381698608))], name=f"{prefix}/Div")
    h = g.op("Erf", [h], name=f"{prefix}/Erf")
    h = g.op("Add", [h, g.init(f32(f"{prefix}.one", 1.0))], name=f"{prefix}/Add")
    h = g.op("Mul", [x, h], name=f"{prefix}/Mul")
    return g.op("Mul", [h, g.init(f32(f"{prefix}.half", 0.5))], name=f"{prefix}/Mul_1")


def encoder():
    """BERT-like encoder layer, opset 13, int64 ids and mask, shape subgraphs."""
    S, D, H, V = 16, 32, 4, 50
    g = G()
    emb = g.op("Gather", [g.init(w("embeddings.word", V, D, scale=0.5)), "input_ids"],
               name="/embeddings/word_embeddings/Gather")
    # position ids from the sequence length: Shape -> Gather(1) -> Range
    shp = g.op("Shape", ["input_ids"], name="/embeddings/Shape")
    seq = g.op("Gather", [shp, g.init(i64("one_idx", 1))], name="/embeddings/Gather", axis=0)
    ids = g.op("Range", [g.init(i64("r0", 0)), seq, g.init(i64("r1", 1))], name="/embeddings/Range")
    ids = g.op("Unsqueeze", [ids, g.init(i64("ax0", [0]))], name="/embeddings/Unsqueeze")
    pe = g.op("Gather", [g.init(w("embeddings.position", 64, D, scale=0.5)), ids],
              name="/embeddings/position_embeddings/Gather")
    x = g.op("Add", [emb, pe], name="/embeddings/Add")
    x = layer_norm_decomposed(g, x, D, "/embeddings/LayerNorm")
    x = g.op("Dropout", [x], name="/embeddings/dropout/Dropout")
    # additive attention mask: (1 - mask) * -10000 via Equal/Where
    msk = g.op("Unsqueeze", ["attention_mask", g.init(i64("ax12", [1, 2]))], name="/Unsqueeze")
    zero = g.op("Equal", [msk, g.init(i64("mask_zero", 0))], name="/Equal")
    bias = g.op("Where", [zero, g.init(f32("neg_big", -10000.0)), g.init(f32("f_zero", 0.0))], name="/Where")
    p = "/encoder/layer.0/attention/self"
    qkv = g.op("MatMul", [x, g.init(w("qkv.weight", D, 3 * D))], name=f"{p}/qkv/MatMul")
    qkv = g.op("Add", [qkv, g.init(w("qkv.bias", 3 * D, scale=0.1))], name=f"{p}/qkv/Add")
    q, k, v = g.op("Split", [qkv, g.init(i64("split3", [D, D, D]))], 3, name=f"{p}/Split", axis=2)

    def heads(t, tag):
        # new shape = shape[:2] + [H, D/H], computed as exporters do
        s = g.op("Shape", [t], name=f"{p}/{tag}/Shape")
        b = g.op("Slice", [s, g.init(i64(f"{tag}.s0", [0])), g.init(i64(f"{tag}.s1", [2]))], name=f"{p}/{tag}/Slice")
        shape = g.op("Concat", [b, g.init(i64(f"{tag}.hd", [H, D // H]))], name=f"{p}/{tag}/Concat", axis=0)
        t = g.op("Reshape", [t, shape], name=f"{p}/{tag}/Reshape")
        return g.op("Transpose", [t], name=f"{p}/{tag}/Transpose", perm=[0, 2, 1, 3])

    q, k, v = heads(q, "q"), heads(k, "k"), heads(v, "v")
    kt = g.op("Transpose", [k], name=f"{p}/Transpose_k", perm=[0, 1, 3, 2])
    sc = g.op("MatMul", [q, kt], name=f"{p}/MatMul")
    sc = g.op("Div", [sc, g.init(f32("sqrt_dh", np.sqrt(D // H)))], name=f"{p}/Div")
    sc = g.op("Add", [sc, bias], name=f"{p}/Add")
    pr = g.op("Softmax", [sc], name=f"{p}/Softmax", axis=-1)
    ctx = g.op("MatMul", [pr, v], name=f"{p}/MatMul_1")
    ctx = g.op("Transpose", [ctx], name=f"{p}/Transpose_ctx", perm=[0, 2, 1, 3])
    ctx = g.op("Reshape", [ctx, g.init(i64("ctx_shape", [0, 0, D]))], name=f"{p}/Reshape_ctx")
    o = g.op("MatMul", [ctx, g.init(w("attn.out.weight", D, D))], name="/encoder/layer.0/attention/output/dense/MatMul")
    o = g.op("Add", [o, x], name="/encoder/layer.0/attention/output/Add")
    x = layer_norm_decomposed(g, o, D, "/encoder/layer.0/attention/output/LayerNorm")
    h = g.op("MatMul", [x, g.init(w("ffn.in.weight", D, 4 * D))], name="/encoder/layer.0/intermediate/dense/MatMul")
    h = g.op("Add", [h, g.init(w("ffn.in.bias", 4 * D, scale=0.1))], name="/encoder/layer.0/intermediate/dense/Add")
    h = gelu_decomposed(g, h, "/encoder/layer.0/intermediate/intermediate_act_fn")
    h = g.op("MatMul", [h, g.init(w("ffn.out.weight", 4 * D, D))], name="/encoder/layer.0/output/dense/MatMul")
    h = g.op("Add", [h, x], name="/encoder/layer.0/output/Add")
    x = layer_norm_decomposed(g, h, D, "/encoder/layer.0/output/LayerNorm")
    x = g.op("Identity", [x], ["last_hidden_state"], name="/Identity")
    # pooler: first token -> Gemm -> Tanh; and token classes via LogSoftmax/ArgMax
    cls = g.op("Slice", [x, g.init(i64("c0", [0])), g.init(i64("c1", [1])), g.init(i64("c2", [1]))], name="/pooler/Slice")
    cls = g.op("Squeeze", [cls, g.init(i64("sq1", [1]))], name="/pooler/Squeeze")
    cls = g.op("Gemm", [cls, g.init(w("pooler.weight", D, D)), g.init(w("pooler.bias", D))], name="/pooler/dense/Gemm", transB=1)
    g.op("Tanh", [cls], ["pooler_output"], name="/pooler/Tanh")
    lg = g.op("MatMul", [x, g.init(w("tok.weight", D, 5))], name="/classifier/MatMul")
    lg = g.op("LogSoftmax", [lg], name="/classifier/LogSoftmax", axis=-1)
    g.op("ArgMax", [lg], ["token_class"], name="/classifier/ArgMax", axis=-1, keepdims=0)
    ins = [helper.make_tensor_value_info("input_ids", I64, [1, "sequence"]),
           helper.make_tensor_value_info("attention_mask", I64, [1, "sequence"])]
    outs = [helper.make_tensor_value_info("last_hidden_state", F, [1, "sequence", D]),
            helper.make_tensor_value_info("pooler_output", F, [1, D]),
            helper.make_tensor_value_info("token_class", I64, [1, "sequence"])]
    m = g.model("encoder", ins, outs, 13)
    mask = np.ones((1, S), dtype=np.int64)
    mask[0, -3:] = 0
    feeds = {"input_ids": RNG.integers(0, V, (1, S)).astype(np.int64), "attention_mask": mask}
    return m, feeds, [f"input_ids=1x{S}", f"attention_mask=1x{S}"]


def ocr():
    """DB-style text detector head and a CTC recogniser, opset 17: ConvTranspose,
    Resize, Pad, LeakyRelu, PRelu, Sigmoid, Expand, Exp/Log/Neg/Reciprocal/Sqrt,
    ReduceMax, ReduceSum, Transpose, LogSoftmax, ArgMax."""
    g = G()
    f = conv_bn_relu(g, "image", 3, 8, 3, stride=2, prefix="/backbone/conv1", act="LeakyRelu")
    f2 = conv_bn_relu(g, f, 8, 8, 3, stride=2, prefix="/backbone/conv2", act=None)
    f2 = g.op("PRelu", [f2, g.init(w("prelu.slope", 8, 1, 1, scale=0.3))], name="/backbone/PRelu")
    up = g.op("Resize", [f2, "", g.init(f32("scales", [1, 1, 2, 2]))], name="/neck/Resize", mode="nearest")
    y = g.op("Concat", [f, up], name="/neck/Concat", axis=1)
    y = g.op("Pad", [y, g.init(i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]))], name="/head/Pad", mode="reflect")
    y = g.op("Conv", [y, g.init(w("head.conv.weight", 8, 16, 3, 3))], name="/head/Conv", kernel_shape=[3, 3])
    y = g.op("ConvTranspose", [y, g.init(w("head.up.weight", 8, 4, 2, 2)), g.init(w("head.up.bias", 4))],
             name="/head/ConvTranspose", kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Conv", [y, g.init(w("head.out.weight", 1, 4, 1, 1))], name="/head/out/Conv", kernel_shape=[1, 1])
    up2 = g.op("Resize", [y, "", "", g.init(i64("sizes", [1, 1, 64, 128]))], name="/head/Resize",
               mode="linear", coordinate_transformation_mode="half_pixel")
    g.op("Sigmoid", [up2], ["prob_map"], name="/head/Sigmoid")
    # recogniser: collapse height by ReduceMax, sequence over width
    r = g.op("ReduceMax", [f2], name="/rec/ReduceMax", axes=[2], keepdims=0)  # [1, 8(c), 16(w)]
    r = g.op("Transpose", [r], name="/rec/Transpose", perm=[0, 2, 1])          # [1, 16(w), 8(c)]
    # a softplus-ish feature transform exercising the unary ops: log(1 + exp(x)) * rsqrt(2) - (-x)/4
    e = g.op("Exp", [r], name="/rec/Exp")
    e = g.op("Log", [g.op("Add", [e, g.init(f32("one_f", 1.0))], name="/rec/Add")], name="/rec/Log")
    rs = g.op("Reciprocal", [g.op("Sqrt", [g.init(f32("two_f", [2.0]))], name="/rec/Sqrt")], name="/rec/Reciprocal")
    e = g.op("Mul", [e, rs], name="/rec/Mul")
    nx = g.op("Neg", [r], name="/rec/Neg")
    e = g.op("Sub", [e, g.op("Div", [nx, g.init(f32("four", 4.0))], name="/rec/Div")], name="/rec/Sub")
    bias = g.op("Expand", [g.init(w("rec.bias", 1, 1, 8, scale=0.2)), g.init(i64("exp_shape", [1, 16, 8]))], name="/rec/Expand")
    e = g.op("Add", [e, bias], name="/rec/Add_1")
    lg = g.op("MatMul", [e, g.init(w("rec.fc.weight", 8, 11))], name="/rec/fc/MatMul")
    lg = g.op("LogSoftmax", [lg], name="/rec/LogSoftmax", axis=2)
    g.op("ArgMax", [lg], ["text_ids"], name="/rec/ArgMax", axis=2, keepdims=0)
    g.op("ReduceSum", [lg, g.init(i64("sum_axes", [2]))], ["log_mass"], name="/rec/ReduceSum", keepdims=0)
    m = g.model("ocr", [helper.make_tensor_value_info("image", F, [1, 3, 32, 64])],
                [helper.make_tensor_value_info("prob_map", F, [1, 1, 64, 128]),
                 helper.make_tensor_value_info("text_ids", I64, [1, 16]),
                 helper.make_tensor_value_info("log_mass", F, [1, 16])], 17)
    return m, {"image": RNG.uniform(-1, 1, (1, 3, 32, 64)).astype(np.float32)}, []


def mlp():
    """MLP, opset 11: Clip with inputs, legacy Softmax (axis=1 on 2-D),
    Dropout/Identity, Sigmoid, Tanh, a weight as a Constant node."""
    g = G()
    h = g.op("MatMul", ["x", g.init(w("fc1.weight", 20, 64))], name="/fc1/MatMul")
    h = g.op("Add", [h, g.init(w("fc1.bias", 64, scale=0.1))], name="/fc1/Add")
    h = g.op("Relu", [h], name="/Relu")
    h = g.op("Dropout", [h], name="/Dropout")
    h = g.op("Gemm", [h, g.const(RNG.uniform(-0.2, 0.2, (64, 32)).astype(np.float32)),
                      g.init(w("fc2.bias", 32, scale=0.1))], name="/fc2/Gemm")
    h = g.op("Tanh", [h], name="/Tanh")
    h = g.op("Clip", [h, g.init(f32("lo", -0.5)), g.init(f32("hi", 0.5))], name="/Clip")
    s = g.op("Sigmoid", [h], name="/Sigmoid")
    y = g.op("Gemm", [s, g.init(w("fc3.weight", 6, 32))], name="/fc3/Gemm", transB=1, alpha=0.5)
    g.op("Softmax", [y], ["probs"], name="/Softmax", axis=1)
    m = g.model("mlp", [helper.make_tensor_value_info("x", F, ["batch", 20])],
                [helper.make_tensor_value_info("probs", F, ["batch", 6])], 11)
    return m, {"x": RNG.uniform(-1, 1, (3, 20)).astype(np.float32)}, ["x=3x20"]


def softmax11():
    """Opset 11 Softmax with axis=1 on NCHW: softmax over C*H*W, the input
    flattened to 2-D at the axis (issue 17: was rejected)."""
    g = G()
    h = g.op("Mul", ["x", g.init(f32("two", 2.0))], name="/Mul")
    g.op("Softmax", [h], ["probs"], name="/Softmax", axis=1)
    m = g.model("softmax11", [helper.make_tensor_value_info("x", F, [1, 3, 4, 4])],
                [helper.make_tensor_value_info("probs", F, [1, 3, 4, 4])], 11)
    return m, {"x": RNG.uniform(-1, 1, (1, 3, 4, 4)).astype(np.float32)}, []


def logsoftmax12():
    """Opset 12 LogSoftmax with axis=1 on a rank-3 input (issue 17)."""
    g = G()
    h = g.op("Add", ["x", g.init(w("bias", 3, 5))], name="/Add")
    g.op("LogSoftmax", [h], ["logp"], name="/LogSoftmax", axis=1)
    m = g.model("logsoftmax12", [helper.make_tensor_value_info("x", F, [2, 3, 5])],
                [helper.make_tensor_value_info("logp", F, [2, 3, 5])], 12)
    return m, {"x": RNG.uniform(-2, 2, (2, 3, 5)).astype(np.float32)}, []


# --- one model per opset era: the forms of each op that changed between
# opsets 7 and 26 (docs/ONNX.md, "Opsets"), as the exporters of that era
# write them. Shapes are tiny; values seeded random and non-zero.

def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def out(name):
    return helper.make_tensor_value_info(name, F, None)


def opset7():
    """Opset 7 (old torch and paddle exports): Conv + BatchNormalization with
    spatial=1, Clip's min/max and Pad's pads/value as attributes (edge and
    constant), Upsample-7 with a scales attribute, Slice with
    starts/ends/axes attributes, Split's split, ReduceSum/ReduceMean/Squeeze/
    Unsqueeze axes as attributes, Dropout with a ratio attribute, Gemm with
    its (then required) C, numpy-broadcast Add and Softmax coercing the rank-4
    input to 2-D at axis 1 (one softmax over C*H*W, not over C)."""
    g = G()
    y = g.op("Conv", ["x", g.init(w("conv.w", 3, 2, 3, 3)), g.init(w("conv.b", 3, scale=0.2))],
             name="/conv/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    y = g.op("BatchNormalization", [y, g.init(pos("bn.s", 3)), g.init(w("bn.b", 3, scale=0.2)),
                                    g.init(w("bn.m", 3, scale=0.2)), g.init(pos("bn.v", 3))],
             name="/bn/BatchNormalization", epsilon=1e-5, spatial=1)
    y = g.op("Clip", [y], name="/Clip", min=-0.4, max=0.6)
    y = g.op("Pad", [y], name="/Pad", pads=[0, 0, 1, 0, 0, 0, 0, 2], mode="edge")       # [1,3,5,7]
    y = g.op("Pad", [y], name="/Pad_1", pads=[0, 0, 0, 1, 0, 0, 1, 0], value=0.25)     # [1,3,6,8]
    u = g.op("Upsample", [y], name="/Upsample", scales=[1.0, 1.0, 2.0, 2.0], mode="nearest")
    u = g.op("Slice", [u], name="/Slice", starts=[1, 2], ends=[11, 100], axes=[2, 3])  # [1,3,10,14]
    g.op("Softmax", [u], ["probs"], name="/Softmax", axis=1)
    a, b = g.op("Split", [u], 2, name="/Split", axis=2, split=[4, 6])
    r = g.op("ReduceSum", [a], name="/ReduceSum", axes=[2], keepdims=0)                # [1,3,14]
    r = g.op("Dropout", [r], name="/Dropout", ratio=0.3)
    r = g.op("Add", [r, g.init(w("bias", 14, scale=0.5))], name="/Add")
    f = g.op("Flatten", [r], name="/Flatten", axis=1)                                  # [1,42]
    g.op("Gemm", [f, g.init(w("fc.w", 5, 42)), g.init(w("fc.b", 5, scale=0.2))], ["logits"],
         name="/fc/Gemm", transB=1)
    m = g.op("ReduceMean", [b], name="/ReduceMean", axes=[2, 3], keepdims=1)          # [1,3,1,1]
    m = g.op("Squeeze", [m], name="/Squeeze", axes=[2, 3])
    g.op("Unsqueeze", [m], ["stats"], name="/Unsqueeze", axes=[0])                      # [1,1,3]
    model = g.model("opset7", [vi("x", [1, 2, 4, 5])], [out("probs"), out("logits"), out("stats")], 7)
    return model, {"x": RNG.uniform(-1, 1, (1, 2, 4, 5)).astype(np.float32)}, []


def opset9():
    """Opset 9 (paddle2onnx's default): BatchNormalization without spatial,
    Upsample-9 with a scales input (linear), Erf, ConstantOfShape, Slice with
    attributes and no axes, LogSoftmax's default axis 1 and Softmax at axis 2
    of a rank-4 input (both coerced to 2-D), MatMul, Dropout."""
    g = G()
    y = g.op("BatchNormalization", ["x", g.init(pos("bn.s", 2)), g.init(w("bn.b", 2, scale=0.2)),
                                    g.init(w("bn.m", 2, scale=0.2)), g.init(pos("bn.v", 2))],
             name="/bn/BatchNormalization", epsilon=1e-3, momentum=0.9)
    half = g.op("ConstantOfShape", [g.init(i64("one_shape", [1]))], name="/ConstantOfShape",
                value=numpy_helper.from_array(np.array([0.5], np.float32)))
    y = g.op("Mul", [y, half], name="/Mul")
    u = g.op("Upsample", [y, g.init(f32("scales", [1, 1, 2, 2]))], name="/Upsample",
             mode="linear")                                                            # [1,2,6,8]
    e = g.op("Erf", [u], name="/Erf")
    e = g.op("Dropout", [e], name="/Dropout", ratio=0.1)
    g.op("Softmax", [e], ["probs"], name="/Softmax", axis=2)
    g.op("LogSoftmax", [u], ["logp"], name="/LogSoftmax")
    s = g.op("Slice", [u], name="/Slice", starts=[0, 1, 1, 2], ends=[1, 2, 5, 8])     # [1,1,4,6]
    g.op("MatMul", [s, g.init(w("mm.w", 6, 3))], ["proj"], name="/MatMul")
    model = g.model("opset9", [vi("x", [1, 2, 3, 4])], [out("probs"), out("logp"), out("proj")], 9)
    return model, {"x": RNG.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)}, []


def opset10():
    """Opset 10: Resize-10 (X and scales; asymmetric; nearest takes ceil when
    shrinking, floor when growing) nearest 5 -> 3 and linear x2, Slice-10
    with inputs and steps, Pad and Clip still with attributes, MaxPool's
    ceil_mode."""
    g = G()
    g.op("Resize", ["x", g.init(f32("down_scales", [1, 1, 0.6, 0.6]))], ["down"], name="/Resize",
         mode="nearest")                                                               # [1,2,3,3]
    up = g.op("Resize", ["x", g.init(f32("up_scales", [1, 1, 2, 2]))], name="/Resize_1", mode="linear")
    up = g.op("Slice", [up, g.init(i64("st", [0, 1])), g.init(i64("en", [10, 10])),
                        g.init(i64("ax", [2, 3])), g.init(i64("sp", [2, 3]))], name="/Slice")
    g.op("Clip", [up], ["up"], name="/Clip", min=-0.5)                                 # [1,2,5,3]
    p = g.op("Pad", ["x"], name="/Pad", pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect")  # [1,2,8,8]
    g.op("MaxPool", [p], ["pooled"], name="/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
         ceil_mode=1)
    model = g.model("opset10", [vi("x", [1, 2, 5, 5])], [out("down"), out("up"), out("pooled")], 10)
    return model, {"x": RNG.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)}, []


def opset11():
    """Opset 11: Resize-11 with roi and scales inputs (linear, align_corners)
    and with an empty scales and sizes (nearest, asymmetric,
    round_prefer_ceil), Pad's pads and constant_value inputs, Clip's inputs,
    Gemm without C, Split/Squeeze/Unsqueeze/ReduceSum axes still attributes."""
    g = G()
    roi = g.init(f32("roi", np.zeros(0, np.float32)))
    r = g.op("Resize", ["x", roi, g.init(f32("scales", [1, 1, 2, 2]))], name="/Resize",
             mode="linear", coordinate_transformation_mode="align_corners")            # [1,2,6,8]
    r = g.op("Pad", [r, g.init(i64("pads", [0, 0, 1, 1, 0, 0, 0, 1])), g.init(f32("pv", -0.75))],
             name="/Pad")                                                              # [1,2,7,10]
    g.op("Clip", [r, g.init(f32("lo", -0.6)), g.init(f32("hi", 0.7))], ["resized"], name="/Clip")
    g.op("Resize", ["x", roi, g.init(f32("no_scales", np.zeros(0, np.float32))),
                    g.init(i64("sizes", [1, 2, 5, 7]))], ["nearest"], name="/Resize_1",
         mode="nearest", coordinate_transformation_mode="asymmetric",
         nearest_mode="round_prefer_ceil")
    a, b = g.op("Split", ["x"], 2, name="/Split", axis=-1, split=[1, 3])               # [1,2,3,1], [1,2,3,3]
    a = g.op("Squeeze", [a], name="/Squeeze", axes=[-1])                               # [1,2,3]
    s = g.op("ReduceSum", [b], name="/ReduceSum", axes=[-1], keepdims=0)               # [1,2,3]
    h = g.op("Mul", [a, s], name="/Mul")
    h = g.op("Flatten", [h], name="/Flatten")                                          # [1,6]
    h = g.op("Gemm", [h, g.init(w("fc.w", 6, 4))], name="/fc/Gemm")
    g.op("Unsqueeze", [h], ["gemm"], name="/Unsqueeze", axes=[1, -1])                  # [1,1,4,1]
    model = g.model("opset11", [vi("x", [1, 2, 3, 4])],
                    [out("resized"), out("nearest"), out("gemm")], 11)
    return model, {"x": RNG.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)}, []


def opset12():
    """Opset 12: Dropout-12 with ratio and training_mode (false) inputs,
    Pow-12 with an int64 exponent, ArgMax's select_last_index, ReduceMax axes as an attribute, legacy
    LogSoftmax at the last axis."""
    g = G()
    d = g.op("Dropout", ["x", g.init(f32("ratio", 0.5)),
                         g.init(numpy_helper.from_array(np.array(False), "train"))],
             name="/Dropout")
    # Pow-12's int64 exponent (a constant: onednn's eltwise_pow, or at
    # capability-blind O2 on AVX2 its reference loop)
    two = g.init(numpy_helper.from_array(np.array(2, dtype=np.int64), "two"))
    p = g.op("Mul", [g.op("Pow", [d, two], name="/Pow"), g.op("Exp", [d], name="/Exp")],
             name="/Mul")
    p = g.op("Add", [p, g.init(w("bias", 5, scale=0.5))], name="/Add")
    m = g.op("ReduceMax", [p], name="/ReduceMax", axes=[1], keepdims=1)                # [2,1,5]
    g.op("LogSoftmax", [m], ["logp"], name="/LogSoftmax", axis=-1)
    g.op("ArgMax", [d], ["arg"], name="/ArgMax", axis=2, keepdims=0, select_last_index=1)
    model = g.model("opset12", [vi("x", [2, 3, 5])],
                    [out("logp"), helper.make_tensor_value_info("arg", I64, None)], 12)
    return model, {"x": RNG.uniform(-1, 1, (2, 3, 5)).astype(np.float32)}, []


def opset22_graph(g):
    """The graph of opset22()/opset26(): forms of opsets 13 to 22."""
    y = g.op("BatchNormalization", ["x", g.init(pos("bn.s", 2)), g.init(w("bn.b", 2, scale=0.2)),
                                    g.init(w("bn.m", 2, scale=0.2)), g.init(pos("bn.v", 2))],
             name="/bn/BatchNormalization", training_mode=0)
    y = g.op("Dropout", [y], name="/Dropout")
    r = g.op("Resize", [y, "", g.init(f32("scales", [2, 2]))], name="/Resize", mode="linear",
             axes=[2, 3], coordinate_transformation_mode="pytorch_half_pixel")         # [1,2,8,10]
    r = g.op("Pad", [r, g.init(i64("pads", [1, 2])), g.init(f32("pv", 0.5)), g.init(i64("pax", [3]))],
             name="/Pad")                                                              # [1,2,8,13]
    g.op("Softmax", [r], ["probs"], name="/Softmax", axis=1)   # one axis from opset 13 on
    a, b, c = g.op("Split", [y], 3, name="/Split", axis=3, num_outputs=3)             # 2, 2, 1 of 5
    m = g.op("ReduceMean", [a, g.init(i64("rax", [2]))], name="/ReduceMean")          # [1,2,1,2]
    s = g.op("ReduceSum", [b, g.init(i64("noax", np.zeros(0, np.int64)))], name="/ReduceSum",
             noop_with_empty_axes=1)                                                   # [1,2,4,2]
    s = g.op("Squeeze", [s, g.init(i64("sq", [0]))], name="/Squeeze")                 # [2,4,2]
    s = g.op("Reshape", [s, g.init(i64("shape", [2, 8]))], name="/Reshape")
    s = g.op("LayerNormalization", [s, g.init(pos("ln.s", 8)), g.init(w("ln.b", 8, scale=0.2))],
             name="/LayerNormalization", axis=-1, epsilon=1e-5)
    s = g.op("Gelu", [s], name="/Gelu")
    g.op("HardSwish", [s], ["feat"], name="/HardSwish")
    c = g.op("Cast", [c], name="/Cast", to=TensorProto.DOUBLE)
    c = g.op("Cast", [c], name="/Cast_1", to=F)
    g.op("Add", [c, m], ["mixed"], name="/Add")                                        # [1,2,4,1]+[1,2,1,2]


def opset22():
    """Opsets 13 to 22 as exporters write them:
    BatchNormalization with training_mode=0, Resize-19 with an axes attribute,
    Pad-21 with an axes input, single-axis Softmax, Split's num_outputs,
    ReduceMean's axes input, ReduceSum's noop_with_empty_axes, Squeeze's axes
    input, LayerNormalization, Gelu, HardSwish, Cast-21, Dropout-22."""
    g = G()
    opset22_graph(g)
    model = g.model("opset22", [vi("x", [1, 2, 4, 5])],
                    [out("probs"), out("feat"), out("mixed")], 22)
    return model, {"x": RNG.uniform(-1, 1, (1, 2, 4, 5)).astype(np.float32)}, []


def mathops():
    """The later ONNX ops (docs/OPS.md) in one small model, opset 18: Floor,
    Ceil, Round, Abs, Softplus, Mish, the comparisons, Not/And/Or, variadic
    Min/Max/Sum/Mean with broadcasting, ReduceMin/Prod/L2/SumSquare/LogSumExp
    with the axes input (18+), ArgMin. Bool outputs go out as int64 (exact)."""
    g = G()
    x, y = "x", "y"                                                                  # [2,3,4], [3,1]
    t = g.op("Sum", [g.op("Floor", [x], name="/Floor"), g.op("Ceil", [y], name="/Ceil"),
                     g.op("Round", [g.op("Mul", [x, g.init(f32("k", 2.5))], name="/Mul")],
                          name="/Round")], name="/Sum")
    m = g.op("Mean", [g.op("Softplus", [x], name="/Softplus"), g.op("Mish", [y], name="/Mish")],
             name="/Mean")
    mn = g.op("Min", [x, y, g.init(w("lo", 4, scale=0.5))], name="/Min")
    mx = g.op("Max", [g.op("Abs", [x], name="/Abs"), y], name="/Max")
    g.op("Add", [g.op("Add", [t, m], name="/Add"), g.op("Sub", [mx, mn], name="/Sub")], ["mixed"],
         name="/Add_1")
    lt = g.op("Less", [x, y], name="/Less")
    ge = g.op("GreaterOrEqual", [x, g.init(f32("z", 0.0))], name="/GreaterOrEqual")
    le = g.op("LessOrEqual", [y, g.init(f32("h", 0.25))], name="/LessOrEqual")
    gt = g.op("Greater", [x, g.init(f32("mh", -0.5))], name="/Greater")
    b = g.op("Or", [g.op("And", [lt, g.op("Not", [ge], name="/Not")], name="/And"),
                    g.op("And", [le, gt], name="/And_1")], name="/Or")
    g.op("Cast", [b], ["mask"], name="/Cast", to=I64)
    ax = lambda name, v: g.init(i64(name, v))
    r = g.op("Add", [g.op("ReduceMin", [x, ax("a0", [1])], name="/ReduceMin", keepdims=0),
                     g.op("ReduceL2", [x, ax("a1", [1])], name="/ReduceL2", keepdims=0)],
             name="/Add_2")                                                             # [2,4]
    r = g.op("Add", [r, g.op("ReduceSumSquare", [x, ax("a2", [1])], name="/ReduceSumSquare",
                              keepdims=0)], name="/Add_3")
    r = g.op("Add", [r, g.op("ReduceLogSumExp", [x, ax("a3", [-2])], name="/ReduceLogSumExp",
                              keepdims=0)], name="/Add_4")
    g.op("Add", [r, g.op("ReduceProd", [x, ax("a4", [1])], name="/ReduceProd", keepdims=0)],
         ["reduced"], name="/Add_5")
    g.op("ArgMin", [x], ["argmin"], name="/ArgMin", axis=2, keepdims=0, select_last_index=1)
    model = g.model("mathops", [vi("x", [2, 3, 4]), vi("y", [3, 1])],
                    [out("mixed"), helper.make_tensor_value_info("mask", I64, None), out("reduced"),
                     helper.make_tensor_value_info("argmin", I64, None)], 18)
    # Values away from the rounding ties of Floor/Ceil/Round and from the
    # comparison thresholds: never zero, seeded.
    return model, {"x": RNG.uniform(-2, 2, (2, 3, 4)).astype(np.float32),
                   "y": RNG.uniform(-1, 1, (3, 1)).astype(np.float32)}, []


def ifconst():
    """If as exporters write shape checks (opset 16): the condition is
    Shape(x)[1] == 8, which folds once x's shape is known; the then branch
    reads outer values (x and a weight of the main graph) and has an
    initializer of its own, the else branch would fail shape inference if
    it were taken. ampx takes the then branch at import."""
    g = G()
    d1 = g.op("Gather", [g.op("Shape", ["x"], name="/Shape"), g.init(i64("one", 1))],
              name="/Gather")
    c = g.op("Equal", [d1, g.init(i64("eight", 8))], name="/Equal")
    wt = g.init(w("fc.weight", 8, 4))
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["x", wt], ["then_mm"], name="/If/then/MatMul"),
         helper.make_node("Add", ["then_mm", "then_bias"], ["then_out"], name="/If/then/Add")],
        "then", [], [helper.make_tensor_value_info("then_out", F, None)],
        [w("then_bias", 4)])
    else_g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "else_shape"], ["else_out"], name="/If/else/Reshape")],
        "else", [], [helper.make_tensor_value_info("else_out", F, None)],
        [i64("else_shape", [-1, 4])])
    r = g.op("If", [c], name="/If", then_branch=then_g, else_branch=else_g)
    g.op("Relu", [r], ["y"], name="/Relu")
    model = g.model("ifconst", [vi("x", ["batch", 8])], [vi("y", ["batch", 4])], 16)
    return model, {"x": RNG.uniform(-1, 1, (3, 8)).astype(np.float32)}, ["x=3x8"]


def decomposed(opset):
    """The ops imported as op-set ops (onnx_decomposed_ops.cpp):
    InstanceNormalization, GroupNormalization (scale and bias per group in
    opset 18, per channel from 21), DepthToSpace in both modes,
    SpaceToDepth and Tile."""
    def make():
        g = G()
        x = "x"                                                                      # [2,8,4,6]
        inst = g.op("InstanceNormalization", [x, g.init(pos("in.scale", 8)),
                                              g.init(w("in.bias", 8))], name="/InstanceNorm",
                    epsilon=1e-5)
        groups = 4 if opset < 21 else 8
        gn = g.op("GroupNormalization", [inst, g.init(pos("gn.scale", groups)),
                                         g.init(w("gn.bias", groups))], name="/GroupNorm",
                  num_groups=4, epsilon=1e-4)
        d = g.op("DepthToSpace", [gn], name="/DepthToSpace", blocksize=2)            # [2,2,8,12]
        g.op("SpaceToDepth", [d], ["s2d"], name="/SpaceToDepth", blocksize=2)        # [2,8,4,6]
        g.op("DepthToSpace", [x], ["crd"], name="/DepthToSpace_1", blocksize=2, mode="CRD")
        g.op("Tile", ["t", g.init(i64("reps", [2, 1, 3]))], ["tiled"], name="/Tile")
        model = g.model(f"decomposed{opset}", [vi("x", [2, 8, 4, 6]), vi("t", [2, 3, 2])],
                        [vi("s2d", [2, 8, 4, 6]), vi("crd", [2, 2, 8, 12]), vi("tiled", [4, 3, 6])],
                        opset, check=opset >= 21)  # onnx 1.19's checker refuses
        # GroupNormalization-18 as deprecated; ONNX Runtime still runs it
        return model, {"x": RNG.uniform(-2, 2, (2, 8, 4, 6)).astype(np.float32),
                       "t": RNG.uniform(-1, 1, (2, 3, 2)).astype(np.float32)}, []
    return make


def ifruntime():
    """If whose condition is data (opset 16): ReduceSum(x) > 0, known only
    at run time. ampx runs both branches and selects with Where; the inputs
    make the condition true, and `y2` takes the else branch of a second If
    on the negated condition, so both selections are compared."""
    g = G()
    s = g.op("ReduceSum", ["x"], name="/ReduceSum", keepdims=0)
    c = g.op("Greater", [s, g.init(f32("zero", 0.0))], name="/Greater")
    nc = g.op("Not", [c], name="/Not")
    wt = g.init(w("fc.weight", 8, 4))

    def branches(tag):
        then_g = helper.make_graph(
            [helper.make_node("MatMul", ["x", wt], [f"{tag}_then_out"], name=f"/{tag}/then/MatMul")],
            "then", [], [helper.make_tensor_value_info(f"{tag}_then_out", F, None)])
        else_g = helper.make_graph(
            [helper.make_node("MatMul", ["x", f"{tag}_w2"], [f"{tag}_mm"], name=f"/{tag}/else/MatMul"),
             helper.make_node("Relu", [f"{tag}_mm"], [f"{tag}_else_out"], name=f"/{tag}/else/Relu")],
            "else", [], [helper.make_tensor_value_info(f"{tag}_else_out", F, None)],
            [w(f"{tag}_w2", 8, 4)])
        return then_g, else_g

    t1, e1 = branches("a")
    g.op("If", [c], ["y1"], name="/If", then_branch=t1, else_branch=e1)
    t2, e2 = branches("b")
    g.op("If", [nc], ["y2"], name="/If_1", then_branch=t2, else_branch=e2)
    model = g.model("ifruntime", [vi("x", [3, 8])], [vi("y1", [3, 4]), vi("y2", [3, 4])], 16)
    return model, {"x": RNG.uniform(0.1, 1, (3, 8)).astype(np.float32)}, []


def recurrent():
    """LSTM, GRU and RNN as exporters write them, opset 14: a bidirectional
    LSTM with sequence lengths, initial states, peepholes and clip; an LSTM
    with input_forget and only Y_h used (layout 1: recurrent_layout1); a reverse GRU with
    linear_before_reset and a forward one without (its reset gate before
    the recurrent product); an RNN with a parameterised activation
    (LeakyRelu's alpha) and no bias. Sequence lengths include 0 and T."""
    g = G()
    T, N, I, H = 5, 3, 4, 6
    x = "x"                                                                          # [T,N,I]
    lens = g.init(numpy_helper.from_array(np.array([5, 2, 0], dtype=np.int32), "lens"))
    y, yh, yc = g.op("LSTM", [x, g.init(w("lw", 2, 4 * H, I)), g.init(w("lr", 2, 4 * H, H)),
                              g.init(w("lb", 2, 8 * H)), lens, g.init(w("lh0", 2, N, H)),
                              g.init(w("lc0", 2, N, H)), g.init(w("lp", 2, 3 * H))],
                     ["lstm_y", "lstm_yh", "lstm_yc"], name="/LSTM", hidden_size=H,
                     direction="bidirectional", clip=2.5)
    g.op("LSTM", [x, g.init(w("tw", 1, 4 * H, I)), g.init(w("tr", 1, 4 * H, H)),
                  g.init(w("tb", 1, 8 * H))], ["", "lstm1_yh"], name="/LSTM_1",
         hidden_size=H, input_forget=1)
    g.op("GRU", [x, g.init(w("gw", 1, 3 * H, I)), g.init(w("gr", 1, 3 * H, H)),
                 g.init(w("gb", 1, 6 * H)), lens], ["gru_y", "gru_yh"], name="/GRU",
         hidden_size=H, direction="reverse", linear_before_reset=1)
    g.op("GRU", [x, g.init(w("hw", 1, 3 * H, I)), g.init(w("hr", 1, 3 * H, H)),
                 g.init(w("hb", 1, 6 * H)), "", g.init(w("hh0", 1, N, H))],
         ["gru1_y"], name="/GRU_1", hidden_size=H)
    g.op("RNN", [x, g.init(w("rw", 1, H, I)), g.init(w("rr", 1, H, H))], ["rnn_y", "rnn_yh"],
         name="/RNN", hidden_size=H, activations=["LeakyRelu"], activation_alpha=[0.2])
    names = ["lstm_y", "lstm_yh", "lstm_yc", "lstm1_yh", "gru_y", "gru_yh", "gru1_y", "rnn_y",
             "rnn_yh"]
    model = g.model("recurrent", [vi("x", [T, N, I])], [out(n) for n in names], 14)
    return model, {"x": RNG.uniform(-2, 2, (T, N, I)).astype(np.float32)}, []


def indexops():
    """The indexing, sorting and loss ops (docs/ONNX.md), opset 18: Mod
    (integer and fmod), CumSum (exclusive, reverse), TopK (values and
    indices), GatherElements, GatherND with batch_dims, ScatterND with add,
    Einsum (batched matmul, attention scores, a transposition, an implicit
    dot product, an ellipsis), SoftmaxCrossEntropyLoss (weights, ignore_index,
    both outputs), NegativeLogLikelihoodLoss (reduction none) and NonZero of
    a constant. The fmod input holds small integers, exact in f16, so O2
    compares remainders, not the rounding of a dividend near a multiple."""
    g = G()
    x = "x"                                                                          # [2,3,4]
    g.op("Mod", ["xi", g.init(i64("m", [3, -4, 5, 7]))], ["mod_i"], name="/Mod", fmod=0)
    g.op("Mod", ["xf", g.init(f32("mf", [3.0, -4.0, 5.0, 2.5]))], ["mod_f"], name="/Mod_1", fmod=1)
    cs = g.op("CumSum", [x, g.init(i64("ax", 1))], name="/CumSum", exclusive=1, reverse=1)
    g.op("CumSum", [cs, g.init(i64("ax2", -1))], ["cumsum"], name="/CumSum_1")
    g.op("TopK", [x, g.init(i64("k", [2]))], ["topk_v", "topk_i"], name="/TopK", axis=-1)
    ge_idx = g.init(i64("ge_idx", RNG.integers(-3, 3, (2, 3, 2))))
    g.op("GatherElements", [x, ge_idx], ["gather_el"], name="/GatherElements", axis=1)
    gnd_idx = g.init(i64("gnd_idx", [[[0, 1], [2, 3]], [[1, -1], [0, 0]]]))
    g.op("GatherND", [x, gnd_idx], ["gather_nd"], name="/GatherND", batch_dims=1)
    snd_idx = g.init(i64("snd_idx", [[1, 2], [0, 0], [1, 2]]))
    g.op("ScatterND", [x, snd_idx, g.init(w("snd_upd", 3, 4))], ["scatter_nd"], name="/ScatterND",
         reduction="add")
    wq = g.init(w("wq", 4, 5))
    g.op("Einsum", [x, wq], ["ein_mm"], name="/Einsum", equation="bij,jk->bik")
    q = g.op("Reshape", [x, g.init(i64("qs", [2, 1, 3, 4]))], name="/Reshape")
    g.op("Einsum", [q, q], ["ein_att"], name="/Einsum_1", equation="bhqd,bhkd->bhqk")
    g.op("Einsum", [x], ["ein_t"], name="/Einsum_2", equation="bij->jib")
    g.op("Einsum", [x], ["ein_r"], name="/Einsum_5", equation="bij->bj")
    g.op("Einsum", ["v", "v"], ["ein_dot"], name="/Einsum_3", equation="i,i")
    g.op("Einsum", [x, g.init(w("we", 4, 2))], ["ein_ell"], name="/Einsum_4",
         equation="...j,jk->...k")
    scores = g.op("Reshape", [x, g.init(i64("ss", [2, 3, 4]))], name="/Reshape_1")   # [N=2, C=3, 4]
    labels = g.init(i64("labels", [[0, 2, 1, -1], [2, 2, 0, 1]]))
    g.op("SoftmaxCrossEntropyLoss", [scores, labels, g.init(pos("cw", 3))],
         ["sce", "sce_logp"], name="/SoftmaxCrossEntropyLoss", ignore_index=-1)
    lp = g.op("LogSoftmax", [x], name="/LogSoftmax", axis=1)
    g.op("NegativeLogLikelihoodLoss", [lp, g.init(i64("nll_t", [[0, 1, 2, 1], [2, 0, 0, 1]]))],
         ["nll"], name="/NegativeLogLikelihoodLoss", reduction="none")
    nz = g.op("NonZero", [g.init(f32("mask", [[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]]))],
              name="/NonZero")
    nzf = g.op("Cast", [nz], name="/Cast", to=F)
    g.op("Add", [x, g.op("ReduceSum", [nzf], name="/ReduceSum", keepdims=0)], ["nonzero_sum"],
         name="/Add")
    ints = ["mod_i", "topk_i"]
    outs = [helper.make_tensor_value_info(n, I64, None) if n in ints else out(n)
            for n in ["mod_i", "mod_f", "cumsum", "topk_v", "topk_i", "gather_el", "gather_nd",
                      "scatter_nd", "ein_mm", "ein_att", "ein_t", "ein_r", "ein_dot", "ein_ell", "sce",
                      "sce_logp", "nll", "nonzero_sum"]]
    model = g.model("indexops", [vi("x", [2, 3, 4]), helper.make_tensor_value_info("xi", I64, [2, 4]),
                                 vi("xf", [2, 4]), vi("v", [6])], outs, 18)
    return model, {"x": RNG.uniform(-2, 2, (2, 3, 4)).astype(np.float32),
                   "xi": RNG.integers(-20, 20, (2, 4)).astype(np.int64),
                   "xf": RNG.integers(-20, 20, (2, 4)).astype(np.float32),
                   "v": RNG.uniform(-1, 1, 6).astype(np.float32)}, []


def loops():
    """Loop and Scan as exporters write them (opset 16), unrolled at import:
    a `for` Loop whose trip count is Shape(x)[0] and whose condition is a
    constant true passed through the body (an RNN cell reading the outer x
    at the iteration number, with a scan output); a `while` Loop without a
    trip count whose condition folds from the iteration number (3 steps);
    a Scan over a sequence forwards and another input backwards, with a
    state and a reversed scan output stacked on axis 1."""
    g = G()
    T, N, H = 4, 2, 3
    wh = g.init(w("cell.w", H, H))
    m = g.op("Gather", [g.op("Shape", ["x"], name="/Shape"), g.init(i64("zero", 0))],
             name="/Gather")
    true = g.init(numpy_helper.from_array(np.array(True), "true"))
    b = G()
    xi = b.op("Gather", ["x", "i"], name="/body/Gather", axis=0)
    hn = b.op("Tanh", [b.op("Add", [b.op("MatMul", ["h", wh], name="/body/MatMul"), xi],
                            name="/body/Add")], ["h_out"], name="/body/Tanh")
    b.op("Identity", ["c"], ["c_out"], name="/body/Identity")
    b.op("Identity", ["h_out"], ["h_scan"], name="/body/Identity_1")
    body = helper.make_graph(
        b.nodes, "rnn_body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         vi("h", [N, H])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), vi("h_out", [N, H]),
         vi("h_scan", [N, H])])
    g.op("Loop", [m, true, "h0"], ["h_last", "h_all"], name="/Loop", body=body)
    # while: no trip count, cond_out = (i + 1) < 3, a carried accumulator
    w_b = G()
    nxt = w_b.op("Add", ["j", w_b.init(i64("one", 1))], name="/while/Add")
    w_b.op("Less", [nxt, w_b.init(i64("three", 3))], ["k_out"], name="/while/Less")
    w_b.op("Mul", ["acc", w_b.init(f32("half", 0.5))], ["acc_out"], name="/while/Mul")
    wbody = helper.make_graph(
        w_b.nodes, "while_body",
        [helper.make_tensor_value_info("j", I64, []), helper.make_tensor_value_info("k", TensorProto.BOOL, []),
         vi("acc", [N, H])],
        [helper.make_tensor_value_info("k_out", TensorProto.BOOL, []), vi("acc_out", [N, H])],
        w_b.inits)
    g.op("Loop", ["", true, "h0"], ["acc_last"], name="/Loop_1", body=wbody)
    # Scan: state s [N, H]; inputs x forwards and y backwards, both [T, N, H]
    s_b = G()
    s_new = s_b.op("Add", ["s", s_b.op("Mul", ["xt", "yt"], name="/scan/Mul")], ["s_out"],
                   name="/scan/Add")
    s_b.op("Sigmoid", [s_new], ["z_out"], name="/scan/Sigmoid")
    sbody = helper.make_graph(
        s_b.nodes, "scan_body", [vi("s", [N, H]), vi("xt", [N, H]), vi("yt", [N, H])],
        [vi("s_out", [N, H]), vi("z_out", [N, H])])
    g.op("Scan", ["h0", "x", "y"], ["s_last", "z_all"], name="/Scan", body=sbody,
         num_scan_inputs=2, scan_input_directions=[0, 1], scan_output_axes=[1],
         scan_output_directions=[1])
    model = g.model("loops", [vi("x", [T, N, H]), vi("y", [T, N, H]), vi("h0", [N, H])],
                    [vi("h_last", [N, H]), vi("h_all", [T, N, H]), vi("acc_last", [N, H]),
                     vi("s_last", [N, H]), vi("z_all", [N, T, H])], 16)
    return model, {"x": RNG.uniform(-1, 1, (T, N, H)).astype(np.float32),
                   "y": RNG.uniform(-1, 1, (T, N, H)).astype(np.float32),
                   "h0": RNG.uniform(-1, 1, (N, H)).astype(np.float32)}, []


def valueinputs():
    """Shapes, axes, scales and k computed at run time from graph inputs
    (opset 18): Resize's scales and a Reshape's shape come from inputs,
    TopK's k is an input plus one, ReduceSum's axes an input. ampx builds
    the graph for the values `--input` gives (Graph::specialised_on)."""
    g = G()
    g.op("Resize", ["x", "", "scales"], ["resized"], name="/Resize", mode="nearest")
    k = g.op("Add", ["k", g.init(i64("one", [1]))], name="/Add")
    g.op("TopK", [g.op("Flatten", ["x"], name="/Flatten"), k], ["top_v", "top_i"], name="/TopK")
    g.op("ReduceSum", ["x", "axes"], ["summed"], name="/ReduceSum", keepdims=0)
    g.op("Reshape", ["x", "shape"], ["reshaped"], name="/Reshape")
    model = g.model("valueinputs", [vi("x", [1, 2, 4, 4]), vi("scales", [4]),
                                    helper.make_tensor_value_info("k", I64, [1]),
                                    helper.make_tensor_value_info("axes", I64, [2]),
                                    helper.make_tensor_value_info("shape", I64, [3])],
                    [out("resized"), out("top_v"), helper.make_tensor_value_info("top_i", I64, None),
                     out("summed"), out("reshaped")], 18, check=False)
    return model, {"x": RNG.uniform(-2, 2, (1, 2, 4, 4)).astype(np.float32),
                   "scales": np.array([1, 1, 2, 1.5], dtype=np.float32),
                   "k": np.array([2], dtype=np.int64),
                   "axes": np.array([1, -1], dtype=np.int64),
                   "shape": np.array([2, -1, 4], dtype=np.int64)}, []


MODELS = {"resnet": resnet, "mobilenet": mobilenet, "encoder": encoder, "ocr": ocr, "mlp": mlp,
          "softmax11": softmax11, "logsoftmax12": logsoftmax12, "opset7": opset7,
          "opset9": opset9, "opset10": opset10, "opset11": opset11, "opset12": opset12,
          "opset22": opset22, "mathops": mathops, "recurrent": recurrent,
          "ifconst": ifconst, "ifruntime": ifruntime, "decomposed18": decomposed(18), "decomposed21": decomposed(21),
          "indexops": indexops, "loops": loops, "valueinputs": valueinputs}


def opset26(out_dir):
    """opset22's graph stamped opset 26 (none of its ops changed in 23 to
    26 beyond wider type lists), compared with ONNX Runtime (1.32 loads
    opset 26) running the opset 26 model itself."""
    model, feeds, shapes = opset22()
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 26))
    model.ir_version = 10
    path = os.path.join(out_dir, "opset26.onnx")
    onnx.save(model, path)
    write_inputs_expected(out_dir, "opset26", path, feeds, shapes)


def recurrent_layout1(out_dir):
    """A bidirectional LSTM and a GRU in layout 1 (batch first, opset 14).
    ONNX Runtime's CPU kernels refuse layout 1, so the expected outputs are
    ORT's for the same weights in layout 0 with the inputs and outputs
    transposed around the node."""
    N, T, I, H = 3, 4, 5, 6
    weights = [w("W", 2, 4 * H, I), w("R", 2, 4 * H, H), w("h0", N, 2, H), w("gW", 1, 3 * H, I),
               w("gR", 1, 3 * H, H), w("gB", 1, 6 * H)]

    def model(layout):
        g = G()
        for t in weights:
            g.init(t)
        if layout == 1:
            g.op("LSTM", ["x", "W", "R", "", "", "h0"], ["y", "yh"], name="/LSTM", hidden_size=H,
                 direction="bidirectional", layout=1)
            g.op("GRU", ["x", "gW", "gR", "gB"], ["gy"], name="/GRU", hidden_size=H, layout=1)
        else:
            xt = g.op("Transpose", ["x"], perm=[1, 0, 2])
            h0 = g.op("Transpose", ["h0"], perm=[1, 0, 2])
            y, yh = g.op("LSTM", [xt, "W", "R", "", "", h0], 2, hidden_size=H,
                         direction="bidirectional")
            g.op("Transpose", [y], ["y"], perm=[2, 0, 1, 3])
            g.op("Transpose", [yh], ["yh"], perm=[1, 0, 2])
            gy = g.op("GRU", [xt, "gW", "gR", "gB"], 1, hidden_size=H)
            g.op("Transpose", [gy], ["gy"], perm=[2, 0, 1, 3])
        return g.model("recurrent_layout1", [vi("x", [N, T, I])], [out(n) for n in ["y", "yh", "gy"]],
                       14)

    feeds = {"x": RNG.uniform(-2, 2, (N, T, I)).astype(np.float32)}
    ref = os.path.join(out_dir, "recurrent_layout1.ref0.onnx")
    onnx.save(model(0), ref)
    write_inputs_expected(out_dir, "recurrent_layout1", ref, feeds, [])
    os.remove(ref)
    onnx.save(model(1), os.path.join(out_dir, "recurrent_layout1.onnx"))


def write_case(out, name, model, feeds, shapes):
    path = os.path.join(out, name + ".onnx")
    onnx.save(model, path)
    write_inputs_expected(out, name, path, feeds, shapes)


def broken_models(out):
    """Files the error tests load."""
    m, _, _ = resnet()
    data = m.SerializeToString()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out, "not_a_model.onnx"), "wb") as f:
        f.write(b"this is not a protobuf\x00\xff\xfe" * 10)
    # unsupported ops, several types and counts
    g = G()
    t = g.op("TopK", ["x", g.init(i64("k", [2]))], 2, name="/TopK")[0]
    t = g.op("TopK", [t, g.init(i64("k2", [1]))], 2, name="/TopK_1")[0]
    nz = g.op("NonZero", [t], name="/NonZero")
    g.op("Cast", [nz], ["y"], name="/Cast", to=F)
    onnx.save(g.model("unsupported", [helper.make_tensor_value_info("x", F, [2, 5])],
                      [helper.make_tensor_value_info("y", F, [1, 1])], 13),
              os.path.join(out, "unsupported.onnx"))
    # external data: the weights in a side file, then a copy whose side file is missing
    m, feeds, shapes = mlp()
    ext = os.path.join(out, "external")
    os.makedirs(ext, exist_ok=True)
    onnx.save_model(m, os.path.join(ext, "mlp_external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="mlp_external.weights", size_threshold=0)
    write_inputs_expected(ext, "mlp_external", os.path.join(ext, "mlp_external.onnx"), feeds, shapes)
    missing = onnx.load(os.path.join(ext, "mlp_external.onnx"), load_external_data=False)
    for t in missing.graph.initializer:
        for kv in t.external_data:
            if kv.key == "location":
                kv.value = "no_such_file.weights"
    onnx.save(missing, os.path.join(ext, "missing_weights.onnx"))


def write_inputs_expected(out, name, path, feeds, shapes):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    for sub, arrays in (("inputs", feeds), ("expected", {o.name: r for o, r in zip(sess.get_outputs(), results)})):
        d = os.path.join(out, f"{name}.{sub}")
        os.makedirs(d, exist_ok=True)
        for k, a in arrays.items():
            np.save(os.path.join(d, k + ".npy"), a)
    with open(os.path.join(out, name + ".shapes"), "w") as f:
        f.write("".join(s + "\n" for s in shapes))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in MODELS.items():
        model, feeds, shapes = make()
        write_case(out, name, model, feeds, shapes)
    opset26(out)
    recurrent_layout1(out)
    broken_models(out)


if __name__ == "__main__":
    main()
