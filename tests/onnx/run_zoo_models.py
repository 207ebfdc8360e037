#!/usr/bin/env python3
"""ampx against ONNX Runtime on the real-model zoo (scripts/model-zoo.sh).

Third-party models as their authors ship them (PaddleOCR v4 through
rapidocr-onnxruntime, Silero VAD), on realistic synthetic inputs: rendered-
looking text images normalised as PaddleOCR does, a voiced 16 kHz audio
frame with a non-zero recurrent state; and torchvision models exported by
scripts/model-zoo.sh (random weights; opset 13 and a few at opsets 9 to 11)
on a standard normal 1x3x224x224 image. Seeded, never zeros.

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

Then the OCR pair end to end (ocr_end_to_end): a text line rendered from
bitmap glyphs through the detector, PaddleOCR's DB postprocess (threshold
0.3, the largest region's box, unclip 1.5), the crop at height 48 through the
recogniser and a greedy CTC decode, in ORT and in ampx on each --device at
each --amp level: the boxes must agree within 2 pixels a side and the
decoded text must be ORT's exactly at O0 (above O0 a difference is
reported, not failed). --no-ocr skips it.

A model marked as importing today (all of them now) must import; one not
marked that does not is reported as "not imported:
<ampx's error>" and fails only under --require-all. A model that imports and
then differs from ORT, or whose run fails, fails the script.

Usage: run_zoo_models.py --ampx PATH [--zoo DIR] --work DIR [--device ID]...
           [--amp LEVEL]... [--no-vulkan] [--require-all] [--iters N]
           [--model NAME]... [--no-ocr]
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
from run_onnx_models import TOL, check_verdict, compare, rel_error, run_ampx_json  # noqa: E402


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


def image_224(rng):
    """The torchvision exports' input: 1x3x224x224, standard normal (what an
    ImageNet-normalised image looks like to the network: zero mean, unit
    spread per channel)."""
    return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}


# The torchvision exports of scripts/model-zoo.sh (bench/export_torchvision_zoo.py:
# random weights, fixed seed), NAME.onnx at opset 13, NAME_opsetN.onnx at an
# older opset.
TORCHVISION = ["mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0", "resnet18",
               "squeezenet1_1_opset9", "shufflenet_v2_x1_0_opset9", "resnet18_opset10",
               "mobilenet_v2_opset11"]


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
] + [(name, True, image_224, False) for name in TORCHVISION]


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
    run, error = run_ampx_json(cmd, amp)
    if error:
        return [f"exit {error[0]}: {one_line(error[1])}"], None
    cell = {"fallbacks": run["summary"]["fallbacks"], "ms": run["median_ms"], "err": 0.0,
            "map": None, "check": check_verdict(run)}
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
    check = f"; {cell['check']}" if cell.get("check") else ""
    return f"{fb}, {err}, {cell['ms']:.1f} ms{check}"


# --- the OCR pair end to end -------------------------------------------------
#
# A rendered text line through the detector and the recogniser, as
# PaddleOCR's pipeline chains them (DB postprocess, crop, resize to height 48,
# CTC decode), once with ONNX Runtime and once with ampx on each device and
# level: the boxes found in the two probability maps must agree within
# OCR_BOX_PX pixels a side, and the text ampx's recogniser decodes from the
# crop of ORT's box must be ORT's exactly at O0 (above O0 a difference is
# reported, not failed: f16 may flip a near-tie between two characters).

OCR_DET = "ch_PP-OCRv4_det_infer"
OCR_REC = "ch_PP-OCRv4_rec_infer"
OCR_TEXT = "AMPX RUN 42"
OCR_BOX_PX = 2
OCR_THRESH = 0.3  # PaddleOCR DBPostProcess' thresh
OCR_UNCLIP = 1.5  # and its unclip_ratio

# 5x7 bitmap glyphs ('1' ink), one row a word: digits and the capitals of
# OCR_TEXT and a few more
FONT = {
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110",
    "X": "10001 10001 01010 00100 01010 10001 10001",
}


def rendered_line(rng, text, h=320, w=320, scale=4):
    """A uint8-valued HxWx3 float image: `text` in FONT's glyphs scaled by
    `scale` (a space is a glyph's advance), in one dark ink on the paper of
    text_image (gradient, noise, tint), at a seeded place; 3x3 box blur."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    paper = 235 + 10 * (xx / w) - 8 * (yy / h) + rng.normal(0, 3, (h, w))
    img = np.repeat(paper[:, :, None], 3, axis=2) + rng.uniform(-6, 6, 3)
    ink = rng.uniform(15, 50, 3)
    advance = 6 * scale
    width = advance * len(text) - scale
    top = int(rng.integers(h // 4, 3 * h // 4 - 7 * scale))
    x = int(rng.integers(4, max(5, w - width - 4)))
    for ch in text:
        if ch != " ":
            glyph = np.array([[c == "1" for c in row] for row in FONT[ch].split()])
            mask = np.kron(glyph, np.ones((scale, scale), bool))
            img[top:top + mask.shape[0], x:x + mask.shape[1]][mask] = ink
        x += advance
    p = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="edge")
    img = sum(p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9
    return np.clip(img, 0, 255)


def det_normalise(img):
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    return nchw((img / 255.0 - mean) / std)


def text_box(prob):
    """PaddleOCR's DB postprocess, simplified: the probability map [1,1,H,W]
    thresholded at OCR_THRESH; of its 8-connected regions the largest (in
    pixels); its axis-aligned bounding box grown on every side by the unclip
    distance area * OCR_UNCLIP / perimeter (of the box), clipped to the
    image. (x0, y0, x1, y1), end exclusive, or None when nothing passes."""
    on = prob.reshape(prob.shape[-2:]) > OCR_THRESH
    h, w = on.shape
    seen = np.zeros_like(on)
    best = None
    for y, x in zip(*np.nonzero(on)):
        if seen[y, x]:
            continue
        seen[y, x] = True
        stack, n = [(y, x)], 0
        y0, y1, x0, x1 = y, y, x, x
        while stack:
            cy, cx = stack.pop()
            n += 1
            y0, y1, x0, x1 = min(y0, cy), max(y1, cy), min(x0, cx), max(x1, cx)
            for ny in (cy - 1, cy, cy + 1):
                for nx in (cx - 1, cx, cx + 1):
                    if 0 <= ny < h and 0 <= nx < w and on[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        if best is None or n > best[0]:
            best = (n, int(x0), int(y0), int(x1) + 1, int(y1) + 1)
    if best is None:
        return None
    _, x0, y0, x1, y1 = best
    bw, bh = x1 - x0, y1 - y0
    d = bw * bh * OCR_UNCLIP / (2 * (bw + bh))
    return (max(0, int(round(x0 - d))), max(0, int(round(y0 - d))),
            min(w, int(round(x1 + d))), min(h, int(round(y1 + d))))


def resize_bilinear(img, oh, ow):
    """HxWxC, half-pixel centres (cv2.resize's INTER_LINEAR)."""
    ih, iw = img.shape[:2]
    fy = np.clip((np.arange(oh) + 0.5) * ih / oh - 0.5, 0, ih - 1)
    fx = np.clip((np.arange(ow) + 0.5) * iw / ow - 0.5, 0, iw - 1)
    y0, x0 = np.floor(fy).astype(int), np.floor(fx).astype(int)
    y1, x1 = np.minimum(y0 + 1, ih - 1), np.minimum(x0 + 1, iw - 1)
    wy, wx = (fy - y0)[:, None, None], (fx - x0)[None, :, None]
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def rec_input_from(img, box, h=48, w=320):
    """PaddleOCR's resize_norm_img: the crop resized to height h keeping its
    aspect (at most w wide), (x/255 - 0.5)/0.5, zero-padded on the right to
    w."""
    x0, y0, x1, y1 = box
    crop = img[y0:y1, x0:x1]
    rw = min(w, int(np.ceil(h * crop.shape[1] / crop.shape[0])))
    x = np.zeros((1, 3, h, w), np.float32)
    x[0, :, :, :rw] = ((resize_bilinear(crop, h, rw) / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)
    return x


def ctc_greedy(probs):
    """[1, T, C] -> the class of each time step, repeats collapsed, blanks
    (0) dropped."""
    idx = probs.reshape(-1, probs.shape[-1]).argmax(-1)
    return [int(c) for t, c in enumerate(idx) if c != 0 and (t == 0 or c != idx[t - 1])]


def rec_charset(proto):
    """The recogniser's classes as rapidocr reads them: 'blank', the
    'character' metadata's lines, ' ' (use_space_char); None when the model
    carries none."""
    meta = {p.key: p.value for p in proto.metadata_props}
    if "character" not in meta:
        return None
    return ["blank"] + meta["character"].splitlines() + [" "]


def decoded(seq, chars):
    if chars is None or any(c >= len(chars) for c in seq):
        return "indices " + " ".join(map(str, seq))
    return repr("".join(chars[c] for c in seq))


def ampx_outputs(a, path, files, device, amp, out):
    """`ampx run` once, its outputs as {file name: array}, or (None, error)."""
    extra = ["--capability-blind"] if amp != "O0" else []
    cmd = [a.ampx, "run", path, "--device", device, "--amp", amp, "--iters", "1",
           "--warmup", "0", "--save-outputs", out, "--format", "json"] + extra + input_args(files)
    _, error = run_ampx_json(cmd, amp)
    if error:
        return None, f"exit {error[0]}: {one_line(error[1])}"
    return {f: np.load(os.path.join(out, f)) for f in os.listdir(out) if f.endswith(".npy")}, None


def fmt_box(box):
    return "none" if box is None else f"({box[0]},{box[1]})-({box[2]},{box[3]})"


def ocr_end_to_end(a, runs):
    """(passed, failed, reported, summary lines). `runs`: (device, amp)."""
    det_path = os.path.join(a.zoo, OCR_DET + ".onnx")
    rec_path = os.path.join(a.zoo, OCR_REC + ".onnx")
    rng = np.random.default_rng(zlib.crc32(b"ocr end to end"))
    img = rendered_line(rng, OCR_TEXT)
    det_x = det_normalise(img)
    det_file = os.path.join(a.work, "ocr.det.x.npy")
    np.save(det_file, det_x)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    det = ort.InferenceSession(det_path, so, providers=["CPUExecutionProvider"])
    det_out = npy_file_name(det.get_outputs()[0].name)
    ort_box = text_box(det.run(None, {"x": det_x})[0])
    if ort_box is None:
        print(f"FAIL ocr ORT: no text region above {OCR_THRESH} in the detector's map")
        return 0, 1, 0, []
    rec_x = rec_input_from(img, ort_box)
    rec_file = os.path.join(a.work, "ocr.rec.x.npy")
    np.save(rec_file, rec_x)
    rec = ort.InferenceSession(rec_path, so, providers=["CPUExecutionProvider"])
    rec_out = npy_file_name(rec.get_outputs()[0].name)
    chars = rec_charset(onnx.load(rec_path))
    ort_seq = ctc_greedy(rec.run(None, {"x": rec_x})[0])
    ort_text = decoded(ort_seq, chars)
    print(f"--   ocr ORT: box {fmt_box(ort_box)}, reads {ort_text} (rendered {OCR_TEXT!r})")
    summary = ["| OCR end to end | detector's box | from ORT's | recogniser reads (ORT's crop) "
               "| vs ORT |", "|---|---|---|---|---|",
               f"| ONNX Runtime | {fmt_box(ort_box)} | | {ort_text} | |"]
    passed = failed = reported = 0
    for device, amp in runs:
        tag = f"{device.replace(':', '_').replace(',', '+')}.{amp}"
        label = f"ocr {device} {amp}"
        outs, err = ampx_outputs(a, det_path, {"x": det_file}, device, amp,
                                 os.path.join(a.work, f"ocr.det.{tag}"))
        if outs is None or det_out not in outs:
            box_cell = "failed | "
            failed += 1
            print(f"FAIL {label} det: {err or det_out + ' not saved'}")
        else:
            box = text_box(outs[det_out])
            off = None if box is None else max(abs(p - q) for p, q in zip(box, ort_box))
            box_cell = f"{fmt_box(box)} | " + ("no region" if off is None else f"{off} px")
            if off is not None and off <= OCR_BOX_PX:
                passed += 1
                print(f"ok   {label} det: box {fmt_box(box)}, {off} px from ORT's "
                      f"(at most {OCR_BOX_PX})")
            elif amp != "O0":
                reported += 1
                box_cell += " (reported)"
                print(f"--   {label} det: box {fmt_box(box)}, ORT's {fmt_box(ort_box)} (more "
                      f"than {OCR_BOX_PX} px apart; reported, not failed above O0)")
            else:
                failed += 1
                print(f"FAIL {label} det: box {fmt_box(box)}, ORT's {fmt_box(ort_box)} (more "
                      f"than {OCR_BOX_PX} px apart)")
        outs, err = ampx_outputs(a, rec_path, {"x": rec_file}, device, amp,
                                 os.path.join(a.work, f"ocr.rec.{tag}"))
        if outs is None or rec_out not in outs:
            text_cell, verdict = "failed", "failed"
            failed += 1
            print(f"FAIL {label} rec: {err or rec_out + ' not saved'}")
        else:
            seq = ctc_greedy(outs[rec_out])
            text_cell = decoded(seq, chars)
            if seq == ort_seq:
                verdict = "same"
                passed += 1
                print(f"ok   {label} rec: reads {text_cell}, as ORT")
            elif amp != "O0":
                verdict = "differs (reported)"
                reported += 1
                print(f"--   {label} rec: reads {text_cell}, ORT {ort_text} (reported, not "
                      f"failed above O0)")
            else:
                verdict = "differs"
                failed += 1
                print(f"FAIL {label} rec: reads {text_cell}, ORT {ort_text}")
        summary.append(f"| {device} {amp} | {box_cell} | {text_cell} | {verdict} |")
        sys.stdout.flush()
    return passed, failed, reported, summary


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
    ap.add_argument("--no-ocr", action="store_true",
                    help="no end-to-end OCR check (it runs when both OCR models are checked)")
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

    reported = 0
    ocr_summary = []
    imported = {row["name"] for row in rows if not row["note"]}
    if not a.no_ocr and {OCR_DET, OCR_REC} <= imported:
        t0 = time.perf_counter()
        p, f, reported, ocr_summary = ocr_end_to_end(a, [(d, amp) for d in devices
                                                         for amp in amps])
        passed += p
        failed += f
        ocr_s = time.perf_counter() - t0

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
    if ocr_summary:
        print()
        print(f"End to end: {OCR_TEXT!r} rendered, the detector's map thresholded at "
              f"{OCR_THRESH}, the largest region's box unclipped by {OCR_UNCLIP}; the "
              f"recogniser on the crop of ORT's box, greedy CTC ({ocr_s:.0f} s in all).")
        print()
        print("\n".join(ocr_summary))
    print()
    print(f"{passed} passed, {failed} failed, {not_imported} not imported"
          + (f", {reported} differing above O0 (reported)" if reported else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
