#!/usr/bin/env python3
"""ampx against ONNX Runtime on the real-model zoo (scripts/model-zoo.sh).

Third-party models as their authors ship them (PaddleOCR v4 through
rapidocr-onnxruntime, Silero VAD), on realistic synthetic inputs: rendered-
looking text images normalised as PaddleOCR does, a voiced 16 kHz audio
frame with a non-zero recurrent state. Seeded, never zeros.

For every model: `ampx plan` first (does it import?); then ONNX Runtime
(CPUExecutionProvider) and `ampx run MODEL --input NAME=FILE.npy ...
--save-outputs DIR` on each --device at each --amp level (capability-blind
above O0, as run_onnx_models.py does), plus `vulkan:0,cpu_ref:0` at O0 when
`ampx devices` lists vulkan:0 (unless --no-vulkan). Each output is compared
with ORT's by normwise relative error within run_onnx_models.py's
tolerances (f32 at O0, f16 above). The text detector's probability map is
the sigmoid of wide-range logits: it runs with the logits as an extra
output; above O0 they are judged, and the map by the error they allow
(expose_sigmoid_logits).

A model marked as importing today (all of them now) must import; one not
marked that does not is reported as "not imported:
<ampx's error>" and fails only under --require-all. A model that imports and
then differs from ORT, or whose run fails, fails the script.

Usage: run_zoo_models.py --ampx PATH [--zoo DIR] --work DIR [--device ID]...
           [--amp LEVEL]... [--no-vulkan] [--require-all] [--iters N]
           [--model NAME]...
Prints one line per check, a markdown table, and 'N passed, N failed, N not
imported'.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import zlib

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_onnx_models import TOL, compare, rel_error  # noqa: E402


# --- inputs ----------------------------------------------------------------

def text_image(rng, h, w, lines):
    """A uint8 HxWx3 image that looks like printed text: a light, slightly
    uneven paper background with noise, dark glyphs made of strokes, words
    separated by spaces, each line at its own height and ink colour, and a
    little blur for the anti-aliasing."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    paper = 235 + 10 * (xx / w) - 8 * (yy / h) + rng.normal(0, 3, (h, w))
    img = np.repeat(paper[:, :, None], 3, axis=2) + rng.uniform(-6, 6, 3)
    for (top, size) in lines:
        ink = rng.uniform(15, 70, 3)
        stroke = max(1, size // 7)
        x = int(rng.integers(2, max(3, size)))
        while x < w - size:
            if rng.random() < 0.15:  # a space between words
                x += size // 2
                continue
            gw = int(size * rng.uniform(0.45, 0.9))
            mask = np.zeros((size, gw), bool)
            for _ in range(int(rng.integers(2, 5))):
                kind = rng.integers(0, 3)
                if kind == 0:  # horizontal bar
                    r = int(rng.integers(0, size - stroke + 1))
                    c0, c1 = sorted(rng.integers(0, gw, 2))
                    mask[r:r + stroke, c0:c1 + stroke] = True
                elif kind == 1:  # vertical bar
                    c = int(rng.integers(0, gw - stroke + 1))
                    r0, r1 = sorted(rng.integers(0, size, 2))
                    mask[r0:r1 + stroke, c:c + stroke] = True
                else:  # diagonal, either way
                    down = rng.random() < 0.5
                    for t in np.linspace(0, 1, 2 * size):
                        r = int(t * (size - stroke))
                        c = int((t if down else 1 - t) * (gw - stroke))
                        mask[r:r + stroke, c:c + stroke] = True
            ys = slice(top, min(h, top + size))
            xs = slice(x, x + gw)
            region = img[ys, xs]
            m = mask[:region.shape[0], :region.shape[1]]
            region[m] = ink
            x += gw + max(1, size // 8)
    # 3x3 box blur: anti-aliased edges
    p = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="edge")
    img = sum(p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9
    return np.clip(img, 0, 255)


def nchw(img):
    return np.ascontiguousarray(img.transpose(2, 0, 1)[None]).astype(np.float32)


def ocr_det_input(rng):
    # PaddleOCR's DetResizeForTest + NormalizeImage: ImageNet mean and std.
    lines = [(12, 22), (44, 18), (72, 30), (120, 14), (150, 24), (190, 36), (240, 20),
             (275, 28)]
    img = text_image(rng, 320, 320, lines) / 255.0
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    return {"x": nchw((img - mean) / std)}


def ocr_line_input(rng, w):
    # The recogniser and the direction classifier: a 48-pixel text line,
    # (x/255 - 0.5)/0.5 as PaddleOCR's resize_norm_img does.
    img = text_image(rng, 48, w, [(8, 32)])
    return {"x": nchw((img / 255.0 - 0.5) / 0.5)}


def voiced_frames(rng, frames):
    """16 kHz audio, 576 samples a frame (silero's 512 + 64 of context): a
    voiced sound at a random pitch (harmonics falling off), a slow
    envelope, and a little noise."""
    n = 576 * frames
    t = np.arange(n) / 16000.0
    f0 = rng.uniform(110, 220)
    voice = sum(np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 2 * np.pi)) / k
                for k in range(1, 9))
    env = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t + rng.uniform(0, np.pi))
    x = 0.2 * env * voice / 2.7 + rng.normal(0, 0.01, n)
    return x.reshape(frames, 576).astype(np.float32)


def vad_state(rng, shape):
    return rng.normal(0, 0.1, shape).astype(np.float32)


def sr16k():
    return np.array(16000, dtype=np.int64)


# name, ampx imports it today, inputs(rng), judge the logits above O0 (see
# expose_sigmoid_logits)
MODELS = [
    ("ch_PP-OCRv4_det_infer", True, ocr_det_input, True),
    ("ch_PP-OCRv4_rec_infer", True, lambda rng: ocr_line_input(rng, 320), False),
    ("ch_ppocr_mobile_v2.0_cls_infer", True, lambda rng: ocr_line_input(rng, 192), False),
    ("silero_vad", True, lambda rng: {"input": voiced_frames(rng, 1),
                                       "state": vad_state(rng, (2, 1, 128)), "sr": sr16k()},
     False),
    ("silero_vad_16k_op15", True, lambda rng: {"input": voiced_frames(rng, 1),
                                                "state": vad_state(rng, (2, 1, 128)),
                                                "sr": sr16k()}, False),
    ("silero_vad_16k_sequence", True, lambda rng: {"input": voiced_frames(rng, 8),
                                                    "h": vad_state(rng, (1, 1, 128)),
                                                    "c": vad_state(rng, (1, 1, 128))}, False),
    ("silero_vad_half", True, lambda rng: {"input": voiced_frames(rng, 1),
                                            "state": vad_state(rng, (2, 1, 128))}, False),
    ("silero_vad_op18_ifless", True, lambda rng: {"input": voiced_frames(rng, 1),
                                                   "state": vad_state(rng, (2, 1, 128)),
                                                   "sr": sr16k()}, False),
    ("silero_vad_openvino_16k", True, lambda rng: {"input": voiced_frames(rng, 1),
                                                    "state": vad_state(rng, (2, 1, 128))}, False),
]


# --- runs ------------------------------------------------------------------

def npy_file_name(name):
    """`ampx run --save-outputs`' file name for an output (cmd_run.cpp):
    anything but [A-Za-z0-9._-] becomes '_'."""
    s = name or "output"
    return "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in s) + ".npy"


def one_line(stderr):
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if not lines:
        return "(no message)"
    errors = [ln for ln in lines if "error" in ln]
    ln = (errors or lines)[-1]
    return ln.removeprefix("ampx: error: ")


def ort_run(path, feeds, iters):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(None, feeds)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return dict(zip(names, outs)), float(np.median(times))


def expose_sigmoid_logits(proto, path):
    """The model with the input of each Sigmoid that makes a graph output
    added as an output: {probability output: logits output}, or {} (then
    `path` is not written). A probability map is the sigmoid of logits of
    wide range (PP-OCR's detector: up to |135|): at O2 their f16 rounding
    (normwise 4e-3, within the f16 tolerance; 0.5 in absolute terms) moves
    p = sigmoid(logit) by up to 0.25 * 0.5 at the few pixels on a text edge,
    where the logit crosses 0: the sigmoid's conditioning, not an error of
    ampx. Above O0 the logits are judged by the tolerance, and the map by
    what they allow: |dp| <= max|d logit| / 4 (sigmoid' <= 1/4), plus 1e-3
    for the map's own 16-bit rounding."""
    producer = {o: n for n in proto.graph.node for o in n.output}
    outputs = {o.name for o in proto.graph.output}
    pairs = {}
    for o in proto.graph.output:
        n = producer.get(o.name)
        if n is not None and n.op_type == "Sigmoid" and n.input[0] not in outputs:
            pairs[o.name] = n.input[0]
    if pairs:
        m = onnx.ModelProto()
        m.CopyFrom(proto)
        for logits in pairs.values():
            m.graph.output.append(onnx.helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT,
                                                                     None))
        onnx.save(m, path)
    return pairs


def onnx_nodes(graph):
    """'N', or 'N (M with subgraphs)' where If/Loop bodies hold more."""
    def count(g):
        return sum(1 + sum(count(sg) for at in n.attribute
                           for sg in ([at.g] if at.HasField("g") else []) + list(at.graphs))
                   for n in g.node)
    top, total = len(graph.node), count(graph)
    return str(top) if top == total else f"{top} ({total} with subgraphs)"


def input_args(files):
    return [arg for name, f in files.items() for arg in ("--input", f"{name}={f}")]


def shape_args(feeds):
    return [arg for name, x in feeds.items() if x.ndim > 0
            for arg in ("--input-shape", f"{name}={'x'.join(map(str, x.shape))}")]


def ampx_plan(a, path, feeds):
    p = subprocess.run([a.ampx, "plan", path, "--device", "cpu_ref:0", "--format", "json"] +
                       shape_args(feeds), capture_output=True, text=True)
    if p.returncode != 0:
        return None, one_line(p.stderr)
    return json.loads(p.stdout), None


def ampx_run(a, name, path, files, device, amp, ref, pairs):
    """(problems, result cell dict). Above O0 the probability outputs of
    `pairs` (expose_sigmoid_logits) are held to their logits' error
    (cell["map"])."""
    tag = device.replace(":", "_").replace(",", "+")
    out = os.path.join(a.work, f"{name}.{tag}.{amp}")
    extra = ["--capability-blind"] if amp != "O0" else []
    cmd = [a.ampx, "run", path, "--device", device, "--amp", amp, "--iters", str(a.iters),
           "--warmup", "1", "--save-outputs", out, "--format", "json"] + extra + input_args(files)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return [f"exit {p.returncode}: {one_line(p.stderr)}"], None
    run = json.loads(p.stdout)
    cell = {"fallbacks": run["summary"]["fallbacks"], "ms": run["median_ms"], "err": 0.0,
            "map": None}
    problems = []
    got = {}
    for oname in ref:
        f = os.path.join(out, npy_file_name(oname))
        if os.path.exists(f):
            got[oname] = np.load(f)
        else:
            problems.append(f"{oname} not saved")
    for oname, g in got.items():
        r = ref[oname]
        logits = pairs.get(oname) if amp != "O0" else None
        if logits is None:
            problem = compare(oname, g, r, TOL[amp])
        elif g.shape != r.shape or logits not in got:
            problem = f"{oname}: shape {g.shape} vs ORT {r.shape}" if logits in got else None
        else:
            dl = np.abs(got[logits].astype(np.float64) - ref[logits]).max()
            dp = np.abs(g.astype(np.float64) - r).max()
            bound = dl / 4 + 1e-3
            problem = (f"{oname}: max error {dp:.3e} > {bound:.3e} (its logits' error / 4)"
                       if not dp <= bound else None)
        if problem:
            problems.append(problem)
        if g.shape == r.shape and not np.issubdtype(r.dtype, np.integer):
            err = float(rel_error(g, r))
            if logits is None:
                cell["err"] = max(cell["err"], err)
            else:
                cell["map"] = max(cell["map"] or 0.0, err)
    return problems, cell


def fmt_cell(cell):
    if cell is None:
        return "failed"
    fb = "yes" if cell["fallbacks"] == 0 else f"no ({cell['fallbacks']} fall back)"
    err = f"{cell['err']:.1e}"
    if cell["map"] is not None:
        err += f" (map {cell['map']:.1e})"
    return f"{fb}, {err}, {cell['ms']:.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--zoo", help="the models' directory (default: scripts/model-zoo.sh --dir)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", action="append", default=None,
                    help="default: cpu_ref:0, and onednn:0 when `ampx devices` lists it")
    ap.add_argument("--amp", action="append", default=None, help="default: O0 and O2")
    ap.add_argument("--no-vulkan", action="store_true",
                    help="no vulkan:0,cpu_ref:0 run at O0 even when vulkan:0 is present")
    ap.add_argument("--require-all", action="store_true",
                    help="a model that does not import fails")
    ap.add_argument("--iters", type=int, default=2, help="timed runs per ampx and ORT run")
    ap.add_argument("--model", action="append", default=None, help="only these models")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if a.zoo is None:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                              "model-zoo.sh")
        p = subprocess.run(["bash", script, "--dir"], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL zoo: {one_line(p.stderr)}")
            return 1
        a.zoo = p.stdout.strip().splitlines()[-1]

    p = subprocess.run([a.ampx, "devices", "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL ampx devices: {one_line(p.stderr)}")
        return 1
    present = {d["id"] for d in json.loads(p.stdout)["devices"]}
    devices = a.device or ["cpu_ref:0"] + (["onednn:0"] if "onednn:0" in present else [])
    amps = a.amp or ["O0", "O2"]
    runs = [(d, amp) for d in devices for amp in amps]
    if "vulkan:0" in present and not a.no_vulkan:
        runs.append(("vulkan:0,cpu_ref:0", "O0"))

    passed = failed = not_imported = 0
    rows = []
    for name, imports, make_inputs, judge_logits in MODELS:
        if a.model and name not in a.model:
            continue
        path = os.path.join(a.zoo, name + ".onnx")
        if not os.path.exists(path):
            print(f"FAIL {name}: {path} missing (run scripts/model-zoo.sh)")
            failed += 1
            continue
        proto = onnx.load(path)
        opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), "?")
        row = {"name": name, "opset": opset, "onnx_nodes": onnx_nodes(proto.graph),
               "cells": {}, "note": None}
        rows.append(row)
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        feeds = make_inputs(rng)
        files = {}
        for iname, x in feeds.items():
            files[iname] = os.path.join(a.work, f"{name}.{iname}.npy")
            np.save(files[iname], x)

        plan, error = ampx_plan(a, path, feeds)
        if plan is None:
            # the table names the model already: "model 'PATH': " goes
            row["note"] = "not imported: " + error.removeprefix(f"model '{path}': ")
            if imports or a.require_all:
                failed += 1
                print(f"FAIL import {name}: {error}")
            else:
                not_imported += 1
                print(f"--   import {name}: not imported: {error}")
            continue
        row["ampx_nodes"] = len(plan["nodes"])
        passed += 1
        print(f"ok   import {name} (opset {opset}, {row['onnx_nodes']} ONNX nodes, "
              f"{row['ampx_nodes']} ampx nodes)")
        # what runs: the zoo's model, or a copy with its logits exposed
        run_path = os.path.join(a.work, name + ".logits.onnx")
        pairs = expose_sigmoid_logits(proto, run_path) if judge_logits else {}
        if not pairs:
            run_path = path
        ref, row["ort_ms"] = ort_run(run_path, feeds, a.iters)
        for device, amp in runs:
            problems, cell = ampx_run(a, name, run_path, files, device, amp, ref, pairs)
            row["cells"][(device, amp)] = cell
            label = f"run {name} {device} {amp}"
            note = f" ({fmt_cell(cell)})" if cell else ""
            if problems:
                failed += 1
                print(f"FAIL {label}{note}: " + "; ".join(problems))
            else:
                passed += 1
                print(f"ok   {label}{note}")
        sys.stdout.flush()

    print()
    print("Each cell: no node fell back (yes/no), worst normwise relative error against "
          "ONNX Runtime, median time per run.")
    print()
    head = ["model", "opset", "nodes (ONNX/ampx)"] + [f"{d} {amp}" for d, amp in runs] + ["ORT"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        if row["note"]:
            cells = [row["note"]] + [""] * (len(runs) - 1) + [""]
            nodes = f"{row['onnx_nodes']}/-"
        else:
            cells = [fmt_cell(row["cells"].get(r)) for r in runs] + [f"{row['ort_ms']:.1f} ms"]
            nodes = f"{row['onnx_nodes']}/{row['ampx_nodes']}"
        print("| " + " | ".join([row["name"], str(row["opset"]), nodes] + cells) + " |")
    print()
    print(f"{passed} passed, {failed} failed, {not_imported} not imported")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
