"""The ONNX ops ampx imports as compositions of op-set ops
(frontend/onnx/src/onnx_composed_ops.cpp, docs/ONNX.md "Composed ops"),
run through ampx.backend on each CPU device and compared with ONNX's own
reference implementation (onnx.reference), on inputs with the edge values
ONNX's node suite leaves out: NaN, +-inf, -0, ties, every attribute's
non-default value and the opsets whose form differs."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

# the reference's own inf/NaN arithmetic
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}

NAN, INF = np.nan, np.inf
EDGE = np.array([-INF, -3.5, -1.0, -0.5, -0.25, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.5, INF, NAN],
                np.float32)


def model(op, inputs, n_out=1, opset=22, initializers=(), **attrs):
    """A one-node model: `inputs` maps names to arrays (graph inputs), or to
    None for an initializer given in `initializers`."""
    ins = [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape)
           for k, v in inputs.items()]
    names = list(inputs) + [t.name for t in initializers]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    node = helper.make_node(op, names, [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", ins, outs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feed, devices=DEVICES, rtol=1e-5, atol=1e-6, want=None):
    """ampx's outputs against `want`, by default ONNX's reference's (numpy
    where the reference departs from the spec: said at each use)."""
    if want is None:
        want = ReferenceEvaluator(m).run(None, feed)
    for device in devices:
        rep = ampx.backend.prepare(m, device)
        got = rep.run([feed[i.name] for i in m.graph.input])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, f"{device}: dtype {g.dtype}, expected {w.dtype}"
            assert g.shape == w.shape, f"{device}: shape {g.shape}, expected {w.shape}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"on {device}")
            # NaN exactly where the reference has one, and inf signs equal
            assert np.array_equal(np.isnan(g), np.isnan(w)), f"{device}: NaNs differ"


def refused(m, match):
    with pytest.raises(ampx.ModelError, match=match):
        ampx.backend.prepare(m, "cpu_ref:0")


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


# --- Trilu -------------------------------------------------------------------

@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [-7, -2, -1, 0, 1, 3, 9])
def test_trilu_constant_k(upper, k):
    x = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5) - 20
    x[0, 1, 1] = NAN
    kt = helper.make_tensor("k", TensorProto.INT64, [], [k])
    check(model("Trilu", {"x": x}, opset=14, initializers=[kt], upper=upper), {"x": x})


def test_trilu_default_k_int64():
    x = np.arange(30, dtype=np.int64).reshape(5, 6)
    check(model("Trilu", {"x": x}, opset=14), {"x": x})
    check(model("Trilu", {"x": x}, opset=14, upper=0), {"x": x})


def test_trilu_k_from_graph_input():
    # k computed at run time from an input: planned for its value at the
    # first run (ShapeCachedModel), again for another value.
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    m = model("Trilu", {"x": x, "k": np.array(0, np.int64)}, opset=14)
    for device in DEVICES:
        rep = ampx.backend.prepare(m, device)
        for k in (1, -1):
            want = np.triu(x, k)
            (got,) = rep.run([x, np.array(k, np.int64)])
            np.testing.assert_array_equal(got, want)


# --- logic and predicates -------------------------------------------------------

def test_xor_broadcast():
    a = np.array([[True, False, True, False]] * 3)
    b = np.array([[True], [False], [True]])
    check(model("Xor", {"a": a, "b": b}, opset=7), {"a": a, "b": b})


def test_isnan():
    x = EDGE.reshape(2, 7)
    check(model("IsNaN", {"x": x}, opset=20), {"x": x})
    xh = x.astype(np.float16)
    check(model("IsNaN", {"x": xh}, opset=20), {"x": xh})


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf(pos, neg):
    x = EDGE.reshape(2, 7)
    check(model("IsInf", {"x": x}, opset=20, detect_positive=pos, detect_negative=neg), {"x": x})


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int32])
def test_sign(dtype):
    x = EDGE if dtype in (np.float32, np.float16) else np.array([-5, -1, 0, 1, 7], np.int64)
    x = x.astype(dtype)
    check(model("Sign", {"x": x}, opset=13), {"x": x})


# --- activations ----------------------------------------------------------------

ACTIVATIONS = [
    ("Elu", 7, {}), ("Elu", 22, {"alpha": 0.3}),
    ("Selu", 7, {}), ("Selu", 22, {"alpha": 2.0, "gamma": 0.5}),
    ("Celu", 12, {}), ("Celu", 12, {"alpha": 0.7}), ("Celu", 12, {"alpha": -1.5}),
    ("ThresholdedRelu", 10, {}), ("ThresholdedRelu", 22, {"alpha": -0.25}),
    ("Softsign", 7, {}), ("Softsign", 22, {}),
    ("Shrink", 9, {}), ("Shrink", 9, {"lambd": 1.0, "bias": 0.25}),
    ("Swish", 24, {}), ("Swish", 24, {"alpha": 1.5}),
]


@pytest.mark.parametrize("op,opset,attrs", ACTIVATIONS,
                         ids=[f"{o}-{s}-{'-'.join(map(str, a.values()))}" for o, s, a in ACTIVATIONS])
def test_activation(op, opset, attrs):
    x = EDGE.reshape(2, 7)
    check(model(op, {"x": x}, opset=opset, **attrs), {"x": x})


def test_activation_float16():
    x = EDGE.astype(np.float16)
    for op in ("Elu", "Selu", "ThresholdedRelu", "Softsign"):
        check(model(op, {"x": x}, opset=22), {"x": x}, rtol=2e-3, atol=2e-3)


def test_celu_alpha_zero_refused():
    refused(model("Celu", {"x": EDGE}, opset=12, alpha=0.0), "alpha must not be 0")


def test_shrink_integers_refused():
    refused(model("Shrink", {"x": np.array([1, 2], np.int32)}, opset=9), "expected a float")


# --- Hardmax -------------------------------------------------------------------

def hardmax_2d(x, axis):
    # Opsets 1-12: the input seen as 2-D [prod(dims < axis), prod(dims >= axis)]
    # (ONNX's reference implements only opset 13's form).
    a = axis % x.ndim if axis < x.ndim else axis
    flat = x.reshape(int(np.prod(x.shape[:a])), -1)
    y = np.zeros_like(flat)
    y[np.arange(flat.shape[0]), flat.argmax(axis=1)] = 1
    return y.reshape(x.shape)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2])
def test_hardmax(opset, axis):
    x = np.random.default_rng(1).integers(-3, 3, (2, 3, 4)).astype(np.float32)  # ties
    attrs = {} if axis is None else {"axis": axis}
    want = None
    if opset < 13:
        want = [hardmax_2d(x, 1 if axis is None else axis)]
    check(model("Hardmax", {"x": x}, opset=opset, **attrs), {"x": x}, want=want)


# --- reductions and norms -----------------------------------------------------------

@pytest.mark.parametrize("op", ["ReduceL1", "ReduceLogSum"])
@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("axes,keepdims", [(None, 1), ([1], 0), ([0, -1], 1)])
def test_reduce(op, opset, axes, keepdims):
    x = np.random.default_rng(2).uniform(0.5, 2, (3, 4, 5)).astype(np.float32)
    if op == "ReduceL1":
        x -= 1.25
    inits = []
    attrs = {"keepdims": keepdims}
    if axes is not None:
        if opset >= 18:
            inits = [helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)]
        else:
            attrs["axes"] = axes
    check(model(op, {"x": x}, opset=opset, initializers=inits, **attrs), {"x": x})


def test_reduce_l1_int64_refused():
    x = np.array([[-3, 4], [5, -6]], np.int64)
    refused(model("ReduceL1", {"x": x}, opset=13, axes=[1]), "expected a float tensor")


def test_reduce_noop_refused():
    refused(model("ReduceL1", {"x": EDGE}, opset=18, noop_with_empty_axes=1),
            "noop_with_empty_axes")


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lp_normalization(p, axis):
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    x[1, :] = 0  # a zero norm along axis 1 gives 0, not NaN
    x[:, 2] = 0
    # numpy: ONNX's reference sums x (not |x|) for p = 1; its node suite,
    # like the spec, takes the L1 norm.
    norm = (np.abs(x) ** p).sum(axis=axis, keepdims=True) ** (1.0 / p)
    with np.errstate(invalid="ignore"):
        want = np.where(norm == 0, 0, x / norm).astype(np.float32)
    check(model("LpNormalization", {"x": x}, opset=22, p=p, axis=axis), {"x": x}, want=[want])


def test_lp_normalization_p3_refused():
    refused(model("LpNormalization", {"x": EDGE}, opset=22, p=3), "p must be 1 or 2")


@pytest.mark.parametrize("axes", [None, [0, 2, 3], [1], [2, 3]])
def test_mean_variance_normalization(axes):
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    check(model("MeanVarianceNormalization", {"x": x}, opset=13, **attrs), {"x": x},
          rtol=1e-4, atol=1e-5)


def test_global_max_pool():
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5)).astype(np.float32)
    check(model("GlobalMaxPool", {"x": x}, opset=22), {"x": x})
    # 1-D spatial: numpy (ONNX's reference gives [N, 1] here)
    x3 = np.ascontiguousarray(x[:, :, :, 0])
    check(model("GlobalMaxPool", {"x": x3}, opset=22), {"x": x3},
          want=[x3.max(axis=2, keepdims=True)])


# --- data movement ---------------------------------------------------------------

def test_eye_like_in_a_graph():
    # EyeLike's output is a constant: add it to the input so it is not the
    # graph's output itself.
    x = np.random.default_rng(6).standard_normal((3, 5)).astype(np.float32)
    for k in (-4, -1, 0, 2, 6):
        eye = helper.make_node("EyeLike", ["x"], ["e"], k=k)
        add = helper.make_node("Add", ["x", "e"], ["y0"])
        g = helper.make_graph([eye, add], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y0", TensorProto.FLOAT, x.shape)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
        m.ir_version = 8
        check(m, {"x": x})


@pytest.mark.parametrize("shape,axes", [([2, 3, 4], None), ([7, 1, 6], None), ([5, 2], [0, 2]),
                                        ([9, 3], [-1, 0]), ([3, 4, 5], None)])
def test_center_crop_pad(shape, axes):
    x = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    st = helper.make_tensor("shape", TensorProto.INT64, [len(shape)], shape)
    attrs = {} if axes is None else {"axes": axes}
    check(model("CenterCropPad", {"x": x}, opset=18, initializers=[st], **attrs), {"x": x})


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(axis, reduction):
    rng = np.random.default_rng(7)
    data = rng.standard_normal((4, 5)).astype(np.float32)
    ishape = (3, 4) if axis == 0 else (4, 3)
    dim = data.shape[axis]
    # distinct indices along the axis for "none" (duplicates are undefined),
    # negative ones included
    cols = [rng.permutation(dim)[: ishape[axis]] for _ in range(ishape[1 - axis % 2])]
    idx = np.stack(cols, axis=1 - axis % 2).astype(np.int64)
    idx[idx % 2 == 1] -= dim
    if reduction != "none":
        idx[0] = idx[-1]  # a duplicate: both updates reduce into it
    upd = rng.standard_normal(ishape).astype(np.float32)
    m = model("ScatterElements", {"data": data, "indices": idx, "updates": upd}, opset=18,
              axis=axis, reduction=reduction)
    check(m, {"data": data, "indices": idx, "updates": upd})


def test_scatter_deprecated_int32_indices():
    data = np.zeros((3, 3), np.float32)
    idx = np.array([[1, 0, 2], [0, 2, 1]], np.int32)
    upd = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32)
    m = model("Scatter", {"data": data, "indices": idx, "updates": upd}, opset=10, axis=0)
    want = data.copy()  # numpy: ONNX's reference has no Scatter
    np.put_along_axis(want, idx.astype(np.int64), upd, axis=0)
    check(m, {"data": data, "indices": idx, "updates": upd}, want=[want])


def test_scatter_elements_reduction_needs_opset():
    z = np.zeros((2, 2), np.float32)
    refused(model("ScatterElements", {"data": z, "indices": np.zeros((2, 2), np.int64),
                                      "updates": z}, opset=16, reduction="max"), "opset 18")


# --- forms of existing ops ------------------------------------------------------------

@pytest.mark.parametrize("opset", [7, 13])
def test_clip_min_greater_than_max(opset):
    # max everywhere, NaN stays NaN (ONNX's text, numpy's clip). NaN on
    # cpu_ref only: onednn's Clip gives min for NaN whatever min and max are.
    x = EDGE[:-1]
    if opset < 11:
        m = model("Clip", {"x": x}, opset=opset, min=2.0, max=1.0)
    else:
        inits = [helper.make_tensor("min", TensorProto.FLOAT, [], [2.0]),
                 helper.make_tensor("max", TensorProto.FLOAT, [], [1.0])]
        m = model("Clip", {"x": x}, opset=opset, initializers=inits)
    check(m, {"x": x}, want=[np.clip(x, 2.0, 1.0)])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = len(EDGE)
    check(m, {"x": EDGE}, devices=["cpu_ref:0"], want=[np.clip(EDGE, 2.0, 1.0)])


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_max_min_bool(op, keepdims):
    x = np.array([[True, False, True], [True, True, True], [False, False, False]])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    check(model(op, {"x": x}, opset=20, initializers=[axes], keepdims=keepdims), {"x": x})


# --- the trigonometric and hyperbolic op-set ops (not compositions: new ops) ---

TRIG = [("Sin", 7), ("Cos", 7), ("Tan", 7), ("Asin", 7), ("Acos", 7), ("Atan", 7),
        ("Sinh", 9), ("Cosh", 9), ("Asinh", 9), ("Acosh", 9), ("Atanh", 9)]


@pytest.mark.parametrize("op,opset", TRIG, ids=[o for o, _ in TRIG])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trigonometric(op, opset, dtype):
    # in and out of each domain: NaN there, as numpy
    x = np.concatenate([EDGE, np.linspace(-1.5, 4, 23, dtype=np.float32)]).astype(dtype)
    devices = DEVICES if dtype == np.float32 else ["cpu_ref:0"]
    check(model(op, {"x": x}, opset=opset), {"x": x}, devices=devices, rtol=1e-6, atol=1e-7)
