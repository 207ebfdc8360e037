"""ONNX's backend node suite (onnx.backend.test.BackendTest: every node
test case of the pinned onnx wheel, built in memory from its case scripts)
on one backend, chosen with --backend (conftest.py): an ampx device id,
run through ampx.backend, or "onnxruntime", run through onnxruntime.backend
for the peer's count. Only ONNX's CPU variant of each case runs: the device
is the backend's choice.

Each case ends as one of three outcomes (conftest.py compares them with the
checked-in list, expected/<backend>.txt):
  pass         prepared, run, and every output within ONNX's tolerance
  unsupported  refused with the backend's own "not supported" error, at
               prepare or, for a model planned per input shape, at its
               first run (ampx: ModelError or DeviceError, one line naming
               what; ONNX Runtime: its NOT_IMPLEMENTED, FAIL, INVALID_GRAPH
               or INVALID_ARGUMENT at load, or an unreleased opset)
  fail         anything else: a wrong value, shape or type, a crash, or an
               error that is not a refusal"""

from __future__ import annotations

import os
import unittest
import warnings

import onnx.backend.test
from onnx.backend.base import Backend

warnings.filterwarnings("ignore", category=RuntimeWarning)  # the case scripts' own overflows

UNSUPPORTED = "unsupported: "


def _ampx_backend(device: str) -> type[Backend]:
    import ampx
    import ampx.backend

    refusals = (ampx.ModelError, ampx.DeviceError)

    class Rep:
        """A prepared model whose deferred plan (symbolic input dimensions
        are planned at the first run) may refuse too."""

        def __init__(self, rep):
            self.rep = rep

        def run(self, inputs, **kwargs):
            try:
                return self.rep.run(inputs, **kwargs)
            except refusals as e:
                raise unittest.SkipTest(UNSUPPORTED + str(e)) from None

    class Refusals(ampx.backend.AmpxBackend):
        """ampx.backend on DEVICE, its refusals reported as skips."""

        @classmethod
        def supports_device(cls, onnx_device: str) -> bool:
            return onnx_device == "CPU"

        @classmethod
        def prepare(cls, model, onnx_device="CPU", **kwargs):
            try:
                return Rep(super().prepare(model, device, **kwargs))
            except refusals as e:
                raise unittest.SkipTest(UNSUPPORTED + str(e)) from None

    return Refusals


def _onnxruntime_backend() -> type[Backend]:
    import onnxruntime.backend
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    # What ONNX Runtime raises when it refuses a model at load: an op,
    # type or form it does not implement, a graph it does not take.
    refusals = (ort_state.NotImplemented, ort_state.Fail, ort_state.InvalidGraph,
                ort_state.InvalidArgument)

    class Refusals(onnxruntime.backend.backend.OnnxRuntimeBackend):
        @classmethod
        def supports_device(cls, onnx_device: str) -> bool:
            return onnx_device == "CPU"

        @classmethod
        def prepare(cls, model, onnx_device=None, **kwargs):
            try:
                return super().prepare(model, onnx_device, **kwargs)
            except unittest.SkipTest as e:  # an unreleased opset
                raise unittest.SkipTest(UNSUPPORTED + str(e)) from None
            except refusals as e:
                raise unittest.SkipTest(UNSUPPORTED + str(e).splitlines()[0]) from None

    return Refusals


def _backend(name: str) -> type[Backend]:
    return _onnxruntime_backend() if name == "onnxruntime" else _ampx_backend(name)


_backend_test = onnx.backend.test.BackendTest(
    _backend(os.environ["AMPX_NODE_SUITE_BACKEND"]), __name__).include(r"_cpu$")
# The node cases only: the others (real models, PyTorch exports) download
# their data, and nothing here reaches the network.
OnnxBackendNodeModelTest = _backend_test.test_cases["OnnxBackendNodeModelTest"]
