"""NonMaxSuppression and Unique, whose output shapes depend on their inputs'
values: ampx evaluates them at import when those values are known (a
constant, a value that folds, or a small graph input bound per run), like
NonZero (docs/ONNX.md), and refuses them in one line otherwise. Compared
with ONNX's reference (onnx.reference) on ties, NaN, -0, flipped corners,
every attribute and dtype."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
             np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.uint64): TensorProto.UINT64, np.dtype(np.float64): TensorProto.DOUBLE}


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def model(op, feeds, consts, n_out, opset=21, **attrs):
    """One node; `feeds` become graph inputs, `consts` initializers (None: an
    absent optional input)."""
    ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], v.shape) for k, v in feeds.items()]
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items() if v is not None]
    names = [k if (k in feeds or consts.get(k) is not None) else ""
             for k in list(feeds) + list(consts)]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    node = helper.make_node(op, names, [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", ins, outs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feed, want=None):
    if want is None:
        want = ReferenceEvaluator(m).run(None, feed)
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([feed[i.name] for i in m.graph.input])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, f"{device}: {g.dtype}{g.shape}"
            np.testing.assert_array_equal(g, w, err_msg=f"on {device}")


# --- NonMaxSuppression -------------------------------------------------------

def nms(boxes, scores, max_out, iou, score=None, as_inputs=True, **attrs):
    consts = {"max_out": np.array([max_out], np.int64) if max_out is not None else None,
              "iou": np.array([iou], np.float32) if iou is not None else None,
              "score": np.array([score], np.float32) if score is not None else None}
    data = {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32)}
    if as_inputs:
        return model("NonMaxSuppression", data, consts, 1, **attrs), data
    return model("NonMaxSuppression", {}, {**data, **consts}, 1, **attrs), {}


BOXES = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9],
                   [0, 10, 1, 11], [1, 10.1, 0, 11.1], [0, 100, 1, 101]]], np.float32)


@pytest.mark.parametrize("max_out", [None, 0, 1, 2, 3, 100, -5])
@pytest.mark.parametrize("iou,score", [(0.5, None), (0.0, None), (0.5, 0.35), (1.0, 0.9),
                                       (0.3, -1.0)])
def test_nms(max_out, iou, score):
    scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], np.float32)
    # absent or negative max_output_boxes_per_class selects nothing (ONNX Runtime's
    # [0, 3]; ONNX's reference cannot run it)
    want = [np.zeros((0, 3), np.int64)] if max_out is None or max_out < 0 else None
    check(*nms(BOXES, scores, max_out, iou, score), want=want)


def test_nms_ties_keep_the_lower_index_first():
    # equal scores, disjoint boxes: the order is by index; identical boxes:
    # the lowest index survives
    boxes = np.array([[[0, 0, 1, 1]] * 4 + [[5, 5, 6, 6], [5, 5, 6, 6]]], np.float32)
    scores = np.full((1, 2, 6), 0.5, np.float32)
    scores[0, 1, 5] = 0.7
    check(*nms(boxes, scores, 10, 0.5))


@pytest.mark.parametrize("iou", [0.5, 1.0, 0.25])
def test_nms_iou_exactly_at_the_threshold_does_not_suppress(iou):
    # IoUs 1/2, 1 and 1/4 exactly: suppressed only above the threshold
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 2, 1], [0, 0, 1, 1], [0, 0, 4, 1]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    check(*nms(boxes, scores, 4, iou))


def test_nms_center_point_and_batches():
    rng = np.random.default_rng(3)
    boxes = rng.integers(0, 8, (2, 5, 4)).astype(np.float32)
    scores = rng.integers(0, 4, (2, 2, 5)).astype(np.float32) / 4
    for center in (0, 1):
        check(*nms(boxes, scores, 3, 0.2, 0.1, center_point_box=center))


def test_nms_degenerate_boxes_and_nan_scores():
    boxes = np.array([[[0, 0, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    check(*nms(boxes, scores, 4, 0.5))
    scores = np.array([[[0.9, np.nan, 0.7, 0.6]]], np.float32)
    check(*nms(boxes, scores, 4, 0.5, 0.5))  # NaN > threshold is false: not a candidate


def test_nms_from_initializers_many_boxes():
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 50, (1, 300, 2)).astype(np.float32)
    boxes = np.concatenate([xy, xy + rng.uniform(1, 10, (1, 300, 2)).astype(np.float32)], 2)
    scores = rng.uniform(0, 1, (1, 3, 300)).astype(np.float32)
    check(*nms(boxes, scores, 20, 0.4, 0.2, as_inputs=False))


def test_nms_refusals():
    m, _ = nms(BOXES, np.zeros((1, 1, 6), np.float32), 1, 0.5, center_point_box=2)
    with pytest.raises(ampx.ModelError, match="center_point_box must be 0 or 1, got 2"):
        ampx.backend.prepare(m, "cpu_ref:0")
    m, _ = nms(BOXES[:, :, :3], np.zeros((1, 1, 6), np.float32), 1, 0.5)
    with pytest.raises(ampx.ModelError, match=r"boxes must be \[batches, boxes, 4\]"):
        ampx.backend.prepare(m, "cpu_ref:0")


def test_nms_work_is_bounded():
    # 40,000 boxes kept up to 2^62 per class: 1.6e9 IoU tests, refused
    # before reading them (an untrusted model's constants)
    boxes = np.zeros((1, 40000, 4), np.float32)
    m, _ = nms(boxes, np.zeros((1, 1, 40000), np.float32), 2**62, 0.5, as_inputs=False)
    with pytest.raises(ampx.ModelError, match="too much to evaluate at import"):
        ampx.backend.prepare(m, "cpu_ref:0")
    m, _ = nms(BOXES, np.zeros((1, 1, 5), np.float32), 1, 0.5, as_inputs=False)
    with pytest.raises(ampx.ModelError, match=r"scores must be \[batches, classes, boxes\]"):
        ampx.backend.prepare(m, "cpu_ref:0")


def test_nms_float64_boxes_are_refused():
    # ONNX defines float32 boxes; 1e300 would not narrow to float32
    m = model("NonMaxSuppression", {}, {"boxes": np.full((1, 1, 4), 1e300),
                                        "scores": np.ones((1, 1, 1), np.float32)}, 1)
    with pytest.raises(ampx.ModelError, match=r"boxes .* must be float32 .*, got f"):
        ampx.backend.prepare(m, "cpu_ref:0")


def test_nms_of_run_time_boxes_is_refused():
    # boxes larger than a specialising input: computed at run time
    boxes = np.zeros((1, 20, 4), np.float32)
    m, feed = nms(boxes, np.zeros((1, 1, 20), np.float32), 1, 0.5)
    with pytest.raises(ampx.ModelError, match="boxes .* is computed at run time: NonMaxSuppres"):
        ampx.backend.prepare(m, "cpu_ref:0").run([feed["boxes"], feed["scores"]])


# --- Unique --------------------------------------------------------------------

def unique(x, n_out=4, as_input=True, **attrs):
    if as_input:
        return model("Unique", {"x": x}, {}, n_out, **attrs), {"x": x}
    return model("Unique", {}, {"x": x}, n_out, **attrs), {}


@pytest.mark.parametrize("sorted_", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8,
                                   np.uint64])
def test_unique_without_axis(sorted_, dtype):
    x = np.array([3, 1, 0, 2, 3, 1, 7, 0, 0, 5, 2, 127, 1], dtype)
    check(*unique(x, sorted=sorted_))


def test_unique_floats_minus_zero_and_wide_ints():
    check(*unique(np.array([0.0, -0.0, -1.5, 2.0, -1.5, 65504], np.float16)))
    big = np.array([2**62 + 1, 2**62, -2**62, 2**62 + 1], np.int64)
    check(*unique(big))
    check(*unique(np.array([2**64 - 1, 2**63, 2**64 - 1], np.uint64)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_unique_sorted_with_axis(axis):
    x = np.array([[[1, 0], [1, 0]], [[2, 3], [1, 0]], [[1, 0], [1, 0]]], np.float32)
    check(*unique(x, axis=axis, sorted=1))


def test_unique_unsorted_with_axis():
    # ONNX's reference takes Y along axis 0 whatever the axis (not the
    # spec): numpy.unique in first-occurrence order is the spec's answer.
    x = np.array([[2, 1, 2, 0], [5, 1, 5, 3]], np.int64)
    check(*unique(x, axis=1, sorted=0),
          want=[np.array([[2, 1, 0], [5, 1, 3]]), np.array([0, 1, 3]),
                np.array([0, 1, 0, 2]), np.array([2, 1, 1])])


def test_unique_large_initializer_and_y_only():
    x = np.random.default_rng(1).integers(-20, 20, (40, 30)).astype(np.int32)
    check(*unique(x, as_input=False))
    check(*unique(x, n_out=1, as_input=False, sorted=1))
    check(*unique(x, as_input=False, axis=0))


def test_empty_inputs():
    check(*unique(np.zeros((0,), np.float32), as_input=False))
    check(*unique(np.zeros((2, 0), np.int64), as_input=False, axis=0),
          want=[np.zeros((1, 0), np.int64), np.array([0]), np.array([0, 0]), np.array([2])])
    check(*unique(np.array(3.5, np.float32), as_input=False))
    boxes, scores = np.zeros((1, 0, 4), np.float32), np.zeros((1, 2, 0), np.float32)
    check(*nms(boxes, scores, 3, 0.5, as_inputs=False))


def test_unique_refusals():
    with pytest.raises(ampx.ModelError, match="axis 2 is out of range for rank 2"):
        ampx.backend.prepare(unique(np.zeros((2, 2), np.float32), as_input=False, axis=2)[0],
                              "cpu_ref:0")
    x = np.zeros(100, np.float32)  # too large to specialise on: run-time values
    m, feed = unique(x)
    with pytest.raises(ampx.ModelError, match="is computed at run time: Unique's output shape"):
        ampx.backend.prepare(m, "cpu_ref:0").run([feed["x"]])
