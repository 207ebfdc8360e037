#!/usr/bin/env python3
"""ampx on onednn:0 against ONNX Runtime's CPU provider, model by model.

For every model and thread count: R rounds, each one ampx block
(`ampx --threads T run MODEL --device onednn:0 --amp L --iters N --warmup W`,
its median) followed by one ONNX Runtime block (the same inputs, N runs after
W warm-up runs, intra_op_num_threads=T, inter_op 1, sequential, all graph
optimisations; its median). The ratio ampx/ORT is taken per round, so that
load on the machine hits both alike; the table gives the median ratio and the
spread of the per-round ratios (min-max), and the medians in ms. Outputs of
ampx are checked against ORT's (normwise relative error, max over outputs).

Models: every DIR/*.onnx of --models (a DIR/NAME.shapes file "input=1x3x224x224"
pins symbolic dimensions; otherwise symbolic dimensions are 1; inputs are
seeded random). The ONNX test models are written by tests/onnx/make_models.py
(build/release/tests/onnx/models), the torchvision zoo by
bench/export_torchvision_zoo.py. --zoo adds the real-model zoo of
scripts/model-zoo.sh (PaddleOCR v4, Silero VAD, its torchvision exports) on
the inputs tests/onnx/run_zoo_models.py gives them (a text image, a voiced
audio frame with its state and sample rate, a 224x224 image; the same seeds).

Usage: .venv/bin/python bench/ort_compare.py --ampx build/release/apps/ampx
         [--models DIR...] [--zoo [DIR]] [--only NAME,...] [--threads 1,2]
         [--rounds 3] [--iters 20] [--warmup 3] [--amp O0] [--json FILE]
Prints a Markdown table (docs/benchmarks.md).
"""
import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import onnx
import onnxruntime as ort

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

NP_OF_ONNX = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.BOOL: np.bool_,
}


def read_shapes(path):
    shapes = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                name, dims = line.split("=")
                shapes[name] = [int(d) for d in dims.split("x")]
    return shapes


def make_inputs(model, pinned, seed):
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = pinned.get(vi.name) or [d.dim_value if d.HasField("dim_value") else 1
                                       for d in tt.shape.dim]
        dt = NP_OF_ONNX.get(tt.elem_type)
        if dt is None:
            raise SystemExit(f"ort_compare: input '{vi.name}': element type {tt.elem_type} not handled")
        if dt == np.float32:
            out[vi.name] = rng.standard_normal(dims).astype(np.float32)
        elif dt == np.bool_:
            out[vi.name] = rng.integers(0, 2, dims).astype(np.bool_)
        else:
            out[vi.name] = rng.integers(0, 10, dims).astype(dt)
    return out


def npy_name(output):
    """`ampx run --save-outputs`' file for an output (cmd_run.cpp): anything
    but [A-Za-z0-9._-] becomes '_'."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_"
                   for c in output or "output") + ".npy"


def rel_error(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    denom = max(np.abs(ref).max(), 1e-30)
    return float(np.abs(got - ref).max() / denom)


def ampx_block(a, model_path, input_files, shapes, threads, out_dir):
    cmd = [a.ampx, "--threads", str(threads)]
    if a.plugin_dir:
        cmd += ["--plugin-dir", a.plugin_dir]
    cmd += ["run", model_path, "--device", a.device, "--amp", a.amp, "--iters", str(a.iters),
            "--warmup", str(a.warmup), "--format", "json", "--save-outputs", out_dir,
            # its outputs are compared with ORT's here; no cpu_ref reference run
            "--no-check"]
    for name, f in input_files.items():
        cmd += ["--input", f"{name}={f}"]
    for name, dims in shapes.items():
        cmd += ["--input-shape", f"{name}={'x'.join(map(str, dims))}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"rc {p.returncode}")
    return json.loads(p.stdout)["median_ms"]


def ort_block(sess, feeds, a):
    for _ in range(a.warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(a.iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def zoo_models(zoo):
    """[(path, inputs maker)] of the real-model zoo in `zoo` (None: ask
    scripts/model-zoo.sh --dir), in run_zoo_models.py's order and with its
    inputs."""
    if zoo is None:
        p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "model-zoo.sh"), "--dir"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"ort_compare: {p.stderr.strip()}")
        zoo = p.stdout.strip().splitlines()[-1]
    sys.path.insert(0, os.path.join(ROOT, "tests", "onnx"))
    from run_zoo_models import MODELS
    out = []
    for name, _, make, _ in MODELS:
        path = os.path.join(zoo, name + ".onnx")
        if not os.path.exists(path):
            raise SystemExit(f"ort_compare: {path} missing (run scripts/model-zoo.sh)")
        # run_zoo_models.py's seed for the model
        out.append((path, lambda make=make, name=name: make(np.random.default_rng(zlib.crc32(name.encode())))))
    return out


def compare_model(a, path, threads, work, make_zoo_inputs=None):
    name = os.path.basename(path)[:-5]
    model = onnx.load(path, load_external_data=False)
    if make_zoo_inputs:  # shapes come with the input files
        shapes, inputs = {}, make_zoo_inputs()
    else:
        shapes = read_shapes(path[:-5] + ".shapes")
        inputs = make_inputs(model, shapes, a.seed)
    mdir = os.path.join(work, name)
    os.makedirs(mdir, exist_ok=True)
    files = {}
    for i, (k, v) in enumerate(inputs.items()):
        files[k] = os.path.join(mdir, f"in{i}.npy")
        np.save(files[k], v)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, inputs)
    out_names = [o.name for o in sess.get_outputs()]
    ratios, ampx_ms, ort_ms = [], [], []
    for _ in range(a.rounds):
        am = ampx_block(a, path, files, shapes, threads, mdir)
        om = ort_block(sess, inputs, a)
        ampx_ms.append(am)
        ort_ms.append(om)
        ratios.append(am / om)
    err = 0.0
    for n, r in zip(out_names, ref):
        f = os.path.join(mdir, npy_name(n))
        err = max(err, rel_error(np.load(f), r)) if os.path.exists(f) else float("nan")
    return {
        "model": name, "threads": threads, "ratio": statistics.median(ratios),
        "ratio_min": min(ratios), "ratio_max": max(ratios),
        "ampx_ms": statistics.median(ampx_ms), "ort_ms": statistics.median(ort_ms),
        "max_rel_error": err,
    }


def cpu_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                fl = line.split()
                isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16") if f in fl]
                return model, isa
    except OSError:
        pass
    return platform.processor(), []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--plugin-dir")
    ap.add_argument("--models", action="append", default=[], help="directory of .onnx files (repeatable)")
    ap.add_argument("--zoo", nargs="?", const="", default=None,
                    help="also the real-model zoo (scripts/model-zoo.sh), in DIR if given")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--amp", default="O0")
    ap.add_argument("--device", default="onednn:0")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the rows to this file")
    a = ap.parse_args()
    if not a.models and a.zoo is None:
        ap.error("give --models DIR, --zoo, or both")
    paths = []  # (path, the zoo's inputs maker or None)
    if a.zoo is not None:
        paths += zoo_models(a.zoo or None)
    for d in a.models:
        paths += [(p, None) for p in sorted(glob.glob(os.path.join(d, "*.onnx")))]
    if a.only:
        keep = set(a.only.split(","))
        paths = [(p, m) for p, m in paths if os.path.basename(p)[:-5] in keep]
    threads = [int(t) for t in a.threads.split(",")]
    model, isa = cpu_flags()
    print(f"<!-- {model}; {', '.join(isa)}; {os.cpu_count()} cpus; onnxruntime {ort.__version__}; "
          f"{a.rounds} rounds x {a.iters} runs -->")
    print("| model | threads | ampx ms | ORT ms | ampx / ORT | per-round range | max rel err |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ort_compare.") as work:
        for p, make_zoo_inputs in paths:
            name = os.path.basename(p)[:-5]
            try:  # the test models' directory also holds deliberately broken files
                ort.InferenceSession(p, providers=["CPUExecutionProvider"])
            except Exception:
                print(f"<!-- {name}: ONNX Runtime cannot load it; skipped -->", flush=True)
                continue
            for t in threads:
                try:
                    r = compare_model(a, p, t, work, make_zoo_inputs)
                except Exception as e:  # a model ORT or ampx cannot run is a row, not the end
                    print(f"| {name} | {t} | error: {str(e)[:120]} | | | | |", flush=True)
                    continue
                rows.append(r)
                print(f"| {name} | {t} | {r['ampx_ms']:.3f} | {r['ort_ms']:.3f} | **{r['ratio']:.2f}** | "
                      f"{r['ratio_min']:.2f}-{r['ratio_max']:.2f} | {r['max_rel_error']:.1e} |", flush=True)
    if rows:
        ratios = [r["ratio"] for r in rows]
        print(f"\nmedian ratio {statistics.median(ratios):.2f}, worst {max(ratios):.2f} "
              f"({max(rows, key=lambda r: r['ratio'])['model']})")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"machine": model, "isa": isa, "onnxruntime": ort.__version__, "rows": rows}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
