"""The LLM ops of opsets 27-28: SwiGLU (28) and CausalConvWithState (27),
imported as compositions of op-set ops (frontend/onnx/src/onnx_llm_ops.cpp),
and LinearAttention (27), the op set's fused op (its reference kernel,
sdk/reference/src/ops_linear_attention.cpp), against float64 numpy of the
spec's formula (16-bit inputs rounded first, as the tolerances in
sdk/opset/include/ampx/opset/tolerances.hpp assume), and their refusals."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ampx
import ampx.backend

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
ONNX_T = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
          np.dtype(np.float64): TensorProto.DOUBLE}
# normwise relative error bounds (tolerances.hpp): f32, f16 output; f64's
# Sigmoid is the f32 kernel's (the op set computes in f32)
TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2.0**-10,
       np.dtype(np.float64): 1e-5}


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def model(op, inputs, n_out, opset, **attrs):
    ins = [helper.make_tensor_value_info(k, ONNX_T[v.dtype], v.shape) if v is not None else None
           for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    node = helper.make_node(op, [k if v is not None else "" for k, v in inputs.items()],
                            [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", [i for i in ins if i is not None], outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def run(m, feed, device):
    rep = ampx.backend.prepare(m, device)
    return rep.run([feed[i.name] for i in m.graph.input])


def close(got, want, dtype, device):
    assert got.dtype == dtype, f"{device}: dtype {got.dtype}, expected {dtype}"
    assert got.shape == want.shape, f"{device}: shape {got.shape}, expected {want.shape}"
    if want.size == 0:
        return
    err = np.linalg.norm(got.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30)
    assert err <= TOL[np.dtype(dtype)], f"{device}: relative error {err}"


def refused(m, match):
    with pytest.raises(ampx.ModelError, match=match):
        ampx.backend.prepare(m, "cpu_ref:0")


# --- SwiGLU -------------------------------------------------------------------

def swiglu64(a, b, alpha):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return a / (1 + np.exp(-alpha * a)) * b


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("alpha", [None, 1.702, -0.5])
def test_swiglu(dtype, alpha):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 3, 8)) * 4).astype(dtype)
    b = rng.standard_normal((2, 3, 8)).astype(dtype)
    attrs = {} if alpha is None else {"alpha": alpha}
    m = model("SwiGLU", {"a": a, "b": b}, 1, 28, **attrs)
    for device in DEVICES:
        if dtype == np.float64 and device != "cpu_ref:0":
            continue
        (y,) = run(m, {"a": a, "b": b}, device)
        close(y, swiglu64(a, b, 1.0 if alpha is None else alpha), dtype, device)


def test_swiglu_refusals():
    a = np.ones((2, 4), np.float32)
    refused(model("SwiGLU", {"a": a, "b": np.ones((1, 4), np.float32)}, 1, 28),
            r"B has shape \[1, 4\], expected \[2, 4\]")
    refused(model("SwiGLU", {"a": a, "b": a.astype(np.float16)}, 1, 28), "one type")
    refused(model("SwiGLU", {"a": a, "b": a}, 1, 27), "opset 28")


# --- CausalConvWithState --------------------------------------------------------

def causal_conv64(x, w, bias, past, activation):
    x, w = x.astype(np.float64), w.astype(np.float64)
    b, c, length = x.shape
    k = w.shape[2]
    pad = np.zeros((b, c, k - 1)) if past is None else past.astype(np.float64)
    padded = np.concatenate([pad, x], axis=2)
    y = np.zeros((b, c, length))
    for j in range(k):
        y += padded[:, :, j:j + length] * w[None, :, 0, j, None]
    if bias is not None:
        y += bias.astype(np.float64)[None, :, None]
    if activation in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return y, padded[:, :, padded.shape[2] - (k - 1):]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("k,length", [(4, 7), (4, 2), (1, 5), (3, 1)])
@pytest.mark.parametrize("with_bias,with_past", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("activation", [None, "silu", "swish", "none"])
def test_causal_conv_with_state(dtype, k, length, with_bias, with_past, activation):
    rng = np.random.default_rng(k * 100 + length)
    b, c = 2, 5
    feed = {"x": rng.standard_normal((b, c, length)).astype(dtype),
            "w": rng.standard_normal((c, 1, k)).astype(dtype),
            "bias": rng.standard_normal(c).astype(dtype) if with_bias else None,
            "past": rng.standard_normal((b, c, k - 1)).astype(dtype) if with_past else None}
    attrs = {} if activation is None else {"activation": activation}
    m = model("CausalConvWithState", feed, 2, 27, **attrs)
    want_y, want_state = causal_conv64(feed["x"], feed["w"], feed["bias"], feed["past"],
                                       activation)
    feed = {k_: v for k_, v in feed.items() if v is not None}
    for device in DEVICES:
        y, state = run(m, feed, device)
        close(y, want_y, dtype, device)
        # the state is a copy of inputs: exact
        assert state.dtype == dtype and state.shape == want_state.shape
        np.testing.assert_array_equal(state.astype(np.float64), want_state)


def test_causal_conv_with_state_refusals():
    x = np.ones((1, 3, 4), np.float32)
    w = np.ones((3, 1, 2), np.float32)
    refused(model("CausalConvWithState", {"x": x, "w": w}, 2, 27, activation="relu"),
            "activation 'relu' is not one of none, silu, swish")
    refused(model("CausalConvWithState", {"x": x, "w": np.ones((2, 1, 2), np.float32)}, 2, 27),
            r"weight has shape \[2, 1, 2\], expected \[3, 1, k\]")
    refused(model("CausalConvWithState", {"x": x, "w": np.ones((3, 1, 0), np.float32)}, 2, 27),
            "k >= 1")
    refused(model("CausalConvWithState",
                  {"x": x, "w": w, "bias": None, "past": np.ones((1, 3, 2), np.float32)}, 2, 27),
            r"past_state has shape \[1, 3, 2\], expected \[1, 3, 1\]")
    refused(model("CausalConvWithState",
                  {"x": x, "w": w, "bias": np.ones(4, np.float32)}, 2, 27),
            r"bias has shape \[4\], expected \[3\]")
    refused(model("CausalConvWithState", {"x": x, "w": w.astype(np.float16)}, 2, 27),
            "weight is f16")
    refused(model("CausalConvWithState", {"x": np.ones((3, 4), np.float32), "w": w}, 2, 27),
            "must be 3-D")
    refused(model("CausalConvWithState", {"x": x.astype(np.float64), "w": w}, 2, 27),
            "expected float, float16 or bfloat16")


# --- LinearAttention --------------------------------------------------------------

def linear_attention64(q, k, v, past, decay, beta, hq, hkv, rule, scale):
    """ONNX's recurrence in float64 (a port of onnx.reference's)."""
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    q4 = q.astype(np.float64).reshape(b, t, hq, dk).transpose(0, 2, 1, 3)
    k4 = k.astype(np.float64).reshape(b, t, hkv, dk).transpose(0, 2, 1, 3)
    v4 = v.astype(np.float64).reshape(b, t, hkv, dv).transpose(0, 2, 1, 3)
    s = np.zeros((b, hkv, dk, dv)) if past is None else past.astype(np.float64).copy()
    if decay is not None:
        g = decay.astype(np.float64).reshape(b, t, hkv, -1).transpose(0, 2, 1, 3)
    if beta is not None:
        be = beta.astype(np.float64).reshape(b, t, -1, 1).transpose(0, 2, 1, 3)
    scale = scale if scale else 1 / np.sqrt(dk)
    out = np.zeros((b, hq, t, dv))
    for i in range(t):
        if rule in ("gated", "gated_delta"):
            s = s * np.exp(g[:, :, i, :])[..., None]
        vt = v4[:, :, i, :]
        if rule in ("delta", "gated_delta"):
            vt = be[:, :, i, :] * (vt - np.einsum("bhdm,bhd->bhm", s, k4[:, :, i, :]))
        s = s + k4[:, :, i, :, None] * vt[:, :, None, :]
        out[:, :, i, :] = scale * np.einsum("bhd,bhdm->bhm", q4[:, :, i, :],
                                            np.repeat(s, hq // hkv, axis=1))
    return out.transpose(0, 2, 1, 3).reshape(b, t, hq * dv), s


def la_feed(rng, dtype, b, t, hq, hkv, dk, dv, rule, past, decay_per_key=True, beta_one=False):
    feed = {"q": rng.standard_normal((b, t, hq * dk)).astype(dtype),
            "k": (rng.standard_normal((b, t, hkv * dk)) / np.sqrt(dk)).astype(dtype),
            "v": rng.standard_normal((b, t, hkv * dv)).astype(dtype),
            "past": (rng.standard_normal((b, hkv, dk, dv)) * 0.3).astype(past) if past else None,
            "decay": None, "beta": None}
    if rule in ("gated", "gated_delta"):
        feed["decay"] = (-np.abs(rng.standard_normal((b, t, hkv * dk if decay_per_key else hkv)))
                         * 0.2).astype(dtype)
    if rule in ("delta", "gated_delta"):
        feed["beta"] = rng.random((b, t, 1 if beta_one else hkv)).astype(dtype)
    return feed


def check_la(feed, dtype, state_dtype, hq, hkv, rule=None, scale=None, devices=DEVICES):
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv}
    if rule is not None:
        attrs["update_rule"] = rule
    if scale is not None:
        attrs["scale"] = scale
    m = model("LinearAttention", feed, 2, 27, **attrs)
    want_y, want_s = linear_attention64(feed["q"], feed["k"], feed["v"], feed["past"],
                                        feed["decay"], feed["beta"], hq, hkv,
                                        rule or "gated_delta", scale)
    given = {k_: v for k_, v in feed.items() if v is not None}
    for device in devices:
        y, s = run(m, given, device)
        close(y, want_y, dtype, device)
        close(s, want_s, state_dtype, device)


@pytest.mark.parametrize("rule", [None, "linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("heads", [(4, 4), (4, 2), (3, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_linear_attention(rule, heads, dtype):
    hq, hkv = heads
    rng = np.random.default_rng(hq * 10 + hkv)
    feed = la_feed(rng, dtype, 2, 5, hq, hkv, 4, 3, rule or "gated_delta", dtype)
    check_la(feed, dtype, dtype, hq, hkv, rule)


@pytest.mark.parametrize("rule", ["gated", "gated_delta"])
def test_linear_attention_per_head_decay_scalar_beta_scale(rule):
    rng = np.random.default_rng(7)
    feed = la_feed(rng, np.float32, 1, 6, 2, 2, 5, 4, rule, None, decay_per_key=False,
                   beta_one=True)
    check_la(feed, np.float32, np.float32, 2, 2, rule, scale=0.3)


def test_linear_attention_f32_state_f16_activations():
    # ONNX's S != T: computed in f32, each output in its own type
    rng = np.random.default_rng(3)
    feed = la_feed(rng, np.float16, 2, 4, 4, 2, 4, 4, "gated_delta", np.float32)
    check_la(feed, np.float16, np.float32, 4, 2)


def test_linear_attention_long_sequence():
    # 300 tokens: the state is carried over the whole sequence (a kernel
    # resetting it per chunk, or reading the wrong token, drifts)
    rng = np.random.default_rng(5)
    feed = la_feed(rng, np.float32, 1, 300, 2, 1, 8, 8, "gated_delta", np.float32)
    check_la(feed, np.float32, np.float32, 2, 1)


def test_linear_attention_refusals():
    x = np.ones((1, 2, 8), np.float32)
    base = {"q": x, "k": x, "v": x}
    refused(model("LinearAttention", base, 2, 27, q_num_heads=2, kv_num_heads=2),
            "update_rule 'gated_delta' needs the decay input")
    refused(model("LinearAttention", {**base, "p": None, "d": x}, 2, 27, q_num_heads=2,
                  kv_num_heads=2, update_rule="linear"),
            "update_rule 'linear' forbids the decay input")
    refused(model("LinearAttention", base, 2, 27, q_num_heads=3, kv_num_heads=2,
                  update_rule="linear"), "must be a positive multiple of kv_num_heads")
    refused(model("LinearAttention", base, 2, 27, q_num_heads=2, kv_num_heads=2,
                  update_rule="mamba"), "update_rule 'mamba' is not one of")
    refused(model("LinearAttention", base, 2, 27, kv_num_heads=2, update_rule="linear"),
            "are required")
    refused(model("LinearAttention", {**base, "p": np.ones((1, 2, 4, 3), np.float32)}, 2, 27,
                  q_num_heads=2, kv_num_heads=2, update_rule="linear"),
            r"past_state has shape \[1x2x4x3\], expected \[1x2x4x4\]")
    refused(model("LinearAttention", {**base, "p": None, "d": np.ones((1, 2, 3), np.float32)},
                  2, 27, q_num_heads=2, kv_num_heads=2, update_rule="gated"),
            r"decay has shape \[1x2x3\]")
    refused(model("LinearAttention", {"q": x, "k": x, "v": x.astype(np.float16)}, 2, 27,
                  q_num_heads=2, kv_num_heads=2, update_rule="linear"), "one type")
    e = np.ones((1, 2, 0), np.float32)  # 0 % any head count is 0: hq * dv must not overflow
    refused(model("LinearAttention", {"q": e, "k": e, "v": e,
                                      "p": np.ones((1, 1, 0, 0), np.float32)}, 2, 27,
                  q_num_heads=2**62,
                  kv_num_heads=2**61, update_rule="linear"), "head sizes >= 1")
    refused(model("LinearAttention", base, 2, 26, q_num_heads=2, kv_num_heads=2,
                  update_rule="linear"), "opset 27")
