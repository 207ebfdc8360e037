"""Attention (opsets 23, 24) and RotaryEmbedding (23) through the importer
and the fused op-set ops (docs/OPS.md), against ONNX's reference evaluated
in float64 on the same random inputs: every attribute and optional input
the importer maps (3-D and 4-D, grouped heads, scale, softcap, causal with
and without a KV cache, float and bool masks shorter than the keys,
nonpad_kv_seqlen, each qk_matmul_output_mode, a fully masked row), on
cpu_ref and onednn at O0; the forms ampx refuses are one-line errors."""

import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx

TOL = 1e-4  # f32 against float64, relative to the largest reference value
DEVICES = [d for d in ("cpu_ref:0", "onednn:0") if d in {x.id for x in ampx.devices()}]
NP2ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.bool_): TensorProto.BOOL,
           np.dtype(np.int64): TensorProto.INT64}


def model(op, feeds, outputs, opset, **attrs):
    names = [n if a is not None else "" for n, a in feeds]
    node = helper.make_node(op, names, outputs, **attrs)
    inputs = [helper.make_tensor_value_info(n, NP2ONNX[a.dtype], a.shape)
              for n, a in feeds if a is not None]
    graph = helper.make_graph([node], op.lower(), inputs,
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                               for o in outputs if o])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def reference64(m, feed):
    """ONNX's reference with every float input widened to float64."""
    m64 = onnx.ModelProto()
    m64.CopyFrom(m)
    for i in m64.graph.input:
        if i.type.tensor_type.elem_type == TensorProto.FLOAT:
            i.type.tensor_type.elem_type = TensorProto.DOUBLE
    feed64 = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feed.items()}
    return ReferenceEvaluator(m64).run(None, feed64)


def check(m, feed, device):
    want = reference64(m, feed)
    sess = ampx.InferenceSession(m.SerializeToString(), providers=[device], amp="O0")
    got = sess.run(None, feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max()))
        assert np.abs(g.astype(np.float64) - w).max() <= TOL * scale, (g, w)


def rnd(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# name -> (opset, attributes, function of rng giving the ordered (name, array|None) inputs,
# outputs)
CASES = {
    "4d": (23, {}, lambda r: [("Q", rnd(r, 2, 3, 4, 8)), ("K", rnd(r, 2, 3, 6, 8)),
                             ("V", rnd(r, 2, 3, 6, 5))], ["Y"]),
    "4d_gqa_scale_softcap": (
        23, dict(scale=0.2, softcap=1.5),
        lambda r: [("Q", rnd(r, 1, 4, 3, 8)), ("K", rnd(r, 1, 2, 5, 8)),
                   ("V", rnd(r, 1, 2, 5, 8))], ["Y"]),
    "3d_gqa_causal_past_present": (
        23, dict(q_num_heads=4, kv_num_heads=2, is_causal=1),
        lambda r: [("Q", rnd(r, 2, 3, 16)), ("K", rnd(r, 2, 3, 8)), ("V", rnd(r, 2, 3, 12)),
                   ("M", rnd(r, 3, 5)), ("PK", rnd(r, 2, 2, 2, 4)), ("PV", rnd(r, 2, 2, 2, 6))],
        ["Y", "PKO", "PVO"]),
    "4d_bool_mask_short_fully_masked_probabilities": (
        23, dict(qk_matmul_output_mode=3),
        lambda r: [("Q", rnd(r, 1, 2, 3, 4)), ("K", rnd(r, 1, 2, 5, 4)),
                   ("V", rnd(r, 1, 2, 5, 4)),
                   ("M", np.array([[True, False, True], [False, False, False],
                                   [True, True, True]]))],
        ["Y", "", "", "QK"]),
    "4d_float_mask_4d_qk_bias": (
        23, dict(qk_matmul_output_mode=2, softcap=3.0),
        lambda r: [("Q", rnd(r, 2, 2, 3, 4)), ("K", rnd(r, 2, 2, 4, 4)),
                   ("V", rnd(r, 2, 2, 4, 4)), ("M", rnd(r, 2, 1, 3, 4))],
        ["Y", "", "", "QK"]),
    "4d_qk_raw_causal": (
        23, dict(qk_matmul_output_mode=0, is_causal=1),
        lambda r: [("Q", rnd(r, 1, 2, 4, 4)), ("K", rnd(r, 1, 2, 4, 4)),
                   ("V", rnd(r, 1, 2, 4, 4))], ["Y", "", "", "QK"]),
    "4d_nonpad_causal_opset24": (
        24, dict(is_causal=1),
        lambda r: [("Q", rnd(r, 2, 2, 2, 4)), ("K", rnd(r, 2, 1, 6, 4)),
                   ("V", rnd(r, 2, 1, 6, 4)), ("M", None), ("PK", None), ("PV", None),
                   ("L", np.array([3, 6], dtype=np.int64))], ["Y"]),
    "4d_nonpad_bool_mask_opset24": (
        24, {},
        lambda r: [("Q", rnd(r, 2, 2, 2, 4)), ("K", rnd(r, 2, 2, 5, 4)),
                   ("V", rnd(r, 2, 2, 5, 4)), ("M", r.random((2, 1, 1, 5)) > 0.3),
                   ("PK", None), ("PV", None), ("L", np.array([4, 2], dtype=np.int64))], ["Y"]),
    "4d_softmax_precision_double": (
        23, dict(softmax_precision=TensorProto.DOUBLE, qk_matmul_output_mode=3),
        lambda r: [("Q", rnd(r, 1, 2, 3, 4)), ("K", rnd(r, 1, 2, 5, 4)),
                   ("V", rnd(r, 1, 2, 5, 4))], ["Y", "", "", "QK"]),
}

ROTARY = {
    "4d_position_ids": (dict(), lambda r: [("X", rnd(r, 2, 3, 4, 8)), ("C", rnd(r, 7, 4)),
                                           ("S", rnd(r, 7, 4)),
                                           ("P", r.integers(0, 7, (2, 4)).astype(np.int64))]),
    "4d_interleaved_partial": (dict(interleaved=1, rotary_embedding_dim=4),
                               lambda r: [("X", rnd(r, 1, 2, 3, 6)), ("C", rnd(r, 5, 2)),
                                          ("S", rnd(r, 5, 2)),
                                          ("P", np.array([[4, 0, 2]], dtype=np.int64))]),
    "3d_no_position_ids": (dict(num_heads=2), lambda r: [("X", rnd(r, 2, 3, 12)),
                                                         ("C", rnd(r, 2, 3, 3)),
                                                         ("S", rnd(r, 2, 3, 3))]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_matches_float64_reference(name, device):
    opset, attrs, make, outputs = CASES[name]
    feeds = make(np.random.default_rng(zlib.crc32(name.encode())))
    m = model("Attention", feeds, outputs, opset, **attrs)
    check(m, {n: a for n, a in feeds if a is not None}, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(ROTARY))
def test_rotary_embedding_matches_float64_reference(name, device):
    attrs, make = ROTARY[name]
    feeds = make(np.random.default_rng(7))
    m = model("RotaryEmbedding", feeds, ["Y"], 23, **attrs)
    check(m, dict(feeds), device)


@pytest.mark.parametrize("device", DEVICES)
def test_fully_masked_row_is_zero_not_nan(device):
    """A row the mask hides entirely is 0 (ONNX decides it on the bias), even
    where its logits are +inf and logit + bias would be NaN."""
    rng = np.random.default_rng(3)
    q, k = rnd(rng, 1, 1, 2, 4), np.abs(rnd(rng, 1, 1, 3, 4)) + 0.1
    q[0, 0, 0, 0] = np.inf
    feeds = [("Q", q), ("K", k), ("V", rnd(rng, 1, 1, 3, 4)),
             ("M", np.array([[False, False, False], [True, False, True]]))]
    m = model("Attention", feeds, ["Y"], 23)
    y = ampx.InferenceSession(m.SerializeToString(), providers=[device]).run(
        None, dict(feeds))[0]
    assert np.all(y[0, 0, 0] == 0) and np.all(np.isfinite(y))
    np.testing.assert_allclose(y, reference64(m, dict(feeds))[0], rtol=0, atol=TOL)


@pytest.mark.parametrize("attrs,feeds_of,message", [
    (dict(softmax_precision=TensorProto.INT64), None, "softmax_precision 7 is not a float"),
    (dict(), "past_key_only", "past_key and past_value must be given together"),
])
def test_refused_forms_are_one_line_errors(attrs, feeds_of, message):
    rng = np.random.default_rng(5)
    feeds = [("Q", rnd(rng, 1, 1, 2, 4)), ("K", rnd(rng, 1, 1, 3, 4)), ("V", rnd(rng, 1, 1, 3, 4))]
    if feeds_of == "past_key_only":
        feeds += [("M", None), ("PK", rnd(rng, 1, 1, 2, 4))]
    m = model("Attention", feeds, ["Y"], 23, **attrs)
    with pytest.raises(ampx.ModelError) as e:
        ampx.InferenceSession(m.SerializeToString(), providers=["cpu_ref:0"])
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("device", DEVICES)
def test_white_attention_runs_16bit_with_its_bool_mask_and_lengths_kept(device):
    """Attention is white: a capability-blind bf16 plan runs it in 16-bit;
    the planner casts Q, K and V only (the bool mask and the i64 lengths keep
    their dtypes), and the result is within bf16's rounding of float64."""
    opset, attrs, make, outputs = CASES["4d_nonpad_bool_mask_opset24"]
    feeds = make(np.random.default_rng(1))
    m = model("Attention", feeds, outputs, opset, **attrs)
    feed = {n: a for n, a in feeds if a is not None}
    sess = ampx.InferenceSession(m.SerializeToString(), providers=[device], amp="auto",
                                 dtype="bf16", capability_blind=True)
    got, want = sess.run(None, feed)[0], reference64(m, feed)[0]
    err = np.abs(got.astype(np.float64) - want).max()
    assert 1e-5 < err < 3e-2 * max(1.0, float(np.abs(want).max()))
