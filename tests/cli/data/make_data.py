#!/usr/bin/env python3
"""Writes the CLI tests' small ONNX inputs (tests/cli/run_check_cli_test.cpp):
hardsigmoid_1d.onnx, one HardSigmoid node (alpha 0.5, beta 0.6, opset 17) on
a rank-1 float input x[3], and hardsigmoid_1d_x.npy = [-1, 0, 1] (ONNX
expects [0.1, 0.6, 1.0]); argmax.onnx, ArgMax over axis 1 of x[20, 7] (an
int64 output [20, 1]) and its inputs argmax_ties2.npy and argmax_ties3.npy
(below). Run with the .venv of scripts/python-env.sh."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))
node = helper.make_node("HardSigmoid", ["x"], ["y"], alpha=0.5, beta=0.6)
graph = helper.make_graph([node], "hardsigmoid_1d",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="ampx tests/cli/data/make_data.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "hardsigmoid_1d.onnx"))
np.save(os.path.join(here, "hardsigmoid_1d_x.npy"), np.array([-1, 0, 1], np.float32))

node = helper.make_node("ArgMax", ["x"], ["y"], axis=1)
graph = helper.make_graph([node], "argmax",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [20, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, [20, 1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="ampx tests/cli/data/make_data.py")
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "argmax.onnx"))

# ArgMax inputs whose first `ties` rows hold a near tie: 0.5 at column 1 and
# 0.5001 at column 4, the same value in f16 (spacing 2^-11 there), so an f16
# plan picks column 1 where f32 picks column 4; the other values are below
# 0.4. A 16-bit plan may differ in a tenth of the 20 rows (2).
rng = np.random.default_rng(36)
for ties in (2, 3):
    x = rng.uniform(-1.0, 0.4, size=(20, 7)).astype(np.float32)
    x[:ties, 1] = 0.5
    x[:ties, 4] = 0.5001
    np.save(os.path.join(here, f"argmax_ties{ties}.npy"), x)
