"""The node suite's bookkeeping (test_node_suite.py): which backend runs,
each case's outcome, and the comparison with the checked-in list.

    pytest tests/onnx/node_suite --backend onednn:0
        [--expected FILE] [--update-expected] [--results FILE.json]

--expected (default expected/<backend>.txt, ':' made '_') lists every case
that does not pass, one per line: "<case> fail" or "<case> unsupported";
"<case> pass|fail" accepts either, for a case whose result depends on the
CPU's instruction set (a comment says why). A case not listed must pass.
The run fails when any outcome differs from the list: a regression, and
also a case that now passes and must leave the list (--update-expected
rewrites the list from this run, keeping the comments and the either-way
entries). Cases listed as expected failures are marked xfail, so that their
failures alone do not fail the run. --results writes the counts and
outcomes as JSON (schema ampx.node-suite/1), for docs/ONNX.md."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

HERE = Path(__file__).parent
UNSUPPORTED = "unsupported: "
OUTCOMES = ("pass", "fail", "unsupported")
# oneDNN's x86 ISAs, lowest first, as the onednn plugin names them in its
# devices' fingerprints (onednn/<version>/onednn-<x.y.z>/<isa>/<cpu>).
ISAS = ("sse41", "avx", "avx2", "avx2_vnni", "avx512_core", "avx512_core_vnni",
        "avx512_core_bf16", "avx512_core_amx")


def _check_isa(backend: str, max_isa: str) -> str:
    """The ISA oneDNN runs at for `backend`; a UsageError when it is above
    max_isa (ONEDNN_MAX_CPU_ISA did not reach the plugin)."""
    import ampx

    (device,) = [d for d in ampx.devices() if d.id == backend]
    effective = device.fingerprint.split("/")[3]
    wanted = max_isa.lower()
    if wanted not in ISAS or effective not in ISAS:
        raise pytest.UsageError(f"--max-isa {max_isa}: cannot compare with {effective} ({ISAS})")
    if ISAS.index(effective) > ISAS.index(wanted):
        raise pytest.UsageError(f"{backend} runs at {effective}, above --max-isa {max_isa} "
                                f"(ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA')})")
    return effective


def pytest_addoption(parser):
    group = parser.getgroup("ampx node suite")
    group.addoption("--backend", default="cpu_ref:0",
                    help="an ampx device id (ampx.backend) or onnxruntime (its backend)")
    group.addoption("--expected", default=None, help="the list of cases that do not pass")
    group.addoption("--update-expected", action="store_true",
                    help="rewrite the list from this run's outcomes")
    group.addoption("--results", default=None, help="write counts and outcomes as JSON here")
    group.addoption("--fails-only", action="store_true",
                    help="check only the invariant that no case fails unless listed (a device whose "
                         "coverage differs per machine: vulkan:0 is lavapipe or a GPU); pass and "
                         "unsupported are both accepted, and the list holds only fail entries")
    group.addoption("--max-isa", default=None,
                    help="onednn: the run must be at this oneDNN ISA or below (the caller sets "
                         "ONEDNN_MAX_CPU_ISA; checked from the device's fingerprint)")


def _expected_path(config) -> Path:
    given = config.getoption("--expected")
    name = config.getoption("--backend").replace(":", "_")
    return Path(given) if given else HERE / "expected" / f"{name}.txt"


def _read_expected(path: Path) -> dict[str, set[str]]:
    """case -> the outcomes it may have; the file's errors name the line."""
    expected: dict[str, set[str]] = {}
    if not path.exists():
        return expected
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        allowed = set(parts[1].split("|")) if len(parts) == 2 else set()
        if len(parts) != 2 or not allowed <= set(OUTCOMES) or parts[0] in expected:
            raise pytest.UsageError(
                f"{path}:{number}: expected '<case> fail|unsupported|pass|fail', once per case")
        expected[parts[0]] = allowed
    return expected


class NodeSuite:
    def __init__(self, config):
        self.config = config
        self.backend = config.getoption("--backend")
        self.path = _expected_path(config)
        self.expected = _read_expected(self.path)
        self.fails_only = config.getoption("--fails-only")
        self.outcomes: dict[str, str] = {}
        self.reasons: dict[str, str] = {}
        max_isa = config.getoption("--max-isa")
        self.isa = _check_isa(self.backend, max_isa) if max_isa else None

    def pytest_collection_modifyitems(self, items):
        for item in items:
            allowed = self.expected.get(item.name)
            if allowed and "fail" in allowed:
                item.add_marker(pytest.mark.xfail(reason="listed in " + self.path.name, strict=False))
        unknown = sorted(set(self.expected) - {item.name for item in items})
        if unknown and not self.config.getoption("--update-expected"):
            raise pytest.UsageError(
                f"{self.path}: {len(unknown)} listed case(s) are not in the suite: {', '.join(unknown[:5])}")

    def pytest_runtest_logreport(self, report):
        name = report.nodeid.rsplit("::", 1)[-1]
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            if report.skipped and hasattr(report, "wasxfail"):
                outcome = "fail"
                self.reasons[name] = report.wasxfail
            elif report.skipped:
                reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
                reason = reason.removeprefix("Skipped: ")
                if not reason.startswith(UNSUPPORTED):
                    return  # not a case of this run (ONNX's CUDA variant)
                outcome = "unsupported"
                self.reasons[name] = reason[len(UNSUPPORTED):]
            elif report.failed:
                outcome = "fail"
                crash = getattr(report.longrepr, "reprcrash", None)
                message = crash.message if crash else report.longreprtext
                self.reasons[name] = (message.strip().splitlines() or [""])[0][:300]
            else:
                outcome = "pass"
            self.outcomes[name] = outcome

    def _rewrite(self):
        # The header, either-way entries and an entry's own comment (the
        # reason a case fails) stay, the comment while the outcome is the same.
        kept, commented = {}, {}
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        header = [l for l in lines if l.startswith("#")]
        for line in lines:
            body = line.split("#", 1)[0].split()
            if len(body) == 2 and "|" in body[1]:
                kept[body[0]] = line
            elif len(body) == 2 and "#" in line:
                commented[body[0]] = (body[1], line)
        out = header or [f"# Cases of ONNX's node suite that do not pass on {self.backend} (conftest.py)."]
        for name in sorted(self.outcomes):
            outcome = self.outcomes[name]
            if name in kept:
                out.append(kept[name])
            elif outcome == "fail" or (outcome != "pass" and not self.fails_only):
                listed = commented.get(name)
                out.append(listed[1] if listed and listed[0] == outcome else f"{name} {outcome}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("\n".join(out) + "\n")
        os.replace(tmp, self.path)

    def pytest_sessionfinish(self, session, exitstatus):
        counts = {o: sum(1 for v in self.outcomes.values() if v == o) for o in OUTCOMES}
        results = self.config.getoption("--results")
        if results:
            Path(results).write_text(json.dumps({
                "schema": "ampx.node-suite/1", "backend": self.backend, "cases": len(self.outcomes),
                "counts": counts,
                "outcomes": {n: {"outcome": o, **({"reason": self.reasons[n]} if n in self.reasons else {})}
                             for n, o in sorted(self.outcomes.items())}}, indent=1) + "\n")
        if self.config.getoption("--update-expected"):
            self._rewrite()
            return
        regressions, newly = [], []
        for name, outcome in sorted(self.outcomes.items()):
            allowed = self.expected.get(name, {"pass"})
            if outcome in allowed or (self.fails_only and outcome != "fail"):
                continue
            if outcome == "pass":
                newly.append(name)
            else:
                listed = "|".join(sorted(allowed))
                regressions.append(f"{name}: {outcome} (listed: {listed}) {self.reasons.get(name, '')}")
        self.summary = (counts, regressions, newly)
        if regressions or newly:
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter):
        if not hasattr(self, "summary"):
            return
        counts, regressions, newly = self.summary
        tr = terminalreporter
        at = f" at {self.isa}" if self.isa else ""
        tr.write_line(f"ONNX node suite on {self.backend}{at}: {len(self.outcomes)} cases, "
                      + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES))
        for line in regressions:
            tr.write_line("REGRESSION " + line)
        for name in newly:
            tr.write_line(f"NOW PASSES {name}: remove it from {self.path}")


def pytest_configure(config):
    os.environ["AMPX_NODE_SUITE_BACKEND"] = config.getoption("--backend")
    config.pluginmanager.register(NodeSuite(config), "ampx_node_suite")
