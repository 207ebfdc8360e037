#!/usr/bin/env python3
"""`ampx export` on the test models (make_models.py), checked by ONNX itself.

For every model, device and mode: `ampx export MODEL --amp L --device D
--dtype f16 -o FILE --format json`, then onnx.checker.check_model(full_check=
True), opset 17 of the default domain only, graph inputs/outputs named and
typed as in the original, and ONNX Runtime (CPU) runs the export on the
model's inputs: outputs within the normwise relative error of the original
model's ORT outputs (1e-4 at O0, the f16 tolerance 2e-2 with 16-bit nodes).

cpu_ref answers 16-bit nodes `emulated`, so its honest O2 plan stays f32;
the capability-blind modes (`--capability-blind`, O2 and O3) are what make
the export really contain f16 nodes, f16 initializers and Casts, and the JSON
summary must say so.

Usage: export_onnx_models.py --ampx PATH --models DIR --work DIR --device ID...
Prints one line per check and a closing 'N passed, N failed' line.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

from run_onnx_models import MODELS, VALUE_MODELS, compare, shape_args

# (label, ampx arguments, tolerance, must contain 16-bit nodes)
MODES = [
    ("O0", ["--amp", "O0"], 1e-4, False),
    ("O2", ["--amp", "O2"], 2e-2, False),
    ("O2-blind", ["--amp", "O2", "--capability-blind"], 2e-2, True),
    ("O3-blind", ["--amp", "O3", "--capability-blind"], 2e-2, True),
]


def load_dir(d):
    return {os.path.basename(p)[:-4]: np.load(p) for p in sorted(glob.glob(os.path.join(d, "*.npy")))}


def check_export(a, name, device, label, args, tol, want_16bit):
    model = os.path.join(a.models, name + ".onnx")
    out = os.path.join(a.work, f"{name.replace('/', '_')}.{device.replace(':', '_')}.{label}.onnx")
    cmd = [a.ampx, "export", model, "--device", device, "--dtype", "f16", "-o", out,
           "--format", "json"] + args + shape_args(a.models, name)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return [f"exit {p.returncode}: {p.stderr.strip()}"]
    summary = json.loads(p.stdout)
    problems = []
    if summary["bytes"] != os.path.getsize(out):
        problems.append(f"summary says {summary['bytes']} bytes, the file has {os.path.getsize(out)}")
    if want_16bit and (summary["nodes_16bit"] == 0 or summary["casts"] == 0
                       or summary["initializers_16bit"] == 0):
        problems.append(f"no 16-bit nodes/Casts/initializers: {summary}")
    if not want_16bit and device.startswith("cpu_ref") and summary["nodes_16bit"] != 0:
        problems.append("cpu_ref's honest plan has 16-bit nodes")
    try:
        onnx.checker.check_model(out, full_check=True)
    except Exception as e:  # noqa: BLE001 - any checker complaint is a failure
        return problems + [f"checker: {str(e).splitlines()[0]}"]
    m = onnx.load(out)
    if [(o.domain, o.version) for o in m.opset_import] != [("", 17)]:
        problems.append(f"opsets {[(o.domain, o.version) for o in m.opset_import]}")
    if any(n.domain not in ("", "ai.onnx") for n in m.graph.node):
        problems.append("a node outside the default domain")
    orig = onnx.load(model)
    if [(i.name, i.type.tensor_type.elem_type) for i in orig.graph.input
            if i.name not in {t.name for t in orig.graph.initializer}] != \
            [(i.name, i.type.tensor_type.elem_type) for i in m.graph.input]:
        problems.append("graph inputs differ from the original's")
    if [(o.name, o.type.tensor_type.elem_type) for o in orig.graph.output] != \
            [(o.name, o.type.tensor_type.elem_type) for o in m.graph.output]:
        problems.append("graph outputs differ from the original's")
    casts = sum(n.op_type == "Cast" for n in m.graph.node)
    if casts != summary["casts"]:
        problems.append(f"{casts} Cast nodes, the summary says {summary['casts']}")

    feeds = load_dir(os.path.join(a.models, name + ".inputs"))
    expected = load_dir(os.path.join(a.models, name + ".expected"))
    sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    for k, ref in expected.items():
        if k not in got:
            problems.append(f"output {k} missing")
        elif got[k].dtype != ref.dtype:
            problems.append(f"{k}: {got[k].dtype} vs {ref.dtype}")
        elif problem := compare(k, got[k], ref, tol):
            problems.append(problem)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", action="append", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    passed = failed = 0
    # A graph built for input values exports with those values baked in: a
    # different model from the original, not compared here.
    for name in [m for m in MODELS if m not in VALUE_MODELS]:
        for device in a.device:
            for label, args, tol, want_16bit in MODES:
                if want_16bit and not device.startswith("cpu_ref"):
                    continue  # blind plans on other CPUs add nothing cpu_ref's do not
                problems = check_export(a, name, device, label, args, tol, want_16bit)
                status = "FAIL" if problems else "ok  "
                print(f"{status} export {name} {device} {label}" +
                      (": " + "; ".join(problems) if problems else ""))
                failed += bool(problems)
                passed += not problems
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
