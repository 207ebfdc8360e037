#!/usr/bin/env python3
"""A run from Python against `ampx run` for the same plan (issue 39: within 5 %).

For each model and device: `ampx run MODEL --device D --amp O2 --dtype auto
--iters N --no-check --format json` gives the CLI's median; a Python child
process (this script with --child) plans and compiles the same model the
same way and times N runs of `CompiledModel.run` on random inputs
(C-contiguous float32: read in place), after the same warm-up. Both use
one scratch capability database. Rounds alternate CLI and Python so that
load drifts hit both; each side is a fresh process every round, because a
process that keeps running while the other side's threads come and go
measured up to 1.5x slower after each of them (the scheduler's placement
of its threads, not ampx: the same process alone, or a fresh one, runs at
the CLI's speed).

Usage: PYTHONPATH=build/release/python python bench/python_vs_cli.py
           --ampx build/release/apps/ampx [--device onednn:0]... [--model builtin:cnn]...
           [--iters 50] [--rounds 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ampx


def cli_median(a, model, device, db):
    p = subprocess.run([a.ampx, "run", model, "--device", device, "--amp", "O2", "--dtype", "auto",
                        "--iters", str(a.iters), "--warmup", "2", "--no-check", "--format", "json",
                        "--db", db], check=True, capture_output=True, text=True)
    return json.loads(p.stdout)["median_ms"]


def child_median(model, device, db, iters):
    """In the child: plan, compile, warm up as the CLI does, time `iters` runs."""
    sess = ampx.Session(devices=device, db=db)
    compiled = sess.compile(sess.plan(model, amp="O2", dtype="auto"))
    rng = np.random.default_rng(1)
    feed = {t.name: rng.uniform(-1, 1, t.shape).astype(np.float32) if t.dtype == "f32"
            else rng.integers(0, 8, t.shape).astype(ampx._tensors.NUMPY_DTYPES[t.dtype])
            for t in compiled.inputs}
    for _ in range(2):
        compiled.run(feed)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        compiled.run(feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def python_median(a, model, device, db):
    p = subprocess.run([sys.executable, __file__, "--child", "--model", model, "--device", device,
                        "--db", db, "--iters", str(a.iters)],
                       check=True, capture_output=True, text=True)
    return float(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--device", action="append")
    ap.add_argument("--model", action="append")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    if a.child:
        print(child_median(a.model[0], a.device[0], a.db, a.iters))
        return
    if not a.ampx:
        ap.error("--ampx is required")
    devices = a.device or ["cpu_ref:0", "onednn:0"]
    models = a.model or ["builtin:mlp", "builtin:cnn", "builtin:encoder"]
    db = os.path.join(tempfile.mkdtemp(), "bench.db")
    print(f"{'model':<16} {'device':<10} {'CLI ms':>9} {'Python ms':>10} {'ratio':>7}")
    for model in models:
        for device in devices:
            cli, py = [], []
            for _ in range(a.rounds):
                cli.append(cli_median(a, model, device, db))
                py.append(python_median(a, model, device, db))
            c, p = statistics.median(cli), statistics.median(py)
            print(f"{model:<16} {device:<10} {c:9.3f} {p:10.3f} {p / c:7.3f}", flush=True)


if __name__ == "__main__":
    main()
