#!/usr/bin/env python3
"""ampx against ONNX Runtime on the test models (make_models.py).

For every model and device: `ampx run MODEL --input ... --save-outputs DIR`
and each saved output compared with ORT's: normwise relative error
max|got - ref| / max|ref| within the f32 tolerance at O0 (and the f16 one at
capability-blind O2, where the policy's 16-bit nodes really run in f16),
integer outputs exactly at O0. Also `ampx plan --format json`
must show the imported node names and origins.

A device may be a list (`--device vulkan:0,cpu_ref:0`): the run then places
nodes across it, and each run line reports the nodes that fell back and the
copies per run. `--fallbacks NAME=N` fails a run of model NAME in which more
than N nodes fall back from their first-choice device.

Usage: run_onnx_models.py --ampx PATH --models DIR --work DIR --device ID[,ID]...
           [--amp LEVEL]... [--fallbacks NAME=N]...
Prints one line per check and a closing 'N passed, N failed' line.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np

# The tolerances of tests/support/tolerances.hpp for whole-model runs.
TOL = {"O0": 1e-4, "O2": 2e-2}
MODELS = ["resnet", "mobilenet", "encoder", "ocr", "mlp", "softmax11", "logsoftmax12",
          "opset7", "opset9", "opset10", "opset11", "opset12", "opset22", "opset26",
          "mathops", "recurrent", "recurrent_layout1", "ifconst", "ifruntime", "decomposed18", "decomposed21",
          "indexops", "loops", "valueinputs", "external/mlp_external"]
# Models whose shapes come from input values: `ampx run --input` builds them
# for the arrays given; `ampx plan` (shapes only) refuses them.
VALUE_MODELS = {"valueinputs"}


def rel_error(got, ref):
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    denom = np.abs(ref).max()
    err = np.abs(got - ref).max()
    return err / denom if denom > 0 else err


def compare(name, got, ref, tol):
    """The problem with one output, or None. Integer outputs (argmax over
    random logits) must match exactly at f32 tolerances; at 16-bit a flip
    needs only a near tie, so up to a tenth may differ."""
    if got.shape != ref.shape:
        return f"{name}: shape {got.shape} vs ORT {ref.shape}"
    if np.issubdtype(ref.dtype, np.integer):
        wrong = int((got != ref).sum())
        if wrong > (0 if tol < 1e-3 else max(1, ref.size // 10)):
            return f"{name}: {wrong} of {ref.size} differ"
        return None
    err = rel_error(got, ref)
    if not err <= tol:
        return f"{name}: relative error {err:.3e} > {tol:.0e}"
    return None


def run_ampx_json(cmd, amp):
    """`ampx run ... --format json`: (document, None), or (None, (exit code,
    stderr)). Above O0 a run whose own check against cpu_ref failed
    (exit 1, check.status "failed": over the whole-model tolerance of its
    16-bit dtype, opset/tolerances.hpp) still ran and saved its outputs: the
    document, for the caller to judge against ONNX Runtime and to report the
    verdict (check_verdict). At O0 a failed check is a failure."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    doc = None
    if p.returncode in (0, 1):
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
    if p.returncode == 0 or (amp != "O0" and doc is not None
                             and doc.get("check", {}).get("status") == "failed"):
        return doc, None
    return None, (p.returncode, p.stderr)


def check_verdict(doc):
    """A note for a run over its check's tolerance, else None."""
    check = doc.get("check", {})
    if check.get("status") != "failed":
        return None
    worst = max(o.get("max_rel_error", 0.0) for o in doc["outputs"])
    return (f"ampx's check: {worst:.1e} over its {check['tolerance_dtype']} tolerance "
            f"{check['tolerance']:.0e}")


def shape_args(models_dir, name):
    args = []
    with open(os.path.join(models_dir, name + ".shapes")) as f:
        for line in f.read().split():
            args += ["--input-shape", line]
    return args


def model_args(models_dir, name):
    """`ampx run`'s arguments: the saved input arrays, which also pin the
    model's symbolic dimensions (no --input-shape needed), or the shapes
    alone where the model has no saved inputs."""
    npys = sorted(glob.glob(os.path.join(models_dir, name + ".inputs", "*.npy")))
    if not npys:
        return shape_args(models_dir, name)
    return [arg for npy in npys for arg in ("--input", f"{os.path.basename(npy)[:-4]}={npy}")]


def check_run(a, name, device, amp, notes):
    tag = device.replace(':', '_').replace(',', '+')
    out = os.path.join(a.work, f"{name.replace('/', '_')}.{tag}.{amp}")
    model = os.path.join(a.models, name + ".onnx")
    # O2 capability-blind: the 16-bit nodes really run in 16-bit (on the
    # emulated kernels where the device has no native ones), so the
    # comparison with ORT's f32 tests 16-bit numerics end to end.
    extra = ["--capability-blind"] if amp != "O0" else []
    cmd = [a.ampx, "run", model, "--device", device, "--amp", amp, "--iters", "1", "--warmup", "0",
           "--save-outputs", out, "--format", "json"] + extra + model_args(a.models, name)
    doc, error = run_ampx_json(cmd, amp)
    if error:
        return [f"exit {error[0]}: {error[1].strip()}"]
    problems = []
    if check_verdict(doc):
        notes.append(check_verdict(doc))
    summary = doc["summary"]
    if "," in device:
        notes.append(f"fallbacks {summary['fallbacks']}, copies {summary['copies']}")
        limit = a.fallback_limits.get(name)
        if limit is not None and summary["fallbacks"] > limit:
            problems.append(f"{summary['fallbacks']} nodes fall back (at most {limit} expected)")
    expected = sorted(glob.glob(os.path.join(a.models, name + ".expected", "*.npy")))
    if not expected:
        return ["no expected outputs"]
    for e in expected:
        ref = np.load(e)
        path = os.path.join(out, os.path.basename(e))
        if not os.path.exists(path):
            problems.append(f"{os.path.basename(e)} not saved")
            continue
        problem = compare(os.path.basename(e), np.load(path), ref, TOL[amp])
        if problem:
            problems.append(problem)
    return problems


def check_plan(a, name, device):
    model = os.path.join(a.models, name + ".onnx")
    cmd = [a.ampx, "plan", model, "--device", device, "--format", "json"]
    p = subprocess.run(cmd + shape_args(a.models, name), capture_output=True, text=True)
    if p.returncode != 0:
        return [f"plan exit {p.returncode}: {p.stderr.strip()}"]
    nodes = json.loads(p.stdout)["nodes"]
    problems = []
    if not any(n["name"].startswith("/") for n in nodes):
        problems.append("imported node names missing from the plan")
    if name == "encoder":
        ops = [n["op"] for n in nodes]
        if ops.count("LayerNorm") != 3 or ops.count("Gelu") != 1:
            problems.append(f"decomposed patterns not fused: {ops.count('LayerNorm')} LayerNorm, "
                            f"{ops.count('Gelu')} Gelu")
        if any(o in ops for o in ("Shape", "Range", "Erf", "Pow", "Sqrt")):
            problems.append("shape or pattern ops left in the runtime graph")
        if not any(n.get("origin", "").startswith("ReduceMean+Sub") for n in nodes):
            problems.append("fused LayerNorm has no origin")
        # the report's coverage rows carry the ONNX op types too
        r = subprocess.run([a.ampx, "report", model, "--device", device, "--no-run", "--format",
                            "json"] + shape_args(a.models, name), capture_output=True, text=True)
        if r.returncode != 0:
            return problems + [f"report exit {r.returncode}: {r.stderr.strip()}"]
        rows = {c["op"]: c for c in json.loads(r.stdout)["models"][0]["coverage"]}
        if "Unsqueeze" not in rows.get("Reshape", {}).get("origins", []):
            problems.append("report: Reshape row does not name Unsqueeze")
        if not any(o.startswith("ReduceMean+Sub") for o in rows.get("LayerNorm", {}).get("origins", [])):
            problems.append("report: LayerNorm row does not name its pattern")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", action="append", required=True)
    ap.add_argument("--amp", action="append", default=None)
    ap.add_argument("--fallbacks", action="append", default=[])
    a = ap.parse_args()
    a.fallback_limits = {}
    for spec in a.fallbacks:
        model, _, n = spec.partition("=")
        a.fallback_limits[model] = int(n)
    os.makedirs(a.work, exist_ok=True)
    passed = failed = 0
    for name in MODELS:
        for device in a.device:
            checks = [] if name in VALUE_MODELS else [
                (f"plan {name} {device}", lambda notes: check_plan(a, name, device))]
            for amp in a.amp or ["O0"]:
                checks.append((f"run {name} {device} {amp}",
                               lambda notes, amp=amp: check_run(a, name, device, amp, notes)))
            for label, fn in checks:
                notes = []
                problems = fn(notes)
                suffix = f" ({'; '.join(notes)})" if notes else ""
                if problems:
                    failed += 1
                    print(f"FAIL {label}{suffix}: " + "; ".join(problems))
                else:
                    passed += 1
                    print(f"ok   {label}{suffix}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
