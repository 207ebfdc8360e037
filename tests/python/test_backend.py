"""ampx.backend: ONNX's backend API (onnx.backend.base.Backend) over the
Session. Its outputs equal onnxruntime.backend's at O0 on the test models;
the device string and the keywords give the plans Session.plan gives; the
refusals raise ampx's errors. ONNX's whole node suite runs through it in
tests/onnx/node_suite."""

import os

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import ampx
import ampx.backend as backend
from onnx.backend.base import Backend

from test_inference_session import feed_of, model_names, rel_error

TOL_O0 = 1e-4  # tests/support/tolerances.hpp, whole models at f32


def relu_model(elem=onnx.TensorProto.FLOAT):
    node = oh.make_node("Relu", ["x"], ["y"])
    graph = oh.make_graph([node], "relu", [oh.make_tensor_value_info("x", elem, [2, 3])],
                          [oh.make_tensor_value_info("y", elem, [2, 3])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def matmul_model():
    w = oh.make_tensor("w", onnx.TensorProto.FLOAT, [64, 64],
                       np.random.default_rng(0).standard_normal(64 * 64).astype(np.float32))
    graph = oh.make_graph([oh.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [64, 64])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [64, 64])], [w])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def test_is_an_onnx_backend():
    assert issubclass(backend.AmpxBackend, Backend)
    for name in ("prepare", "run_model", "run_node", "supports_device", "is_compatible"):
        assert callable(getattr(backend, name))


def test_outputs_equal_onnxruntime_backend(models_dir, run_devices):
    import onnxruntime.backend as ort_backend

    compared = 0
    for name in model_names(models_dir):
        model = onnx.load(os.path.join(models_dir, name + ".onnx"))
        feed = feed_of(models_dir, name)
        inputs = [feed[i.name] for i in model.graph.input if i.name in feed]
        if len(inputs) != len(feed):
            continue
        try:
            ref = ort_backend.prepare(model, "CPU").run(inputs)
        except Exception:  # an op form ONNX Runtime lacks (make_models.py notes them)
            continue
        for device in run_devices:
            got = backend.prepare(model, device).run(inputs)
            assert len(got) == len(ref), (name, device)
            for g, r, out in zip(got, ref, model.graph.output):
                assert g.shape == r.shape and g.dtype == r.dtype, (name, device, out.name)
                assert rel_error(g, r) <= TOL_O0, (name, device, out.name)
                assert got[out.name] is g  # by name too, as ONNX's namedtupledict
        compared += 1
    assert compared >= 10


def test_inputs_as_list_dict_or_one_array():
    rep = backend.prepare(relu_model(), "cpu_ref:0")
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    want = np.maximum(x, 0)
    for given in ([x], {"x": x}, x):
        np.testing.assert_array_equal(rep.run(given)[0], want)
    np.testing.assert_array_equal(backend.run_model(relu_model(), [x], "cpu_ref:0").y, want)
    with pytest.raises(ValueError, match="1 input"):
        rep.run([x, x])


def test_run_node():
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    (y,) = backend.run_node(oh.make_node("Relu", ["x"], ["y"]), [x], "cpu_ref:0")
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    (s,) = backend.run_node(oh.make_node("Add", ["a", "b"], ["s"]), {"a": a, "b": a})
    np.testing.assert_array_equal(s, a + a)
    with pytest.raises(ValueError, match="2 input"):
        backend.run_node(oh.make_node("Add", ["a", "b"], ["s"]), [a])


def plan_rows(plan):
    return [(n.name, n.op, n.intended, n.effective, n.device) for n in plan.nodes]


def test_device_string_and_keywords_plan_as_session(device_ids, tmp_path):
    device = "onednn:0" if "onednn:0" in device_ids else "cpu_ref:0"
    path = tmp_path / "mm.onnx"
    onnx.save(matmul_model(), path)
    want = ampx.Session(devices=device, fallback=False).plan(str(path), amp="O3", dtype="bf16")
    by_string = backend.prepare(matmul_model(), f"{device};amp=O3;dtype=bf16")
    by_keywords = backend.prepare(matmul_model(), device, amp="O3", dtype="bf16")
    assert plan_rows(by_string.plan) == plan_rows(want) == plan_rows(by_keywords.plan)
    # The default is O0: what ONNX defines, in the model's types.
    assert {n.effective for n in backend.prepare(matmul_model(), device).plan.nodes} == {"f32"}
    # Keywords win over the device string.
    over = backend.prepare(matmul_model(), f"{device};amp=O3;dtype=bf16", amp="O0")
    assert {n.effective for n in over.plan.nodes} == {"f32"}


def test_cpu_is_onednn_where_present(device_ids):
    rep = backend.prepare(relu_model(), "CPU")
    want = "onednn:0" if "onednn:0" in device_ids else "cpu_ref:0"
    assert {n.device for n in rep.plan.nodes} == {want}


def test_supports_device(device_ids):
    assert backend.supports_device("CPU")
    assert backend.supports_device("cpu_ref:0")
    assert backend.supports_device("CUDA") == ("cuda:0" in device_ids)
    assert not backend.supports_device("nosuch:0")
    assert not backend.supports_device("TPU")


def test_refusals_raise_ampx_errors():
    x = np.zeros((2, 3), np.uint8)
    # The device answers no for an unsigned Neg, and the backend has no
    # fallback (as onnxruntime.backend): a DeviceError naming the node and
    # the device.
    with pytest.raises(ampx.DeviceError, match="cpu_ref:0"):
        backend.run_node(oh.make_node("Neg", ["a"], ["s"]), [x], "cpu_ref:0")
    unknown = oh.make_model(oh.make_graph(
        [oh.make_node("NoSuchOp", ["x"], ["y"])], "g",
        [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])]),
        opset_imports=[oh.make_opsetid("", 17)])
    with pytest.raises(ampx.ModelError, match="NoSuchOp"):
        backend.prepare(unknown, "cpu_ref:0")


def test_bad_arguments():
    with pytest.raises(ValueError, match="amp=O2;speed"):
        backend.prepare(relu_model(), "cpu_ref:0;amp=O2;speed=1")
    with pytest.raises(ValueError, match="fallback"):
        backend.prepare(relu_model(), "cpu_ref:0;fallback=maybe")
    with pytest.raises(TypeError, match="'colour'"):
        backend.prepare(relu_model(), "cpu_ref:0", colour="red")
    with pytest.raises(ValueError, match="device 'onednn'"):
        backend.prepare(relu_model(), "onednn")
    with pytest.raises(ampx.UsageError):
        backend.prepare(relu_model(), "cpu_ref:0;amp=O9")
