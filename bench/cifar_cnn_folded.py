#!/usr/bin/env python3
"""The CIFAR-shaped CNN with BatchNorm folded (conv biases), as ONNX.

conv3x3(3->32, bias), ReLU, max-pool 2; conv3x3(32->64, bias), ReLU,
max-pool 2; flatten, dense 512 (bias), ReLU, dense 10 (bias); inputs
[batch, 3, 32, 32] with a symbolic batch. Random weights (He init, seed 0):
for timing `ampx train` steps, not for accuracy. Needs the `onnx` package
(scripts/python-env.sh installs it).

    .venv/bin/python bench/cifar_cnn_folded.py /tmp/cifar_folded.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path: str) -> None:
    rng = np.random.default_rng(0)

    def weight(name, shape, fan_in):
        w = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        return numpy_helper.from_array(w.astype(np.float32), name)

    def bias(name, n):
        return numpy_helper.from_array((rng.standard_normal(n) * 0.01).astype(np.float32), name)

    inits = [weight("c1.w", (32, 3, 3, 3), 27), bias("c1.b", 32),
             weight("c2.w", (64, 32, 3, 3), 288), bias("c2.b", 64),
             weight("f1.w", (512, 4096), 4096), bias("f1.b", 512),
             weight("f2.w", (10, 512), 512), bias("f2.b", 10)]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    node = helper.make_node
    nodes = [node("Conv", ["x", "c1.w", "c1.b"], ["a1"], **conv), node("Relu", ["a1"], ["r1"]),
             node("MaxPool", ["r1"], ["p1"], **pool),
             node("Conv", ["p1", "c2.w", "c2.b"], ["a2"], **conv), node("Relu", ["a2"], ["r2"]),
             node("MaxPool", ["r2"], ["p2"], **pool),
             node("Flatten", ["p2"], ["f"], axis=1),
             node("Gemm", ["f", "f1.w", "f1.b"], ["d1"], transB=1), node("Relu", ["d1"], ["r3"]),
             node("Gemm", ["r3", "f2.w", "f2.b"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "cifar_cnn_folded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: cifar_cnn_folded.py OUT.onnx")
    main(sys.argv[1])
