"""Errors: ampx.Error and its kinds with the CLI's one-line message;
TypeError and ValueError for bad arguments."""

import subprocess

import numpy as np
import pytest

import ampx


def cli_error(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    assert p.returncode != 0
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("ampx: error: ")
    return p.returncode, line[len("ampx: error: "):]


def test_hierarchy():
    assert issubclass(ampx.Error, RuntimeError)
    for kind in (ampx.ModelError, ampx.DeviceError, ampx.UsageError):
        assert issubclass(kind, ampx.Error)
    assert issubclass(ampx.UsageError, ValueError)


def test_missing_model_is_a_model_error_with_the_cli_message(cli, tmp_path):
    missing = str(tmp_path / "missing.onnx")
    _, message = cli_error(cli, "plan", missing)
    with pytest.raises(ampx.ModelError) as e:
        ampx.Session(devices="cpu_ref:0").plan(missing)
    assert str(e.value) == message


def test_corrupt_model_is_a_model_error(cli, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    _, message = cli_error(cli, "plan", str(bad))
    with pytest.raises(ampx.ModelError) as e:
        ampx.Session(devices="cpu_ref:0").plan(str(bad))
    assert str(e.value) == message
    with pytest.raises(ampx.ModelError):
        ampx.Session(devices="cpu_ref:0").plan(b"\x08\x07garbage")


def test_unknown_amp_level_is_a_usage_error(cli):
    code, message = cli_error(cli, "plan", "builtin:cnn", "--amp", "O9")
    assert code == 2
    with pytest.raises(ampx.UsageError) as e:
        ampx.Session(devices="cpu_ref:0").plan("builtin:cnn", amp="O9")
    assert str(e.value) == message
    with pytest.raises(ValueError):  # what Python users catch
        ampx.Session(devices="cpu_ref:0").plan("builtin:cnn", dtype="f8")


def test_unknown_device_is_a_device_error(cli):
    _, message = cli_error(cli, "plan", "builtin:cnn", "--device", "nope:0")
    with pytest.raises(ampx.DeviceError) as e:
        ampx.Session(devices="nope:0")
    assert str(e.value) in message
    assert "unknown device 'nope:0'" in str(e.value)


def test_bad_argument_types():
    with pytest.raises(TypeError):
        ampx.Session(devices=3)
    with pytest.raises(TypeError):
        ampx.Session(threads="4")
    with pytest.raises(ValueError):
        ampx.Session(threads=0)
    sess = ampx.Session(devices="cpu_ref:0")
    with pytest.raises(TypeError):
        sess.plan("builtin:cnn", amp=2)
    with pytest.raises(TypeError):
        sess.plan(42)
    with pytest.raises(ValueError):
        sess.plan("builtin:cnn", keep_fp32=["*"])
    with pytest.raises(ValueError):
        sess.plan("model.onnx", input_shapes={"x": [1, 0]})
    with pytest.raises(TypeError):
        sess.compile("not a plan")


def test_bad_inputs():
    sess = ampx.Session(devices="cpu_ref:0")
    compiled = sess.compile(sess.plan("builtin:cnn", amp="O0"))
    (t,) = compiled.inputs
    with pytest.raises(ValueError, match="missing input"):
        compiled.run({})
    with pytest.raises(ValueError, match="not an input"):
        compiled.run({t.name: np.zeros(t.shape, np.float32), "other": 1})
    with pytest.raises(TypeError):
        compiled.run({t.name: np.array(["a"] * int(np.prod(t.shape))).reshape(t.shape)})
    with pytest.raises(ampx.UsageError, match=f"input '{t.name}': expected"):
        compiled.run({t.name: np.zeros((1,) + tuple(t.shape), np.float32)})
    with pytest.raises(TypeError):
        compiled.run([np.zeros(t.shape, np.float32)])


def test_plan_of_another_session_is_refused():
    a = ampx.Session(devices="cpu_ref:0")
    b = ampx.Session(devices="cpu_ref:0")
    with pytest.raises(ampx.UsageError, match="another Session"):
        b.compile(a.plan("builtin:mlp"))


def test_a_cast_no_device_runs_is_a_device_error(tmp_path):
    """A node vulkan runs in f32 whose f64 input needs a Cast that no listed
    device runs: the devices' coverage (DeviceError), as an unplaceable node."""
    from onnx import TensorProto, helper

    session = ampx.Session(devices="vulkan:0", fallback=False)
    if not any(d.startswith("vulkan:") for d in session.device_ids):
        pytest.skip("no Vulkan device")
    f64 = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, [3]) for n in ("a", "b", "y")]
    node = helper.make_node("Max", ["a", "b"], ["y"])
    m = helper.make_model(helper.make_graph([node], "g", f64[:2], f64[2:]),
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = tmp_path / "max64.onnx"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(ampx.DeviceError, match="Cast f64 -> f32 .*no device of vulkan:0 runs it"):
        session.plan(str(path), amp="O0")
