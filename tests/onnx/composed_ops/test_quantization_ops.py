"""ONNX's quantization ops (frontend/onnx/src/onnx_quantization.cpp, docs/ONNX.md
"Quantization") through ampx.backend on each CPU device against ONNX's
reference, bit for bit: round-half-to-even ties, saturation at both ends of
every integer type, per-axis and blocked scales (with a partial last block),
f16 scales, the opsets whose forms differ; the refusals; and the planner
keeping the integer arithmetic f32 at O2/O3."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
         np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.int16): TensorProto.INT16, np.dtype(np.uint16): TensorProto.UINT16,
         np.dtype(np.int32): TensorProto.INT32}


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def model(op, inputs, opset=21, n_out=1, **attrs):
    ins = [helper.make_tensor_value_info(k, TYPES[v.dtype], v.shape) for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    node = helper.make_node(op, list(inputs), [o.name for o in outs], **attrs)
    m = helper.make_model(helper.make_graph([node], "g", ins, outs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feed, want=None):
    if want is None:
        want = ReferenceEvaluator(m).run(None, feed)
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([feed[i.name] for i in m.graph.input])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, f"{device}: dtype {g.dtype}, expected {w.dtype}"
            assert g.shape == w.shape, f"{device}: shape {g.shape}, expected {w.shape}"
            np.testing.assert_array_equal(g, w, err_msg=f"on {device}")


def refused(m, match):
    with pytest.raises(ampx.ModelError, match=match):
        ampx.backend.prepare(m, "cpu_ref:0")


# ties (x / scale = k + 0.5 rounds to even), both ends past every range
TIES = np.array([-1e9, -70000.5, -300.5, -129.5, -128.5, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5,
                 126.5, 127.5, 254.5, 255.5, 32767.5, 65535.5, 1e9], np.float32)


@pytest.mark.parametrize("zp", [np.uint8(3), np.int8(-4), np.uint16(7), np.int16(-9), None])
@pytest.mark.parametrize("opset", [13, 21])
def test_quantize_per_tensor_ties_and_saturation(zp, opset):
    if opset < 21 and zp is not None and zp.dtype.itemsize == 2:
        pytest.skip("16-bit types from opset 21")
    feed = {"x": TIES, "s": np.array(1.0, np.float32)}
    if zp is not None:
        feed["z"] = np.array(zp)
    check(model("QuantizeLinear", feed, opset=opset), feed)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_quantize_infinities_saturate(dtype):
    # ONNX saturates; its reference casts inf to int32 first (undefined in C,
    # garbage in NumPy), so the expectation is written here.
    feed = {"x": np.array([np.inf, -np.inf], np.float32), "s": np.array(1.0, np.float32),
            "z": np.array(0, dtype)}
    info = np.iinfo(dtype)
    check(model("QuantizeLinear", feed), feed, [np.array([info.max, info.min], dtype)])


@pytest.mark.parametrize("out", [TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16])
def test_quantize_output_dtype_without_zero_point(out):
    feed = {"x": TIES * 3, "s": np.array(3.0, np.float32)}
    check(model("QuantizeLinear", feed, output_dtype=out), feed)


def test_quantize_per_axis_negative_axis():
    x = np.random.default_rng(1).uniform(-300, 300, (2, 3, 4)).astype(np.float32)
    feed = {"x": x, "s": np.array([0.5, 2.0, 3.0, 1.5], np.float32),
            "z": np.array([0, 10, -10, 127], np.int8)}
    check(model("QuantizeLinear", feed, axis=-1), feed)


@pytest.mark.parametrize("block", [2, 3])  # 3: a partial last block of 5
def test_quantize_and_dequantize_blocked(block):
    rng = np.random.default_rng(2)
    x = rng.uniform(-100, 100, (3, 5)).astype(np.float32)
    nb = -(-5 // block)
    feed = {"x": x, "s": rng.uniform(0.5, 2, (3, nb)).astype(np.float32),
            "z": rng.integers(0, 255, (3, nb)).astype(np.uint8)}
    check(model("QuantizeLinear", feed, axis=1, block_size=block), feed)
    q = rng.integers(0, 255, (3, 5)).astype(np.uint8)
    feed = {"x": q, "s": feed["s"], "z": feed["z"]}
    check(model("DequantizeLinear", feed, axis=-1, block_size=block), feed)


def test_quantize_f16_divides_in_f16():
    # 3002 / 3 is 1000.67, 1000.5 in f16 (spacing 0.5 there), which rounds
    # to even: 1000 (f32's quotient would give 1001). ONNX's reference divides
    # in the scale's type.
    x = np.array([3002, -3002, 0.3, 1000.7], np.float16)
    feed = {"x": x, "s": np.array(3.0, np.float16), "z": np.array(0, np.int16)}
    assert ReferenceEvaluator(model("QuantizeLinear", feed)).run(None, feed)[0][0] == 1000
    check(model("QuantizeLinear", feed), feed)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32])
def test_dequantize_per_axis_every_type(dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.min, 0, info.max], [1, info.max, info.min]], dtype)
    feed = {"x": x, "s": np.array([0.5, 0.25], np.float32)}
    if dtype != np.int32:
        feed["z"] = np.array([info.max, info.min], dtype)
    check(model("DequantizeLinear", feed, axis=0), feed)


def test_dequantize_f16_scale_gives_f16():
    feed = {"x": np.arange(0, 250, 10, dtype=np.uint8), "s": np.array(0.1, np.float16),
            "z": np.array(128, np.uint8)}
    check(model("DequantizeLinear", feed, opset=19), feed)


@pytest.mark.parametrize("x", [np.zeros(4, np.float32), np.array([1, 2, 3], np.float32),
                               np.array([-3, -1.5], np.float32),
                               np.array([-1.2, 0.0, 0.3, 5.5, 100], np.float32)])
def test_dynamic_quantize(x):
    feed = {"x": x}
    check(model("DynamicQuantizeLinear", feed, opset=11, n_out=3), feed)


def _int_matrix(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_matmul_integer_extremes_and_per_column_zero_point(dtype):
    rng = np.random.default_rng(3)
    a = _int_matrix(rng, dtype, (2, 4, 258))
    b = _int_matrix(rng, dtype, (258, 3))
    info = np.iinfo(dtype)
    a[0, 0, :] = info.min  # the largest products: 258 · 255²  < 2^24
    b[:, 0] = info.max
    feed = {"a": a, "b": b, "az": np.array(info.max, dtype),
            "bz": np.array([info.min, 0, 1], dtype)}
    check(model("MatMulInteger", feed, opset=10), feed)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("scale", [np.float32, np.float16])
def test_qlinear_matmul_saturates_and_rounds(dtype, scale):
    rng = np.random.default_rng(4)
    a, b = _int_matrix(rng, dtype, (3, 16)), _int_matrix(rng, dtype, (16, 5))
    feed = {"a": a, "as": np.array(0.05, scale), "az": np.array(1, dtype), "b": b,
            "bs": np.array([0.01, 0.02, 0.5, 1, 0.003], scale),
            "bz": np.array([0, 1, 2, 3, 4], dtype),
            "ys": np.array(0.25, scale), "yz": np.array(-3 if dtype == np.int8 else 100, dtype)}
    check(model("QLinearMatMul", feed, opset=21), feed)


def test_conv_integer_per_channel_zero_point_and_padding():
    rng = np.random.default_rng(5)
    x = _int_matrix(rng, np.uint8, (1, 2, 5, 5))
    w = _int_matrix(rng, np.uint8, (3, 2, 3, 3))
    feed = {"x": x, "w": w, "xz": np.array(200, np.uint8),
            "wz": np.array([0, 128, 255], np.uint8)}
    check(model("ConvInteger", feed, opset=10, pads=[1, 1, 1, 1], strides=[2, 1]), feed)


def test_qlinear_conv_per_channel_with_bias():
    rng = np.random.default_rng(6)
    x = _int_matrix(rng, np.int8, (1, 2, 4, 4))
    w = _int_matrix(rng, np.int8, (3, 2, 2, 2))
    feed = {"x": x, "xs": np.array(0.02, np.float32), "xz": np.array(-5, np.int8), "w": w,
            "ws": np.array([0.01, 0.1, 0.003], np.float32), "wz": np.array([0, 0, 0], np.int8),
            "ys": np.array(0.07, np.float32), "yz": np.array(3, np.int8),
            "b": np.array([-1000, 0, 5000], np.int32)}
    check(model("QLinearConv", feed, opset=10, pads=[0, 1, 0, 1]), feed)


def test_refusals_are_one_line():
    x = {"x": np.zeros(4, np.float32), "s": np.array(1, np.float32)}
    refused(model("QuantizeLinear", x, output_dtype=TensorProto.FLOAT8E4M3FN), "output_dtype")
    refused(model("QuantizeLinear", x, output_dtype=TensorProto.INT32), "i32")
    bad = {"x": np.zeros((2, 3), np.float32), "s": np.ones(4, np.float32)}
    refused(model("QuantizeLinear", bad, axis=1), "y_scale has shape")
    blocked = {"x": np.zeros((2, 5), np.float32), "s": np.ones((2, 2), np.float32)}
    refused(model("QuantizeLinear", blocked, axis=1, block_size=2), "blocked")
    refused(model("QuantizeLinear", blocked, axis=1, block_size=-1), "block_size")
    huge = {"x": np.zeros((2, 5), np.float32), "s": np.ones((2, 1), np.float32)}
    refused(model("QuantizeLinear", huge, axis=1, block_size=2**63 - 1), "y_scale")
    f = {"x": np.zeros(3, np.float32), "s": np.array(1, np.float32)}
    refused(model("DequantizeLinear", f), "x is f32")


def test_o3_plan_keeps_the_integer_arithmetic_f32(tmp_path):
    """A 16-bit MatMul would round 258 · 255² sums to 11 bits; the planner
    keeps every node of a quantization op f32 at O2 and O3."""
    rng = np.random.default_rng(7)
    feed = {"a": _int_matrix(rng, np.uint8, (4, 64)), "as": np.array(0.1, np.float32),
            "az": np.array(3, np.uint8), "b": _int_matrix(rng, np.uint8, (64, 4)),
            "bs": np.array(0.1, np.float32), "bz": np.array(5, np.uint8),
            "ys": np.array(20.0, np.float32), "yz": np.array(7, np.uint8)}
    m = model("QLinearMatMul", feed, opset=10)
    path = tmp_path / "q.onnx"
    path.write_bytes(m.SerializeToString())
    sess = ampx.Session(devices="cpu_ref:0")
    for amp in ("O2", "O3"):
        plan = sess.plan(str(path), amp=amp, dtype="f16")
        floats = [n for n in plan.nodes if n.op not in ("Cast",) and n.reason != "not-float"]
        assert floats, plan
        for n in floats:
            assert (n.intended, n.effective, n.reason) == ("f32", "f32", "integer-exact"), str(n)


def test_an_exported_plan_keeps_the_integer_arithmetic_f32_on_reimport(tmp_path):
    """`ampx export` writes the integer-exact marks into the model's
    metadata (model_metadata.hpp): the exported O0 model, planned again at
    O3, keeps the MatMul f32, and runs bit for bit as the original."""
    rng = np.random.default_rng(11)
    feed = {"a": _int_matrix(rng, np.uint8, (4, 64)), "as": np.array(0.1, np.float32),
            "az": np.array(3, np.uint8), "b": _int_matrix(rng, np.uint8, (64, 4)),
            "bs": np.array(0.1, np.float32), "bz": np.array(5, np.uint8),
            "ys": np.array(20.0, np.float32), "yz": np.array(7, np.uint8)}
    src, out = tmp_path / "q.onnx", tmp_path / "exported.onnx"
    src.write_bytes(model("QLinearMatMul", feed, opset=10).SerializeToString())
    sess = ampx.Session(devices="cpu_ref:0")
    sess.plan(str(src), amp="O0").export(str(out))
    plan = sess.plan(str(out), amp="O3", dtype="f16")
    matmuls = [n for n in plan.nodes if n.op == "MatMul"]
    assert matmuls, plan
    for n in matmuls:
        assert (n.effective, n.reason) == ("f32", "integer-exact"), str(n)
    want = ReferenceEvaluator(model("QLinearMatMul", feed, opset=10)).run(None, feed)[0]
    got = sess.compile(plan).run(feed)
    np.testing.assert_array_equal(list(got.values())[0], want)


def test_matmul_integer_per_row_zero_point():
    # The spec's per-row a_zero_point ([M]: one per row of A); ONNX's reference
    # broadcasts it along K instead (an error for M != K), so the expectation
    # is written here.
    rng = np.random.default_rng(8)
    a, b = _int_matrix(rng, np.int8, (3, 4)), _int_matrix(rng, np.int8, (4, 2))
    az = np.array([1, -128, 127], np.int8)
    feed = {"a": a, "b": b, "az": az}
    want = (a.astype(np.int32) - az.astype(np.int32)[:, None]) @ b.astype(np.int32)
    check(model("MatMulInteger", feed, opset=10), feed, [want])
