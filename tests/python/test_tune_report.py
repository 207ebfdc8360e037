"""Session.tune and Session.report: `ampx tune` and `ampx report` from Python."""

import json
import subprocess

import pytest

import ampx


def test_report_matches_cli(cli, tmp_path):
    db = str(tmp_path / "r.db")
    p = subprocess.run([cli, "report", "builtin:mlp", "--device", "cpu_ref:0", "--no-run",
                        "--format", "json", "--db", db], check=True, capture_output=True, text=True)
    expected = json.loads(p.stdout)
    sess = ampx.Session(db=db)
    got = json.loads(sess.report("builtin:mlp", format="json", devices=["cpu_ref:0"], run=False,
                                 progress=False))
    assert got["schema"] == expected["schema"] == "ampx.report/1"
    assert got["models"] == expected["models"]
    assert got["ran"] is expected["ran"] is False and got["host"] == expected["host"]
    for fmt, marker in (("text", "ampx coverage report"), ("md", "# ampx coverage report"),
                        ("html", "<html")):
        assert marker in sess.report(["builtin:mlp"], format=fmt, devices=["cpu_ref:0"], run=False,
                                     progress=False)
    with pytest.raises(ampx.UsageError):
        sess.report("builtin:mlp", format="yaml")


def test_report_progress_callback():
    calls = []
    ampx.Session().report("builtin:mlp", devices=["cpu_ref:0"], run=False,
                          progress=lambda done, total, what: calls.append((done, total, what)))
    assert calls and all(total >= done >= 0 for done, total, _ in calls)
    with pytest.raises(TypeError):
        ampx.Session().report("builtin:mlp", devices=["cpu_ref:0"], run=False, progress="yes")


def test_tune_stores_a_plan_that_plan_applies(tmp_path):
    sess = ampx.Session(devices="cpu_ref:0", db=str(tmp_path / "t.db"))
    result = sess.tune("builtin:mlp", amp="O2", dtype="f16", max_replans=1, profile_runs=1,
                       verify_rounds=1, verify_runs=1, progress=False)
    assert result["schema"] == "ampx.tune/1"
    assert result["kept"] in ("tuned", "untuned", "O0")
    assert result["stored"] is True
    later = json.loads(sess.plan("builtin:mlp", amp="O2", dtype="f16").to_json())
    assert "tuned" in later
    fresh = json.loads(sess.plan("builtin:mlp", amp="O2", dtype="f16", tuned=False).to_json())
    assert "tuned" not in fresh
