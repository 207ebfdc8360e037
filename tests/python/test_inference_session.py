"""ampx.InferenceSession has ONNX Runtime's shape: the same inputs and
outputs declared, and the same results within the f32 tolerance at O0 on
the test models (tests/onnx/make_models.py), including one whose shapes
come from its inputs' values (valueinputs), planned per value."""

import glob
import os

import numpy as np
import pytest

import ampx

TOL_O0 = 1e-4  # tests/support/tolerances.hpp, whole models at f32


def model_names(models_dir):
    names = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(models_dir, "*.onnx")))
    return [n for n in names if os.path.isdir(os.path.join(models_dir, n + ".inputs"))]


def feed_of(models_dir, name):
    return {os.path.basename(p)[:-4]: np.load(p)
            for p in sorted(glob.glob(os.path.join(models_dir, name + ".inputs", "*.npy")))}


def rel_error(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    denom = np.abs(ref).max()
    err = np.abs(got - ref).max()
    return err / denom if denom > 0 else err


def test_same_shape_and_results_as_onnxruntime(models_dir, run_devices):
    import onnxruntime as ort

    models = model_names(models_dir)
    assert len(models) >= 10 and "valueinputs" in models, models
    failures = []
    for name in models:
        path = os.path.join(models_dir, name + ".onnx")
        feed = feed_of(models_dir, name)
        try:
            ref_sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            ref = ref_sess.run(None, feed)
        except Exception:  # ORT lacks an op's form (LSTM layout=1): make_models.py's outputs
            ref_sess = None
            ref = [np.load(os.path.join(models_dir, name + ".expected", o + ".npy"))
                   for o in (a.name for a in ampx.InferenceSession(
                       path, providers=["cpu_ref:0"], amp="O0").get_outputs())]
        for device in run_devices:
            sess = ampx.InferenceSession(path, providers=[device], amp="O0")
            if ref_sess is not None:
                for mine, theirs in ((sess.get_inputs(), ref_sess.get_inputs()),
                                     (sess.get_outputs(), ref_sess.get_outputs())):
                    assert [(a.name, a.type, a.shape) for a in mine] == \
                        [(a.name, a.type, a.shape) for a in theirs], name
            got = sess.run(None, feed)
            assert len(got) == len(ref)
            for arg, g, r in zip(sess.get_outputs(), got, ref):
                if g.shape != r.shape:
                    failures.append(f"{name} on {device}: {arg.name} shape {g.shape} vs {r.shape}")
                elif np.issubdtype(r.dtype, np.integer) or r.dtype == np.bool_:
                    if not np.array_equal(g, r):
                        failures.append(f"{name} on {device}: {arg.name} differs")
                elif not rel_error(g, r) <= TOL_O0:
                    failures.append(f"{name} on {device}: {arg.name} error {rel_error(g, r):.2e}")
            # output_names picks and orders
            last = sess.get_outputs()[-1].name
            (only,) = sess.run([last], feed)
            assert np.array_equal(only, got[-1])
    assert not failures, "\n".join(failures)


def test_symbolic_batch_is_planned_per_shape(models_dir):
    path = os.path.join(models_dir, "mlp.onnx")
    sess = ampx.InferenceSession(path, providers=["cpu_ref:0"])
    assert sess.get_inputs()[0].shape[0] == "batch"
    assert sess.plan is None  # planned at the first run
    for batch in (1, 4, 1):
        x = np.ones((batch, 20), np.float32)
        (probs,) = sess.run(None, {"x": x})
        assert probs.shape == (batch, 6)
    stats = sess.cache_stats()
    assert (stats["runs"], stats["plans"], stats["cached"]) == (3, 2, 2), stats


def assert_matches_onnxruntime(path, sess, feed):
    import onnxruntime as ort

    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feed)
    got = sess.run(None, feed)
    for arg, g, r in zip(sess.get_outputs(), got, ref):
        assert g.shape == r.shape, (arg.name, g.shape, r.shape)
        if np.issubdtype(r.dtype, np.integer):
            assert np.array_equal(g, r), arg.name
        else:
            assert rel_error(g, r) <= TOL_O0, arg.name
    return got


def test_value_inputs_are_planned_per_value(models_dir, run_devices):
    """Resize's scales, TopK's k, ReduceSum's axes and a Reshape's shape fed
    as inputs: each new value is a new plan (the graph is built for it), a
    value seen before re-uses its plan, and the data input's values do not
    count."""
    path = os.path.join(models_dir, "valueinputs.onnx")
    first = feed_of(models_dir, "valueinputs")
    second = dict(first, scales=np.array([1, 1, 1.5, 2], np.float32), k=np.array([4], np.int64),
                  axes=np.array([0, 2], np.int64), shape=np.array([4, -1, 2], np.int64))
    for device in run_devices:
        sess = ampx.InferenceSession(path, providers=[device], amp="O0")
        assert sess.plan is None and sess.cache_stats()["plans"] == 0  # needs the values
        got = assert_matches_onnxruntime(path, sess, first)
        assert got[4].shape == (2, 4, 4)
        assert sess.cache_stats()["plans"] == 1
        got = assert_matches_onnxruntime(path, sess, second)
        assert got[1].shape == (1, 5) and got[4].shape == (4, 4, 2)
        stats = sess.cache_stats()
        assert (stats["runs"], stats["plans"], stats["cached"]) == (2, 2, 2), stats
        assert stats["last_plan_ms"] > 0 and stats["total_plan_ms"] >= stats["last_plan_ms"]
        # The first values again, with other data in x: the first plan.
        again = dict(first, x=-first["x"])
        assert_matches_onnxruntime(path, sess, again)
        stats = sess.cache_stats()
        assert (stats["runs"], stats["plans"], stats["evictions"]) == (3, 2, 0), stats
        assert sess.plan.devices[0] == device
        assert sess.get_providers() == sess.plan.devices


def test_fixed_shapes_are_planned_at_construction(models_dir, tmp_path):
    path = os.path.join(models_dir, "mobilenet.onnx")
    sess = ampx.InferenceSession(path, providers=["cpu_ref:0"], amp="O0")
    assert sess.plan is not None
    assert (sess.cache_stats()["runs"], sess.cache_stats()["plans"]) == (0, 1)
    sess.run(None, feed_of(models_dir, "mobilenet"))
    assert (sess.cache_stats()["runs"], sess.cache_stats()["plans"]) == (1, 1)
    # A model ampx refuses is refused by the constructor, as ONNX Runtime's.
    import onnx
    from onnx import helper as oh

    bad = oh.make_model(oh.make_graph(
        [oh.make_node("NoSuchOp", ["x"], ["y"])], "g",
        [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])]),
        opset_imports=[oh.make_opsetid("", 17)])
    with pytest.raises(ampx.ModelError, match="NoSuchOp"):
        ampx.InferenceSession(bad.SerializeToString(), providers=["cpu_ref:0"])


def test_provider_names(models_dir):
    path = os.path.join(models_dir, "mobilenet.onnx")
    sess = ampx.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert sess.get_providers()[0] in ("onednn:0", "cpu_ref:0")
    with pytest.raises(ValueError):
        ampx.InferenceSession(path, providers=["NoSuchProvider"])
    with pytest.raises(ampx.DeviceError):
        ampx.InferenceSession(path, providers=["nope:0"])
