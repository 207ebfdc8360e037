"""ampx.InferenceSession in place of onnxruntime.InferenceSession: one changed
import. Writes a small ONNX model with a symbolic batch, runs it through
both, and compares.

    python examples/python/onnxruntime_drop_in.py [DEVICE]   (default onednn:0 or cpu_ref:0)
"""

import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ampx
import onnxruntime

rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["z"]),
     helper.make_node("Relu", ["z"], ["y"])],
    "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])], [w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
path = os.path.join(tempfile.mkdtemp(), "tiny.onnx")
onnx.save(model, path)

devices = {d.id for d in ampx.devices()}
device = sys.argv[1] if len(sys.argv) > 1 else ("onednn:0" if "onednn:0" in devices else "cpu_ref:0")
x = rng.standard_normal((4, 16)).astype(np.float32)

ort = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
sess = ampx.InferenceSession(path, providers=[device], amp="O2", dtype="auto")
print([(i.name, i.type, i.shape) for i in sess.get_inputs()])
(ref,) = ort.run(None, {"x": x})
(got,) = sess.run(None, {"x": x})
print(f"{device}: max relative difference to ONNX Runtime {np.abs(got - ref).max() / np.abs(ref).max():.2e}")
print(sess.plan)
