"""A memory bound, as `--max-memory` sets it: per compile
(`Session.compile(max_memory=)`) or for everything a Session compiles
(`Session(max_memory=)`), the Trainer's steps included. A plan needing
more is refused with the CLI's message, naming where the bound came from."""

import subprocess

import pytest

import ampx


def test_compile_bound_as_the_cli(cli):
    sess = ampx.Session(devices="cpu_ref:0")
    plan = sess.plan("builtin:mlp", amp="O0")
    with pytest.raises(ampx.DeviceError) as raised:
        sess.compile(plan, max_memory=1024)
    cli_line = subprocess.run([cli, "run", "builtin:mlp", "--device", "cpu_ref:0", "--amp", "O0",
                               "--max-memory", "1KiB"], capture_output=True, text=True).stderr
    cli_line = cli_line.strip().splitlines()[-1].removeprefix("ampx: error: ")
    assert str(raised.value) == cli_line.replace("--max-memory", "compile(max_memory)")
    assert sess.compile(plan).run  # no bound: compiles


def test_session_bound_covers_compile_and_the_trainer():
    sess = ampx.Session(devices="cpu_ref:0", max_memory=1024)
    with pytest.raises(ampx.DeviceError, match=r"more than Session\(max_memory\) allows \(1.0 KiB\)"):
        sess.compile(sess.plan("builtin:mlp", amp="O0"))
    with pytest.raises(ampx.DeviceError, match=r"Session\(max_memory\)"):
        sess.trainer("builtin:digits-cnn", amp="O0")
    # compile's own bound wins over the Session's.
    plan = sess.plan("builtin:mlp", amp="O0")
    assert sess.compile(plan, max_memory=1 << 30).run


def test_bad_bound():
    with pytest.raises(ValueError):
        ampx.Session(devices="cpu_ref:0", max_memory=0)
    with pytest.raises(TypeError):
        ampx.Session(devices="cpu_ref:0", max_memory="1KiB")
