"""DeformConv (frontend/onnx/src/onnx_deform_conv.cpp: GridSample + MatMul
composed at import) against ONNX's reference on random shapes, every
attribute off its default, offsets that reach past X's border (zeros
there), and the refusals."""

from __future__ import annotations

import os

import numpy as np
import pytest

from test_composed_ops import check, model, refused


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))

# (N, C, H, W, oc, kh, kw, strides, pads, dilations, group, offset_group, mask, bias)
CASES = [
    (1, 1, 3, 3, 1, 2, 2, [1, 1], [0, 0, 0, 0], [1, 1], 1, 1, False, False),
    (2, 4, 5, 6, 6, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2, 2, True, True),
    (1, 6, 7, 5, 4, 3, 2, [2, 1], [1, 0, 2, 1], [1, 2], 2, 3, True, False),
    (2, 3, 6, 6, 3, 2, 3, [1, 2], [0, 1, 1, 0], [2, 1], 3, 1, False, True),
    (1, 4, 4, 9, 8, 1, 3, [3, 2], [2, 2, 2, 2], [1, 3], 4, 4, True, True),
    (1, 2, 2, 3, 2, 2, 2, [1, 1], [1, 1, 1, 1], [1, 1], 1, 2, True, True),
]


def out_dim(i, k, s, p0, p1, d):
    return (i + p0 + p1 - ((k - 1) * d + 1)) // s + 1


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("opset", [19, 22])
def test_deform_conv_random(case, opset):
    n, c, h, w, oc, kh, kw, strides, pads, dil, group, og, with_mask, with_bias = case
    rng = np.random.default_rng(CASES.index(case) * 100 + opset)
    oh = out_dim(h, kh, strides[0], pads[0], pads[2], dil[0])
    ow = out_dim(w, kw, strides[1], pads[1], pads[3], dil[1])
    feed = {
        "X": rng.standard_normal((n, c, h, w)).astype(np.float32),
        "W": rng.standard_normal((oc, c // group, kh, kw)).astype(np.float32),
        # up to 2.5 pixels either way: some taps land past the border
        "offset": (rng.uniform(-2.5, 2.5, (n, og * kh * kw * 2, oh, ow))).astype(np.float32),
    }
    names = ["X", "W", "offset"]
    if with_bias:
        feed["B"] = rng.standard_normal(oc).astype(np.float32)
        names.append("B")
    elif with_mask:
        names.append("")
    if with_mask:
        feed["mask"] = rng.uniform(0, 1, (n, og * kh * kw, oh, ow)).astype(np.float32)
        names.append("mask")
    m = model("DeformConv", feed, opset=opset, kernel_shape=[kh, kw], strides=strides, pads=pads,
              dilations=dil, group=group, offset_group=og)
    m.graph.node[0].input[:] = names
    check(m, feed, rtol=1e-4, atol=1e-5)


def test_deform_conv_integral_offsets_are_a_shifted_conv():
    """Offsets of whole pixels: exact samples (no interpolation), zeros past
    the border."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 1, 1), np.float32)
    off = np.zeros((1, 2, 4, 4), np.float32)
    off[0, 1] = 1.0  # every tap one pixel right
    m = model("DeformConv", {"X": x, "W": w, "offset": off}, opset=19)
    want = np.zeros_like(x)
    want[..., :3] = x[..., 1:]
    check(m, {"X": x, "W": w, "offset": off}, want=[want])


def test_deform_conv_refusals():
    x3 = np.zeros((1, 1, 5), np.float32)
    m = model("DeformConv", {"X": x3, "W": np.zeros((1, 1, 2), np.float32),
                             "offset": np.zeros((1, 2, 4), np.float32)}, opset=19)
    refused(m, "only 2-D DeformConv")
    x = np.zeros((1, 2, 4, 4), np.float32)
    m = model("DeformConv", {"X": x, "W": np.zeros((1, 2, 2, 2), np.float32),
                             "offset": np.zeros((1, 6, 3, 3), np.float32)}, opset=19)
    refused(m, "offset must be")
    m = model("DeformConv", {"X": x, "W": np.zeros((1, 2, 2, 2), np.float32),
                             "offset": np.zeros((1, 8, 3, 3), np.float32)}, opset=19,
              offset_group=3)
    refused(m, "offset_group")
    m = model("DeformConv", {"X": x, "W": np.zeros((1, 2, 2, 2), np.float32),
                             "offset": np.zeros((1, 8, 3, 3), np.float32)}, opset=19,
              strides=[0, 1])
    refused(m, "strides")


def _bilinear(img, y, x):
    h, w = img.shape
    y0, x0, s = int(np.floor(y)), int(np.floor(x)), 0.0
    for yy in (y0, y0 + 1):
        for xx in (x0, x0 + 1):
            if 0 <= yy < h and 0 <= xx < w:
                s += img[yy, xx] * (1 - abs(y - yy)) * (1 - abs(x - xx))
    return s


def test_deform_conv_height_one():
    """X of height 1: ONNX's reference divides by H - 1 (NaN, then it
    raises); numpy's direct sum of the bilinear samples instead."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 1, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 1, 2)).astype(np.float32)
    off = rng.uniform(-1, 1, (1, 4, 1, 3)).astype(np.float32)
    o = off.reshape(2, 2, 3)  # [tap, (y, x), ow]
    want = np.zeros((1, 2, 1, 3), np.float32)
    for oc in range(2):
        for j in range(3):
            want[0, oc, 0, j] = sum(w[oc, ic, 0, t] * _bilinear(x[0, ic], o[t, 0, j], j + t + o[t, 1, j])
                                    for ic in range(2) for t in range(2))
    feed = {"X": x, "W": w, "offset": off}
    check(model("DeformConv", feed, opset=22), feed, want=[want], rtol=1e-5, atol=1e-6)
