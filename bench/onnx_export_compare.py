#!/usr/bin/env python3
"""ampx's effective-plan ONNX export vs onnxconverter-common's blanket f16
conversion, on the ONNX test models (tests/onnx/make_models.py), all run by
ONNX Runtime's CPU provider in one process, side by side.

Per model and variant: Cast nodes inserted (beyond the original's), nodes
computing in 16-bit (non-Cast nodes with a 16-bit float output, after ONNX
shape inference), weight bytes (initializers and Constant nodes), normwise relative error against the
original model's ORT outputs, and ORT latency (median of --runs, variants
interleaved run by run so that load on the machine hits all alike).

Variants:
  original           the f32 model
  ampx cpu_ref O2    `ampx export --amp O2 --device cpu_ref:0 --dtype f16`
  ampx onednn O2     the same for onednn:0 (skipped when ampx has no such device)
  ampx cpu_ref O2 blind   with --capability-blind: every O2 node in f16
  onnxconverter f16  convert_float_to_float16(model, keep_io_types=True)

Usage: .venv/bin/python bench/onnx_export_compare.py --ampx build/release/apps/ampx
         [--plugin-dir DIR] [--runs 50] [--threads 1] [--work DIR]
Prints a Markdown table (docs/benchmarks.md).
"""
import argparse
import glob
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnxconverter_common import float16

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "onnx")
MODELS = ["resnet", "mobilenet", "encoder", "ocr", "mlp"]
HALF = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


def load_dir(d):
    return {os.path.basename(p)[:-4]: np.load(p) for p in sorted(glob.glob(os.path.join(d, "*.npy")))}


def rel_error(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    denom = np.abs(ref).max()
    err = np.abs(got - ref).max()
    return err / denom if denom > 0 else err


def stats(path, shapes):
    """Cast nodes, 16-bit compute nodes, all nodes, weight bytes."""
    m = onnx.load(path)
    # Pin symbolic input dims so that inference types every value.
    pinned = dict(s.split("=") for s in shapes)
    for i in m.graph.input:
        if i.name in pinned:
            dims = [int(d) for d in pinned[i.name].split("x")]
            for d, v in zip(i.type.tensor_type.shape.dim, dims):
                d.dim_value = v
    m = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input)}
    for t in m.graph.initializer:
        types[t.name] = t.data_type
    casts = sum(n.op_type == "Cast" for n in m.graph.node)
    half = sum(n.op_type != "Cast" and any(types.get(o) in HALF for o in n.output)
               for n in m.graph.node)
    # Weights: initializers and Constant nodes' tensors alike.
    tensors = list(m.graph.initializer) + [a.t for n in m.graph.node if n.op_type == "Constant"
                                           for a in n.attribute if a.name == "value"]
    init_bytes = sum(onnx.numpy_helper.to_array(t).nbytes for t in tensors)
    return casts, half, len(m.graph.node), init_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--plugin-dir", default=None, help="extra ampx plugin directory")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1, help="ORT intra-op threads")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="ampx_export_bench_")
    models_dir = os.path.join(work, "models")
    subprocess.run([sys.executable, os.path.join(TESTS, "make_models.py"), models_dir], check=True)
    ampx = [a.ampx] + (["--plugin-dir", a.plugin_dir] if a.plugin_dir else [])
    devices = subprocess.run(ampx + ["devices"], capture_output=True, text=True).stdout
    have_onednn = "onednn:0" in devices

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    rows = []
    for name in MODELS:
        src = os.path.join(models_dir, name + ".onnx")
        with open(os.path.join(models_dir, name + ".shapes")) as f:
            shapes = f.read().split()
        shape_args = [x for s in shapes for x in ("--input-shape", s)]
        variants = [("original", src)]

        def export(label, device, extra):
            out = os.path.join(work, f"{name}.{label.replace(' ', '_')}.onnx")
            subprocess.run(ampx + ["export", src, "--amp", "O2", "--dtype", "f16", "--device",
                                   device, "-o", out] + extra + shape_args, check=True,
                           capture_output=True)
            variants.append((label, out))

        export("ampx cpu_ref O2", "cpu_ref:0", [])
        if have_onednn:
            export("ampx onednn O2", "onednn:0", [])
        export("ampx cpu_ref O2 blind", "cpu_ref:0", ["--capability-blind"])
        conv = os.path.join(work, f"{name}.onnxconverter_f16.onnx")
        onnx.save(float16.convert_float_to_float16(onnx.load(src), keep_io_types=True), conv)
        variants.append(("onnxconverter f16", conv))

        feeds = load_dir(os.path.join(models_dir, name + ".inputs"))
        expected = load_dir(os.path.join(models_dir, name + ".expected"))
        # A variant ORT refuses to load (onnxconverter-common's output can be
        # ill-typed) is reported as such, not timed.
        sessions, failures = [], []
        for _, p in variants:
            try:
                sessions.append(ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]))
                failures.append(None)
            except Exception as e:  # noqa: BLE001 - ORT raises its own Fail types
                sessions.append(None)
                failures.append(str(e).splitlines()[0])
        live = [i for i, s in enumerate(sessions) if s]
        errors = [None] * len(sessions)
        for i in live:
            s = sessions[i]
            got = dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
            errs = [rel_error(got[k], v) for k, v in expected.items()
                    if np.issubdtype(v.dtype, np.floating)]
            errors[i] = max(errs) if errs else 0.0
        times = [[] for _ in sessions]
        for _ in range(3):  # warm-up
            for i in live:
                sessions[i].run(None, feeds)
        for _ in range(a.runs):
            for i in live:
                t0 = time.perf_counter()
                sessions[i].run(None, feeds)
                times[i].append((time.perf_counter() - t0) * 1e3)
        base_casts = stats(src, shapes)[0]
        for i, (label, path) in enumerate(variants):
            casts, half, nodes, init_bytes = stats(path, shapes)
            rows.append((name, label, nodes, casts - base_casts, half, init_bytes, errors[i],
                         float(np.median(times[i])) if times[i] else None, failures[i]))

    cpu = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    print(f"CPU: {cpu}; {platform.system()} {platform.machine()}; onnxruntime {ort.__version__} "
          f"CPUExecutionProvider, {a.threads} intra-op thread(s); median of {a.runs} runs, "
          f"variants interleaved\n")
    print("| model | variant | nodes | Casts added | 16-bit nodes | weights | rel. error "
          "vs f32 ORT | ORT median ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, label, nodes, casts, half, init_bytes, err, ms, failure in rows:
        tail = (f"{err:.1e} | {ms:.3f} |" if failure is None else
                f"ORT cannot load it: {failure.replace('|', '/')} | — |")
        print(f"| {name} | {label} | {nodes} | {casts} | {half} | {init_bytes / 1024:.1f} KiB | "
              + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
