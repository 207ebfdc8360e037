"""The ONNX ops the importer composes whose GEMM the default black list
keeps f32 (amp::black_listed_origin, docs/PLANNER.md): DFT and STFT (PyTorch
autocast keeps fft_* in f32; a long signal's DC bin passes f16's 65504) and
AffineGrid (it makes GridSample's coordinates). O2 and auto keep their
MatMul f32, O3 intends it 16-bit, and a custom black list replaces the
default one."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import ampx


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


def _model(node, inputs, inits, opset):
    ins = [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in inputs.items()]
    out = helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)
    g = helper.make_graph([node], "g", ins, [out], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def dft():
    return _model(helper.make_node("DFT", ["x"], ["y"], axis=1), {"x": [1, 64, 1]}, [], 17)


def stft():
    step = helper.make_tensor("step", TensorProto.INT64, [], [8])
    length = helper.make_tensor("len", TensorProto.INT64, [], [16])
    node = helper.make_node("STFT", ["x", "step", "", "len"], ["y"])
    return _model(node, {"x": [1, 64, 1]}, [step, length], 17)


def affine_grid():
    size = helper.make_tensor("size", TensorProto.INT64, [4], [1, 1, 8, 8])
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"])
    return _model(node, {"theta": [1, 2, 3]}, [size], 20)


@pytest.mark.parametrize("make", [dft, stft, affine_grid], ids=["DFT", "STFT", "AffineGrid"])
@pytest.mark.parametrize("amp, intended, reason", [
    ("O2", "f32", "black-list"), ("auto", "f32", "black-list"), ("O3", "f16", "policy")])
def test_the_composed_gemm_is_black_listed_below_o3(tmp_path, make, amp, intended, reason):
    path = tmp_path / "m.onnx"
    path.write_bytes(make().SerializeToString())
    plan = ampx.Session(devices="cpu_ref:0").plan(str(path), amp=amp, dtype="f16")
    (mm,) = [n for n in plan.nodes if n.op == "MatMul"]
    assert mm.intended == intended, str(mm)
    if amp != "O3":
        assert mm.reason == reason, str(mm)


def test_a_custom_black_list_replaces_the_origins(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(dft().SerializeToString())
    plan = ampx.Session(devices="cpu_ref:0").plan(str(path), amp="O2", dtype="f16",
                                                  black_list="LayerNorm")
    (mm,) = [n for n in plan.nodes if n.op == "MatMul"]
    assert mm.intended == "f16", str(mm)
