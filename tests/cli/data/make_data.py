#!/usr/bin/env python3
"""Writes the CLI tests' small ONNX inputs (tests/cli/run_check_cli_test.cpp):
hardsigmoid_1d.onnx, one HardSigmoid node (alpha 0.5, beta 0.6, opset 17) on
a rank-1 float input x[3], and hardsigmoid_1d_x.npy = [-1, 0, 1] (ONNX
expects [0.1, 0.6, 1.0]). Run with the .venv of scripts/python-env.sh."""
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
