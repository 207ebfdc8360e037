#!/usr/bin/env python3
"""`ampx train` on an ONNX model, checked by ONNX Runtime.

The test MLP of make_models.py (MatMul+Add, Relu, Dropout, Gemm, Tanh,
Clip, Sigmoid, Gemm, Softmax: its float initializers are the weights) is
trained on a learnable synthetic problem (the label is the arg max of a
fixed linear map of the input) with `ampx train ... --export FILE --format
json`. Then: the loss fell, the accuracy is far above chance, and ONNX
Runtime running the exported model on the evaluation data gets the same
accuracy as ampx reported (the trained weights went out intact).

Usage: train_onnx_model.py --ampx PATH --models DIR --work DIR [--device ID]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

BATCH = 32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", default="cpu_ref:0")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng(0)
    w = rng.normal(size=(20, 6))
    for name, n in (("train", 640), ("eval", 192)):
        x = rng.normal(size=(n, 20)).astype(np.float32)
        os.makedirs(os.path.join(a.work, name), exist_ok=True)
        np.save(os.path.join(a.work, name, "inputs.npy"), x)
        np.save(os.path.join(a.work, name, "labels.npy"), np.argmax(x @ w, axis=1).astype(np.int64))
    exported = os.path.join(a.work, "mlp.trained.onnx")
    # The model's batch dimension is symbolic: it trains at --batch.
    cmd = [a.ampx, "train", os.path.join(a.models, "mlp.onnx"),
           "--data", os.path.join(a.work, "train"), "--eval", os.path.join(a.work, "eval"),
           "--epochs", "15", "--batch", str(BATCH), "--optimizer", "adam", "--lr", "0.01",
           "--device", a.device, "--export", exported, "--format", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL ampx train:", r.stderr.strip())
        return 1
    epochs = [json.loads(line) for line in r.stdout.splitlines()]
    epochs = [e for e in epochs if e["event"] == "epoch"]
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("ok   " if ok else "FAIL ") + what)
        failed += 0 if ok else 1

    first, last = epochs[0], epochs[-1]
    check(last["train_loss"] < 0.9 * first["train_loss"],
          f"train loss fell: {first['train_loss']:.4f} -> {last['train_loss']:.4f}")
    check(last["eval_accuracy"] > 0.5, f"eval accuracy {last['eval_accuracy']:.3f} (chance ~0.17)")
    sess = ort.InferenceSession(exported, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    check(sess.get_inputs()[0].shape[0] == "batch" and sess.get_outputs()[0].shape[0] == "batch",
          f"the export's batch dimension is symbolic: {sess.get_inputs()[0].shape}")
    x = np.load(os.path.join(a.work, "eval", "inputs.npy"))
    y = np.load(os.path.join(a.work, "eval", "labels.npy"))
    # All at once (192 rows), not at the training batch (32).
    pred = sess.run(None, {name: x})[0]
    ort_acc = float((pred.argmax(axis=1) == y).mean())
    check(abs(ort_acc - last["eval_accuracy"]) <= 1.0 / len(y) + 1e-9,
          f"ONNX Runtime on the export: accuracy {ort_acc:.3f}, ampx {last['eval_accuracy']:.3f}")
    print(f"{4 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
