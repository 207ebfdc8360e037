"""CompiledModel.run: the CLI's numbers, inputs read in place, profiles."""

import json
import os
import subprocess

import numpy as np
import pytest

import ampx


def cli_outputs(cli, model, device, inputs, work, db, *extra):
    args = [cli, "run", model, "--device", device, "--amp", "O2", "--dtype", "auto", "--iters", "1",
            "--warmup", "0", "--no-check", "--db", db, "--save-outputs", str(work), *extra]
    for name, arr in inputs.items():
        path = work.parent / f"{name}.npy"
        np.save(path, arr)
        args += ["--input", f"{name}={path}"]
    subprocess.run(args, check=True, capture_output=True, text=True)
    return {f[:-4]: np.load(os.path.join(work, f)) for f in os.listdir(work)}


@pytest.mark.parametrize("model", ["builtin:cnn", "builtin:mlp", "builtin:encoder"])
def test_outputs_match_cli_bitwise(cli, run_devices, tmp_path, model):
    for device in run_devices:
        sess = ampx.Session(devices=device, db=str(tmp_path / "py.db"))
        compiled = sess.compile(sess.plan(model, amp="O2", dtype="auto"))
        rng = np.random.default_rng(7)
        feed = {}
        for t in compiled.inputs:
            if t.dtype == "f32":
                feed[t.name] = rng.uniform(-1, 1, t.shape).astype(np.float32)
            else:
                feed[t.name] = rng.integers(0, 8, t.shape).astype(ampx._tensors.NUMPY_DTYPES[t.dtype])
        got = compiled.run(feed)
        work = tmp_path / f"cli-{device.replace(':', '_')}-{model.split(':')[1]}"
        ref = cli_outputs(cli, model, device, feed, work, str(tmp_path / "cli.db"))
        assert set(got) == {o.name for o in compiled.outputs}
        for name, arr in got.items():
            assert np.array_equal(arr, ref[name]), f"{model} on {device}: {name} differs from ampx run"


def test_inputs_read_in_place():
    sess = ampx.Session(devices="cpu_ref:0")
    compiled = sess.compile(sess.plan("builtin:cnn", amp="O0"))
    (t,) = compiled.inputs
    x = np.zeros(t.shape, np.float32)
    assert compiled._input_addresses({t.name: x}) == [x.ctypes.data]
    # Another dtype, or a strided view: converted once, so read elsewhere.
    x64 = np.zeros(t.shape, np.float64)
    assert compiled._input_addresses({t.name: x64}) != [x64.ctypes.data]
    wide = np.zeros(t.shape[:-1] + (t.shape[-1] * 2,), np.float32)
    strided = wide[..., ::2]
    assert not strided.flags.c_contiguous
    assert compiled._input_addresses({t.name: strided}) != [strided.ctypes.data]
    # and the run's results are the same either way
    a = compiled.run({t.name: np.ascontiguousarray(strided)})
    b = compiled.run({t.name: strided})
    for k in a:
        assert np.array_equal(a[k], b[k])


def test_profile_and_trace(tmp_path):
    sess = ampx.Session(devices="cpu_ref:0")
    compiled = sess.compile(sess.plan("builtin:cnn", amp="O2", dtype="f16"))
    (t,) = compiled.inputs
    feed = {t.name: np.ones(t.shape, np.float32)}
    plain = compiled.run(feed)
    outputs, per_node = compiled.run(feed, profile=True, runs=2)
    for k in plain:
        assert np.array_equal(plain[k], outputs[k])
    assert per_node["steps"] and per_node["ops"]
    assert all(s["measured_us"] >= 0 for s in per_node["steps"])
    trace = tmp_path / "trace.json"
    compiled.trace(trace, feed, runs=2)
    events = json.load(open(trace))["traceEvents"]
    assert any(e.get("ph") == "X" for e in events)
    stats = compiled.stats()
    assert stats["kernels"] > 0


def test_bf16_outputs(monkeypatch):
    from ampx import _tensors

    bits = np.array([0x3F80, 0xC000, 0x7FC0], np.uint16)  # 1.0, -2.0, NaN
    as_f32 = _tensors.from_output("bf16", bits)
    if _tensors._BF16 is not None:
        assert as_f32.dtype == _tensors._BF16
    monkeypatch.setattr(_tensors, "_BF16", None)
    f = _tensors.from_output("bf16", bits)
    assert f.dtype == np.float32 and f[0] == 1.0 and f[1] == -2.0 and np.isnan(f[2])
    assert np.array_equal(_tensors._float32_to_bf16_bits(np.array([1.0, -2.0], np.float32)),
                          bits[:2])
