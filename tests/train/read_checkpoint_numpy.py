"""A checkpoint of `ampx train` read with the Python standard library and
NumPy alone (docs/TRAINING.md, "Checkpoints"), its tensors' CRC-32s checked
with zlib.crc32; then a flipped byte is refused on --resume, naming the
tensor (issue 36). When the `safetensors` package happens to be installed,
it must read the file too (it is not a requirement)."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
          "I32": np.int32}


def read_checkpoint(path):
    """(metadata, {name: array}) with every tensor's CRC-32 checked."""
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__")
    crcs = json.loads(meta["crc32"])
    tensors = {}
    for name, v in header.items():
        lo, hi = v["data_offsets"]
        raw = b[8 + n + lo:8 + n + hi]
        if zlib.crc32(raw) != int(crcs[name], 16):
            raise SystemExit(f"{path}: tensor '{name}': CRC-32 mismatch")
        tensors[name] = np.frombuffer(raw, dtype=DTYPES[v["dtype"]]).reshape(v["shape"])
    return meta, tensors, 8 + n, header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    rng = np.random.default_rng(36)
    x = rng.uniform(0, 1, size=(16, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, size=16).astype(np.int64)
    np.save(os.path.join(args.work, "x.npy"), x)
    np.save(os.path.join(args.work, "y.npy"), y)
    ckpt = os.path.join(args.work, "ckpt")
    train = [args.ampx, "train", "builtin:digits-cnn", "--device", "cpu_ref:0", "--batch", "8",
             "--optimizer", "adam", "--data",
             os.path.join(args.work, "x.npy") + "," + os.path.join(args.work, "y.npy"),
             "--checkpoint", ckpt]
    subprocess.run(train + ["--epochs", "1"], check=True, stdout=subprocess.DEVNULL)
    path = os.path.join(ckpt, "epoch-0001.ampxckpt")
    meta, tensors, data_start, header = read_checkpoint(path)
    assert meta["format"] == "ampx.checkpoint/2", meta["format"]
    assert meta["epoch"] == "1" and meta["step"] == "2", (meta["epoch"], meta["step"])
    order = json.loads(meta["order"])
    assert sorted(order) == sorted(tensors), (order, list(tensors))
    assert any(k.endswith("/adam_m") for k in tensors), list(tensors)
    assert any(t.ndim == 4 for t in tensors.values()), "a convolution's weight"
    for name, t in tensors.items():
        if t.dtype.kind == "f":
            assert np.isfinite(t).all(), name
    try:
        from safetensors.numpy import load_file  # optional: not in requirements.txt
    except ImportError:
        load_file = None
    if load_file is not None:
        other = load_file(path)
        for name, t in tensors.items():
            assert np.array_equal(other[name], t), name
    # A byte of the last tensor (in file order) flipped: --resume refuses it
    # in one line naming that tensor.
    last = max(header, key=lambda k: header[k]["data_offsets"][1])
    at = data_start + header[last]["data_offsets"][1] - 1
    b = bytearray(open(path, "rb").read())
    b[at] ^= 0x01
    open(path, "wb").write(bytes(b))
    r = subprocess.run(train + ["--epochs", "2", "--resume"], capture_output=True, text=True)
    want = f"tensor '{last}': its data does not match its checksum"
    if r.returncode == 0 or want not in r.stderr or r.stderr.count("\n") != 1:
        raise SystemExit(f"--resume of a corrupt checkpoint: rc {r.returncode}, {r.stderr!r}")
    print(f"read {len(tensors)} tensors with NumPy alone; a flipped byte in '{last}' refused")


if __name__ == "__main__":
    sys.exit(main())
