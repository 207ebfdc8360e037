"""ampx.devices()' per-op native dtypes (Device.native, Device.is_native):
the planner's own capability answers, so they are checked against plans, not
against one CPU's counts."""

import json
import os
import subprocess
import sys

import pytest

import ampx

_DTYPES = ("f32", "f16", "bf16")


def _by_id():
    return {d.id: d for d in ampx.devices()}


def _plans(sess, models=("builtin:cnn", "builtin:encoder", "builtin:mlp")):
    """O3 plans in both 16-bit dtypes; on cnn the flatten node is also forced
    16-bit (data movement: native on every CPU plugin, whatever the ISA)."""
    for dtype in ("f16", "bf16"):
        for model in models:
            force = ["flatten"] if model == "builtin:cnn" else []
            yield dtype, sess.plan(model, amp="O3", dtype=dtype, force_16bit=force)


def _compare(device, plans):
    """For every node the plan asked the device about in 16-bit: its answer
    (`device_16bit_support`) is `native` exactly when devices() lists that
    dtype for the op; a node running 16-bit is listed, a node kept f32 for
    `no-native-kernel` is not. Returns how many nodes were compared each way."""
    seen = {"native": 0, "not native": 0}
    for dtype, plan in plans:
        for n in plan.nodes:
            if n.op not in device.native or n.device_16bit_support is None:
                continue
            listed = device.is_native(n.op, dtype)
            assert listed == (n.device_16bit_support == "native"), (dtype, n)
            if n.effective == dtype:
                assert listed, (dtype, n)
            if n.reason == "no-native-kernel":
                assert not listed, (dtype, n)
            seen["native" if listed else "not native"] += 1
    return seen


def test_every_device_lists_f32_for_every_op_it_runs():
    devs = ampx.devices()
    assert devs
    ops = None
    for d in devs:
        assert not d.native_error, d
        assert d.native, d
        ops = ops or set(d.native)
        assert set(d.native) == ops, d.id  # the same cases are asked of every device
        for op, dtypes in d.native.items():
            assert isinstance(dtypes, tuple)
            assert list(dtypes) == [t for t in _DTYPES if t in dtypes], (d.id, op, dtypes)
            assert "f32" in dtypes, (d.id, op)
            assert d.is_native(op, "f32")
    assert "Conv2d" in ops and "MatMul" in ops


def test_same_listing_as_the_cli(cli):
    out = subprocess.run([cli, "devices", "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    cli_ref = next(d for d in json.loads(out)["devices"] if d["id"] == "cpu_ref:0")
    ref = _by_id()["cpu_ref:0"]
    assert {op: list(t) for op, t in ref.native.items()} == cli_ref["native"]


def test_cpu_ref_native_answers_are_the_planners():
    ref = _by_id()["cpu_ref:0"]
    seen = _compare(ref, _plans(ampx.Session(devices="cpu_ref:0")))
    # Both kinds of answer were compared: the forced 16-bit flatten (native)
    # and the compute nodes kept f32 (no native kernel).
    assert seen["native"] > 0 and seen["not native"] > 0, seen


_ONEDNN_SCRIPT = r"""
import json, sys, ampx
dev = {d.id: d for d in ampx.devices()}["onednn:0"]
sess = ampx.Session(devices="onednn:0")
plans = []
for dtype in ("f16", "bf16"):
    for model in ("builtin:cnn", "builtin:encoder", "builtin:mlp"):
        p = sess.plan(model, amp="O3", dtype=dtype)
        plans.append([dtype, [[n.op, n.effective, n.reason, n.device_16bit_support] for n in p.nodes]])
json.dump({"native": dev.native, "plans": plans}, sys.stdout)
"""


@pytest.mark.parametrize("isa", ["AVX2", None])
def test_onednn_native_answers_are_the_planners(device_ids, isa):
    """onednn's answers depend on the ISA oneDNN dispatches to (AVX2: the
    developers' and CI's machines, where oneDNN has no bf16 convolution), so
    they are compared with a plan in a child process started with that ISA."""
    if "onednn:0" not in device_ids:
        pytest.skip("onednn not built")
    env = dict(os.environ)
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    out = subprocess.run([sys.executable, "-c", _ONEDNN_SCRIPT], check=True, capture_output=True,
                         text=True, env=env).stdout
    got = json.loads(out)
    native = {op: tuple(t) for op, t in got["native"].items()}
    conv_nodes = 0
    for dtype, nodes in got["plans"]:
        for op, effective, reason, support in nodes:
            if op not in native or support is None:
                continue
            listed = dtype in native[op]
            assert listed == (support == "native"), (isa, dtype, op, support, native[op])
            if effective == dtype:
                assert listed, (isa, dtype, op)
            if reason == "no-native-kernel":
                assert not listed, (isa, dtype, op)
            conv_nodes += op == "Conv2d"
    assert conv_nodes > 0


def test_is_native_refuses_what_it_was_not_asked():
    ref = _by_id()["cpu_ref:0"]
    assert ref.is_native("Reshape", "bf16")  # data movement: exact in any dtype
    with pytest.raises(ValueError, match="'NoSuchOp'"):
        ref.is_native("NoSuchOp", "f32")
    with pytest.raises(ValueError, match="'f64'"):
        ref.is_native("Conv2d", "f64")
    with pytest.raises(TypeError):
        ref.is_native("Conv2d", 16)
    hash(ref)  # the dict field stays out of the frozen dataclass's hash
