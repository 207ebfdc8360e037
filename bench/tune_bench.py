#!/usr/bin/env python3
"""ampx tune over devices x models x levels: O0, the untuned plan and the
tuned plan, verified in alternation by `ampx tune` itself, with the
prediction error per node and end to end before and after calibration and
the tuning time. Prints a Markdown table for docs/benchmarks.md.

  python3 bench/tune_bench.py --ampx build/release/apps/ampx \
      --devices vulkan:0,onednn:0 --models builtin:cnn,builtin:mlp --levels O1,O2

Uses a scratch capability database (AMPX_CAPABILITY_DB) unless --db is given.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def pct(x):
    return "-" if x is None else f"{100 * x:.0f} %"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", default="build/release/apps/ampx")
    ap.add_argument("--devices", default="vulkan:0,onednn:0")
    ap.add_argument("--models", default="builtin:cnn,builtin:mlp,builtin:encoder")
    ap.add_argument("--levels", default="O1,O2")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    env = dict(os.environ)
    scratch = None
    if args.db is None:
        scratch = tempfile.TemporaryDirectory()
        args.db = os.path.join(scratch.name, "caps.db")
    env["AMPX_CAPABILITY_DB"] = args.db
    print("| device | model | level | dtype | blind / O0 | untuned / O0 | tuned / O0 | kept | noise | "
          "node error before -> after | end to end before -> after | tune s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dev in args.devices.split(","):
        for model in args.models.split(","):
            for level in args.levels.split(","):
                cmd = [args.ampx, "tune", model, "--device", dev, "--amp", level, "--dtype",
                       args.dtype, "--rounds", str(args.rounds), "--iters", str(args.iters),
                       "--format", "json", "--compare-blind"]
                # The ONNX test models (tests/onnx/make_models.py) keep their
                # symbolic input shapes in MODEL.shapes, one NAME=DIMS a line.
                shapes = model[:-5] + ".shapes" if model.endswith(".onnx") else None
                if shapes and os.path.exists(shapes):
                    for line in open(shapes).read().split():
                        cmd += ["--input-shape", line]
                name = os.path.basename(model)
                p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"| {dev} | {name} | {level} | - | error: {p.stderr.strip()} |||||||")
                    continue
                j = json.loads(p.stdout)
                v = {x["plan"]: x for x in j["verified"]}
                e = j["prediction_error"]
                print(f"| {dev} | {name} | {level} | {j['plan']['dtype']} | "
                      f"{v['blind']['ratio_to_o0']:.3f} | "
                      f"{v['untuned']['ratio_to_o0']:.3f} | {v['tuned']['ratio_to_o0']:.3f} | "
                      f"{j['kept']} | {100 * j['noise']:.1f} % | "
                      f"{pct(e['node_before'])} -> {pct(e['node_after'])} | "
                      f"{pct(e['end_to_end_before'])} -> {pct(e['end_to_end_after'])} | "
                      f"{j['seconds']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
