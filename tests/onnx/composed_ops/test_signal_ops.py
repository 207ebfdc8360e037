"""The signal-processing ops (frontend/onnx/src/onnx_signal.cpp): the
windows and MelWeightMatrix as constants computed at import, DFT as a
MatMul with a constant DFT matrix, STFT as frames times the window into
that DFT. Checked against numpy in float64 (np.fft on complex128: the
node suite's own expectations come from numpy's single-precision FFT) and
against ONNX's reference for the windows and the mel matrix, on the
forms the node suite leaves out: other axes and ranks, dft_length shorter
and longer than the signal, odd lengths, complex onesided, f16, graph
inputs for the sizes, and the refusals."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32}


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def model(op, inputs, opset=20, initializers=(), **attrs):
    """A one-node model; `inputs` maps names to arrays (graph inputs), ""
    to a skipped optional input."""
    ins = [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape)
           for k, v in inputs.items() if k]
    names = list(inputs) + [t.name for t in initializers]
    out = helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", ins, [out], initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def run(m, feed, device):
    rep = ampx.backend.prepare(m, device)
    return rep.run([feed[i.name] for i in m.graph.input])[0]


def check(m, feed, want, rtol=1e-5, atol=1e-4):
    for device in DEVICES:
        got = run(m, feed, device)
        assert got.dtype == want.dtype, f"{device}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"{device}: shape {got.shape}, expected {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"on {device}")


def refused(m, match, feed=None):
    with pytest.raises(ampx.ModelError, match=match):
        rep = ampx.backend.prepare(m, "cpu_ref:0")
        if feed is not None:
            rep.run([feed[i.name] for i in m.graph.input])


def as_pairs(c):
    """A complex array as ONNX's [..., 2] real/imaginary pairs."""
    return np.stack([c.real, c.imag], axis=-1)


def complex_of(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def signal(shape, complex_=False, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((*shape, 2 if complex_ else 1)).astype(np.float32)


def numpy_dft(x, axis, length, inverse, onesided):
    """float64 numpy: what each form of DFT computes."""
    z = complex_of(x.astype(np.float64))
    if inverse and onesided:
        return np.fft.irfft(z, n=length, axis=axis)[..., None]
    y = (np.fft.ifft if inverse else np.fft.fft)(z, n=length, axis=axis)
    if onesided:
        y = np.take(y, np.arange(length // 2 + 1), axis=axis)
    return as_pairs(y)


def dft(x, opset, axis, length=None, **attrs):
    """A DFT model in `opset`'s form (axis an attribute before 20, input 2 from 20)."""
    names = ["x", "len" if length is not None else "", "axis" if opset >= 20 else ""]
    while names and names[-1] == "":
        names.pop()
    inits = []
    if length is not None:
        inits.append(helper.make_tensor("len", TensorProto.INT64, [], [length]))
    if opset >= 20:
        inits.append(helper.make_tensor("axis", TensorProto.INT64, [], [axis]))
    else:
        attrs["axis"] = axis
    ins = [helper.make_tensor_value_info("x", NP_TO_ONNX[x.dtype], x.shape)]
    out = helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)
    node = helper.make_node("DFT", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", ins, [out], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


# --- DFT ------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("axis,length", [(1, None), (0, None), (-2, None), (1, 5), (1, 12),
                                         (2, 7)])
def test_dft_forms(opset, complex_, inverse, axis, length):
    x = signal((3, 9, 4), complex_)
    rank = x.ndim
    a = axis % rank
    n = length or x.shape[a]
    want = numpy_dft(x, a, n, bool(inverse), False).astype(np.float32)
    check(dft(x, opset, axis, length, inverse=inverse), {"x": x}, want)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("length", [None, 7, 8, 16])
def test_dft_onesided(complex_, length):
    x = signal((2, 8, 3), complex_, seed=1)
    n = length or 8
    want = numpy_dft(x, 1, n, False, True).astype(np.float32)
    check(dft(x, 20, 1, length, onesided=1), {"x": x}, want)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("bins,length", [(6, None), (6, 10), (6, 11), (4, 12), (9, 8)])
def test_irfft(opset, bins, length):
    # numpy's irfft: bins past length/2 + 1 unused, the imaginary parts of
    # bin 0 and the even length's Nyquist bin ignored (they are not zero here).
    x = signal((2, bins, 3), True, seed=2)
    n = length or 2 * (bins - 1)
    want = numpy_dft(x, 1, n, True, True).astype(np.float32)
    check(dft(x, opset, 1, length, inverse=1, onesided=1), {"x": x}, want)


def test_dft_round_trip_rank2():
    x = signal((16,), True, seed=3)
    (y,) = [run(dft(x, 20, 0), {"x": x}, "cpu_ref:0")]
    back = run(dft(y, 20, 0, inverse=1), {"x": y}, "cpu_ref:0")
    np.testing.assert_allclose(back, x, atol=1e-5)


def test_dft_float16():
    x = signal((2, 10, 3), seed=4).astype(np.float16)
    want = numpy_dft(x, 1, 10, False, False).astype(np.float16)
    check(dft(x, 20, 1), {"x": x}, want, rtol=2e-3, atol=2e-2)


def test_dft_axis_from_graph_input():
    # axis given as a graph input: imported for its value at the first run.
    x = signal((4, 6, 5))
    m = model("DFT", {"x": x, "": None, "axis": np.array(1, np.int64)})
    m.graph.node[0].input[:] = ["x", "", "axis"]
    for axis in (1, 2, 0):
        want = numpy_dft(x, axis, x.shape[axis], False, False).astype(np.float32)
        np.testing.assert_allclose(run(m, {"x": x, "axis": np.array(axis, np.int64)}, "cpu_ref:0"),
                                   want, rtol=1e-5, atol=1e-4)


def test_dft_refusals():
    x = signal((3, 4))
    refused(dft(x, 20, 2), "last dimension")
    refused(dft(x, 20, 3), "out of range")
    refused(dft(x, 20, 1, 0), "dft_length is 0")
    bad = np.zeros((3, 4, 3), np.float32)
    refused(dft(bad, 20, 1), "1 \\(real\\) or 2 \\(complex\\)")
    refused(dft(x, 17, 1, inverse=2), "'inverse' must be 0 or 1")
    refused(dft(x, 20, 1, 1 << 40), "DFT matrix")


# --- STFT -----------------------------------------------------------------------

def numpy_stft(x, step, window, frame, onesided):
    z = complex_of(x.astype(np.float64))
    frames = 1 + (z.shape[1] - frame) // step
    seg = np.stack([z[:, f * step:f * step + frame] for f in range(frames)], axis=1)
    if window is not None:
        seg = seg * window.astype(np.float64)
    y = np.fft.fft(seg, axis=2)
    if onesided:
        y = y[:, :, :frame // 2 + 1]
    return as_pairs(y)


@pytest.mark.parametrize("complex_,onesided", [(False, 1), (False, 0), (True, 0), (True, 1)])
@pytest.mark.parametrize("step,frame,with_window", [(8, 16, True), (5, 12, False), (3, 7, True),
                                                    (40, 40, False)])
def test_stft(complex_, onesided, step, frame, with_window):
    x = signal((2, 40), complex_, seed=5)
    window = np.hanning(frame).astype(np.float32) if with_window else None
    inputs = {"x": x, "step": np.array(step, np.int64)}
    if with_window:
        inputs["w"] = window
    else:
        inputs[""] = None
        inputs["fl"] = np.array(frame, np.int64)
    m = model("STFT", inputs, opset=17, onesided=onesided)
    feed = {k: v for k, v in inputs.items() if k}
    want = numpy_stft(x, step, window, frame, onesided).astype(np.float32)
    check(m, feed, want)


def test_stft_refusals():
    x = signal((1, 16))
    step = np.array(4, np.int64)
    m = model("STFT", {"x": x, "step": step, "": None, "fl": np.array(17, np.int64)}, opset=17)
    refused(m, "frame_length 17", {"x": x, "step": step, "fl": np.array(17, np.int64)})
    m = model("STFT", {"x": x, "step": np.array(0, np.int64)}, opset=17)
    refused(m, "frame_step is 0", {"x": x, "step": np.array(0, np.int64)})


# --- windows and MelWeightMatrix ---------------------------------------------------

def reference(m, feed):
    return ReferenceEvaluator(m).run(None, feed)[0]


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size", [2, 7, 10, 64])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16])
def test_windows(op, periodic, size, dtype):
    # The size a graph input: the window is built for its value at the first run.
    feed = {"n": np.array(size, np.int32)}
    m = model(op, feed, opset=17, periodic=periodic, output_datatype=dtype)
    # Against the reference's float64 window rounded once: for f16 the
    # reference's own arithmetic runs in f16 (its arange is of that dtype),
    # 1e-3 off; ampx rounds the float64 values once.
    want64 = reference(model(op, feed, opset=17, periodic=periodic,
                             output_datatype=TensorProto.DOUBLE), feed)
    want = want64.astype(helper.tensor_dtype_to_np_dtype(dtype))
    check(m, feed, want, rtol=1e-6, atol=1e-7)


def test_window_size_one_symmetric_is_nan():
    feed = {"n": np.array(1, np.int64)}
    got = run(model("HannWindow", feed, opset=17, periodic=0), feed, "cpu_ref:0")
    assert got.shape == (1,) and np.isnan(got[0])


def test_window_refusals():
    feed = {"n": np.array(-1, np.int64)}
    refused(model("HannWindow", feed, opset=17), "size is -1", feed)
    feed = {"n": np.array(1 << 40, np.int64)}
    refused(model("HammingWindow", feed, opset=17), "the window", feed)


def test_window_size_unknown_refused():
    # A size the importer cannot know (computed from a 100-element input):
    # refused with the cure, not guessed.
    x = np.ones(100, np.float32)
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100])]
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Cast", ["s"], ["n"], to=TensorProto.INT64),
             helper.make_node("HannWindow", ["n"], ["y"])]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph(nodes, "g", ins, [out]),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    refused(m, "size", {"x": x})


@pytest.mark.parametrize("bins,length,rate,lo,hi", [(8, 16, 8192, 0.0, 4096.0),
                                                    (10, 64, 16000, 20.0, 8000.0),
                                                    (3, 9, 100, 10.0, 45.0),
                                                    (40, 512, 16000, 0.0, 8000.0)])
def test_mel_weight_matrix(bins, length, rate, lo, hi):
    feed = {"b": np.array(bins, np.int32), "l": np.array(length, np.int32),
            "r": np.array(rate, np.int32), "lo": np.array(lo, np.float32),
            "hi": np.array(hi, np.float32)}
    m = model("MelWeightMatrix", feed, opset=17)
    check(m, feed, reference(m, feed), rtol=0, atol=0)


def test_mel_weight_matrix_edge_past_nyquist_refused():
    feed = {"b": np.array(4, np.int32), "l": np.array(16, np.int32),
            "r": np.array(1000, np.int32), "lo": np.array(0, np.float32),
            "hi": np.array(4000, np.float32)}
    refused(model("MelWeightMatrix", feed, opset=17), "outside", feed)
