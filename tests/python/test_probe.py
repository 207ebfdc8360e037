"""Session.probe: `ampx probe` from Python (in this process), its document,
its progress and its errors against the CLI's."""

import json
import subprocess

import pytest

import ampx
from conftest import TickCounter

OPS = "Relu,MatMul"
ROW_KEYS = {"device", "fingerprint", "measured", "native", "emulated", "unsupported", "seconds",
            "stored", "outcome"}


def _cli_probe(cli, db):
    p = subprocess.run([cli, "probe", "--device", "cpu_ref:0", "--quick", "--ops", OPS,
                        "--format", "json", "--db", db], check=True, capture_output=True, text=True)
    return json.loads(p.stdout)


def test_probe_matches_cli_and_stores_the_profile(cli, tmp_path):
    db = str(tmp_path / "p.db")
    got = ampx.Session(db=db).probe(devices="cpu_ref:0", quick=True, ops=OPS, progress=False)
    # What is stored is what the CLI lists (before the CLI probes the same db).
    listed = json.loads(subprocess.run([cli, "db", "list", "--format", "json", "--db", db],
                                       check=True, capture_output=True, text=True).stdout)
    expected = _cli_probe(cli, db)
    assert got.keys() == expected.keys()
    assert got["schema"] == expected["schema"] == "ampx.probe/1"
    assert got["db"] == expected["db"] and got["quick"] is expected["quick"] is True
    assert len(got["devices"]) == len(expected["devices"]) == 1
    row, cli_row = got["devices"][0], expected["devices"][0]
    assert row.keys() == cli_row.keys() == ROW_KEYS
    for key in ROW_KEYS - {"seconds"}:
        assert row[key] == cli_row[key], key
    assert row["stored"] is True and row["outcome"] == "stored" and row["measured"] > 0
    (entry,) = listed["devices"]
    assert entry["device_id"] == "cpu_ref:0" and entry["fingerprint"] == row["fingerprint"]
    assert entry["measured"] == row["measured"] and entry["native"] == row["native"]


def test_probe_stores_into_an_empty_database(cli, tmp_path):
    db = str(tmp_path / "fresh.db")
    ampx.Session(db=db).probe(devices=["cpu_ref:0"], quick=True, ops=["Relu"], progress=False)
    text = subprocess.run([cli, "db", "list", "--db", db], check=True, capture_output=True,
                          text=True).stdout
    assert "cpu_ref:0" in text and "(1 devices)" in text


def test_probe_progress_callable_counts_up(tmp_path):
    calls = []
    ampx.Session(db=str(tmp_path / "p.db")).probe(
        devices="cpu_ref:0", quick=True, ops=OPS,
        progress=lambda done, total, what: calls.append((done, total, what)))
    assert len(calls) > 1
    dones = [done for done, _, _ in calls]
    assert dones == sorted(dones) and dones[-1] > dones[0]
    assert all(0 <= done <= total for done, total, _ in calls)
    assert all(isinstance(what, str) for _, _, what in calls)
    with pytest.raises(TypeError):
        ampx.Session(db=str(tmp_path / "p.db")).probe(devices="cpu_ref:0", quick=True, ops=OPS,
                                                      progress="yes")


def test_probe_without_progress_prints_nothing(tmp_path, capfd):
    ampx.set_log_level("info")  # the bar's lines off a terminal are info lines
    try:
        ampx.Session(db=str(tmp_path / "p.db")).probe(devices="cpu_ref:0", quick=True, ops=OPS,
                                                      progress=False)
        assert capfd.readouterr().err == ""
        ampx.Session(db=str(tmp_path / "p.db")).probe(devices="cpu_ref:0", quick=True, ops=OPS,
                                                      progress=True)
        assert "probe cpu_ref:0: stored" in capfd.readouterr().err
    finally:
        ampx.set_log_level("warn")


def test_probe_bad_device_is_a_device_error_with_the_cli_message(cli, tmp_path):
    db = str(tmp_path / "p.db")
    with pytest.raises(ampx.DeviceError) as raised:
        ampx.Session(db=db).probe(devices="nope:0", quick=True, ops=OPS, progress=False)
    p = subprocess.run([cli, "probe", "--device", "nope:0", "--db", db], capture_output=True,
                       text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == f"ampx: error: --device: {raised.value}"


def test_probe_bad_ops_is_a_usage_error_as_the_cli_says(cli, tmp_path):
    db = str(tmp_path / "p.db")
    with pytest.raises(ampx.UsageError) as raised:
        ampx.Session(db=db).probe(devices="cpu_ref:0", quick=True, ops="Relu,Bogus",
                                  progress=False)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == "ops 'Bogus': not an op of the op set (docs/OPS.md)"
    p = subprocess.run([cli, "probe", "--device", "cpu_ref:0", "--quick", "--ops", "Relu,Bogus",
                        "--db", db], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == "ampx: error: --ops 'Bogus': not an op of the op set (docs/OPS.md)"
    with pytest.raises(ValueError):
        ampx.Session(db=db).probe(devices="cpu_ref:0", timeout=0)


def test_probe_unwritable_database_fails_before_measuring(tmp_path):
    (tmp_path / "a-file").write_text("x")
    calls = []
    with pytest.raises(ampx.Error) as raised:
        ampx.Session(db=str(tmp_path / "a-file" / "c.db")).probe(
            devices="cpu_ref:0", quick=True, ops=OPS, progress=lambda *a: calls.append(a))
    assert "a-file" in str(raised.value) and calls == []


def test_probe_releases_the_gil(tmp_path):
    sess = ampx.Session(db=str(tmp_path / "p.db"))
    with TickCounter() as ticks:
        sess.probe(devices="cpu_ref:0", quick=True, ops=OPS, progress=False)
    # Held through the measurements, the GIL would let the counter tick
    # once or twice at most; released, it ticks every millisecond or so.
    assert ticks.during > max(5, ticks.seconds / 0.001 / 10), (ticks.during, ticks.seconds)
