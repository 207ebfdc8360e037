"""ai.onnx.preview's FlexAttention (frontend/onnx/src/onnx_attention.cpp):
the fused Attention op without modifiers, else Q·Kᵀ, the score_mod
subgraph, Softmax, the prob_mod subgraph and ·V composed at import.
Checked against ONNX's reference (onnx.reference) on the forms the node
suite leaves out: grouped-query heads with modifiers, L != S, batches,
modifiers together, a fully masked row, softmax_precision, 16-bit and
float64 inputs with modifiers, and the refusals."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

# the reference's own inf arithmetic (a fully masked row)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE}
PREVIEW = "ai.onnx.preview"


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def mod_graph(name, nodes, dtype=TensorProto.FLOAT, initializers=()):
    """A one-input modifier graph: `x` in, `y` out."""
    return helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", dtype, None)],
        [helper.make_tensor_value_info("y", dtype, None)], list(initializers))


def causal(dtype=TensorProto.FLOAT, strict=False):
    """Where(q >= k, x, -inf) with the indices from x's shape; strict: q > k
    (row 0 is masked entirely)."""
    i64 = lambda n, v, dims=(): helper.make_tensor(n, TensorProto.INT64, dims, v)
    return mod_graph("causal", [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "two"], ["L"], axis=0),
        helper.make_node("Gather", ["shape", "three"], ["S"], axis=0),
        helper.make_node("Range", ["zero", "L", "one"], ["qr"]),
        helper.make_node("Reshape", ["qr", "qshape"], ["q"]),
        helper.make_node("Range", ["zero", "S", "one"], ["kr"]),
        helper.make_node("Reshape", ["kr", "kshape"], ["k"]),
        helper.make_node("Greater" if strict else "GreaterOrEqual", ["q", "k"], ["mask"]),
        helper.make_node("Where", ["mask", "x", "ninf"], ["y"]),
    ], dtype, [i64("zero", [0]), i64("one", [1]), i64("two", [2]), i64("three", [3]),
               i64("qshape", [-1, 1], [2]), i64("kshape", [1, -1], [2]),
               helper.make_tensor("ninf", dtype, [], [-np.inf])])


def soft_cap(cap, dtype=TensorProto.FLOAT):
    return mod_graph("soft_cap", [helper.make_node("Div", ["x", "cap"], ["s"]),
                                  helper.make_node("Tanh", ["s"], ["t"]),
                                  helper.make_node("Mul", ["t", "cap"], ["y"])],
                     dtype, [helper.make_tensor("cap", dtype, [], [cap])])


def square(dtype=TensorProto.FLOAT):
    """prob_mod: p² (an unnormalised sharpening)."""
    return mod_graph("square", [helper.make_node("Mul", ["x", "x"], ["y"])], dtype)


def model(shapes, dtype=np.float32, domain_version=1, domain=PREVIEW, **attrs):
    """A FlexAttention model on Q, K, V of `shapes`; graph attributes among
    `attrs` (score_mod, prob_mod) become subgraphs."""
    t = NP_TO_ONNX[np.dtype(dtype)]
    ins = [helper.make_tensor_value_info(k, t, s) for k, s in zip("QKV", shapes)]
    out = helper.make_tensor_value_info("Y", t, None)
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "g", ins, [out])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                helper.make_opsetid(PREVIEW, domain_version)])
    m.ir_version = 11
    return m


def feed(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(s).astype(dtype) for k, s in zip("QKV", shapes)}


def check(m, f, rtol=2e-5, atol=2e-6):
    want = ReferenceEvaluator(m).run(None, f)[0]
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([f["Q"], f["K"], f["V"]])[0]
        assert got.dtype == want.dtype and got.shape == want.shape, device
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"on {device}")
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{device}: NaNs differ"


# [B, Hq, L, E], [B, Hkv, S, E], [B, Hkv, S, Ev]
SHAPES = {
    "mha": ([2, 3, 5, 8], [2, 3, 7, 8], [2, 3, 7, 4]),
    "gqa": ([2, 6, 4, 8], [2, 2, 9, 8], [2, 2, 9, 8]),
    "mqa": ([1, 4, 3, 16], [1, 1, 5, 16], [1, 1, 5, 6]),
}
# float64 graphs' MatMuls and Softmax run in f32 outside cpu_ref's float64
# mode (docs/OPS.md, "f64"), as every double model's do.
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=2e-5, atol=2e-6),
       np.float16: dict(rtol=4e-3, atol=2e-3)}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("heads", list(SHAPES))
@pytest.mark.parametrize("mods", ["none", "score", "prob", "both"])
def test_matches_reference(dtype, heads, mods):
    t = NP_TO_ONNX[np.dtype(np.float64 if dtype == np.float64 else np.float32)]
    attrs = {"scale": 0.3} if heads == "gqa" else {}
    if mods in ("score", "both"):
        attrs["score_mod"] = causal(t) if heads != "mqa" else soft_cap(1.5, t)
    if mods in ("prob", "both"):
        attrs["prob_mod"] = square(t)
    shapes = SHAPES[heads]
    check(model(shapes, dtype, **attrs), feed(shapes, dtype), **TOL[dtype])


def test_fully_masked_row_is_nan_as_the_reference():
    # Row 0 masks every key: softmax of all -inf is NaN in ONNX's reference.
    shapes = SHAPES["gqa"]
    f = feed(shapes, np.float32, seed=1)
    check(model(shapes, score_mod=causal(strict=True)), f)
    want = ReferenceEvaluator(model(shapes, score_mod=causal(strict=True))).run(None, f)[0]
    assert np.isnan(want[:, :, 0]).all() and not np.isnan(want[:, :, 1:]).any()


@pytest.mark.parametrize("precision", [TensorProto.FLOAT, TensorProto.DOUBLE])
def test_softmax_precision(precision):
    shapes = SHAPES["mha"]
    attrs = {"softmax_precision": precision}
    check(model(shapes, **attrs), feed(shapes, np.float32))
    check(model(shapes, score_mod=soft_cap(0.7, precision), **attrs), feed(shapes, np.float32))


def test_softmax_precision_float16_modifier_sees_float16():
    # The modifier's dtype is softmax_precision's: an f16 bias adds to f16 scores.
    shapes = SHAPES["mha"]
    bias = mod_graph("bias", [helper.make_node("Add", ["x", "b"], ["y"])], TensorProto.FLOAT16,
                     [helper.make_tensor("b", TensorProto.FLOAT16, [], [0.25])])
    check(model(shapes, score_mod=bias, softmax_precision=TensorProto.FLOAT16),
          feed(shapes, np.float32), rtol=4e-3, atol=2e-3)


def test_zero_scale_is_uniform():
    shapes = SHAPES["mha"]
    f = feed(shapes, np.float32)
    check(model(shapes, scale=0.0), f)
    check(model(shapes, scale=0.0, score_mod=soft_cap(2.0)), f)


def refused(m, match):
    with pytest.raises(ampx.ModelError, match=match):
        ampx.backend.prepare(m, "cpu_ref:0")


def test_refusals():
    s = SHAPES["mha"]
    refused(model(([2, 3, 8], [2, 3, 8], [2, 3, 4])), "must be 4-D")
    refused(model(([2, 3, 5, 8], [2, 2, 7, 8], [2, 2, 7, 4])), "not a multiple")
    refused(model(([2, 3, 5, 8], [2, 3, 7, 6], [2, 3, 7, 4])), "head size")
    refused(model(([2, 3, 5, 8], [2, 3, 7, 8], [2, 3, 6, 4])), "sequence length")
    refused(model(([2, 3, 5, 8], [1, 3, 7, 8], [1, 3, 7, 4])), "batch size")
    refused(model(s, scale=-1.0), "scale is -1")
    refused(model(s, softmax_precision=TensorProto.INT32), "not a float type")
    two_in = helper.make_graph(
        [helper.make_node("Add", ["x", "z"], ["y"])], "two",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "xz"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    refused(model(s, score_mod=two_in), "one input and one output")
    # A modifier must keep [B, Hq, L, S] and the softmax dtype.
    reduce = mod_graph("sum", [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)])
    refused(model(s, score_mod=reduce), "score_mod must return its input's type")
    cast = mod_graph("cast", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.DOUBLE)])
    refused(model(s, prob_mod=cast), "prob_mod must return its input's type")
    # Not the preview domain's version 1, or not that domain at all.
    refused(model(s, domain_version=2), "ai.onnx.preview.FlexAttention")
    refused(model(s, domain=""), "FlexAttention")


def test_two_nodes_with_alike_modifiers():
    # Two layers whose modifiers name their values and initializers alike.
    shapes = SHAPES["gqa"]
    t = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(k, t, s) for k, s in zip("QKV", shapes)]
    nodes = [helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y1"], domain=PREVIEW,
                              score_mod=causal(), prob_mod=square()),
             helper.make_node("FlexAttention", ["Y1", "K", "V"], ["Y"], domain=PREVIEW,
                              score_mod=causal(), prob_mod=soft_cap(0.5))]
    graph = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("Y", t, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                helper.make_opsetid(PREVIEW, 1)])
    m.ir_version = 11
    check(m, feed(shapes, np.float32))


def test_modifier_names_do_not_shadow_the_graph():
    # The graph has a value `x`, as the modifiers name their input: a node
    # after FlexAttention still reads the graph's.
    shapes = SHAPES["mha"]
    t = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(k, t, s) for k, s in zip("QKV", shapes)]
    ins.append(helper.make_tensor_value_info("x", t, [3]))
    nodes = [helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW,
                              score_mod=soft_cap(2.0)),
             helper.make_node("Add", ["x", "x"], ["Z"])]
    outs = [helper.make_tensor_value_info(n, t, None) for n in ("Y", "Z")]
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs),
                          opset_imports=[helper.make_opsetid("", 26),
                                         helper.make_opsetid(PREVIEW, 1)])
    m.ir_version = 11
    f = feed(shapes, np.float32)
    x = np.array([1.0, -2.0, 3.5], np.float32)
    want = ReferenceEvaluator(m).run(None, {**f, "x": x})
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([f["Q"], f["K"], f["V"], x])
        np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=2e-6)
        np.testing.assert_array_equal(got[1], 2 * x)


def test_identity_modifiers():
    # A modifier with no nodes hands its input back.
    shapes = SHAPES["gqa"]
    ident = helper.make_graph([], "id", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
    check(model(shapes, score_mod=ident, prob_mod=ident), feed(shapes, np.float32))


def test_modifier_reads_an_outer_value():
    # A bias the graph computes, read by score_mod from the outer scope.
    shapes = SHAPES["mha"]
    t = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(k, t, s) for k, s in zip("QKV", shapes)]
    ins.append(helper.make_tensor_value_info("bias", t, [7]))
    add = mod_graph("outer", [helper.make_node("Add", ["x", "bias2"], ["y"])])
    nodes = [helper.make_node("Mul", ["bias", "bias"], ["bias2"]),
             helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW,
                              score_mod=add)]
    m = helper.make_model(
        helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("Y", t, None)]),
        opset_imports=[helper.make_opsetid("", 26), helper.make_opsetid(PREVIEW, 1)])
    m.ir_version = 11
    f = feed(shapes, np.float32)
    bias = np.linspace(-1.5, 1.5, 7).astype(np.float32)
    # ONNX's reference gives a modifier no outer scope; ONNX's subgraphs
    # have one (an If's branches read outer values): numpy in float64.
    q, k, v = (f[n].astype(np.float64) for n in "QKV")
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + bias.astype(np.float64) ** 2
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([f["Q"], f["K"], f["V"], bias])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=device)
