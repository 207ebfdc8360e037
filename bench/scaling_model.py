#!/usr/bin/env python3
"""The alpha-beta model of data-parallel training with ring all-reduce
(issue 41; docs/DISTRIBUTED.md, "Scaling model").

Predicts the scaling efficiency T_c / (T_c + T_exposed) of one rank per
machine at n machines, from a step's measured compute and the model's
gradient bytes. Per bucket of m bytes (e elements), a ring all-reduce takes

    T(n, m) = 2(n-1) alpha  +  2(n-1)/n * m / beta  +  (n-1)/n * e * gamma

(alpha: latency per hop; beta: link bandwidth in bytes/s; gamma: the
reduction's time per element, measured here with NumPy unless --gamma-ns).
Buckets fill in the order the backward pass produces gradients, at most
the bucket size each (a larger tensor alone, none split: ampx's
plan_buckets); one all-reduce runs at a time, in bucket order. Without overlap every bucket waits
for the end of the backward pass; with overlap a bucket starts when its
last gradient is produced (or when the previous bucket finishes) and only
what runs past the end of the backward pass is exposed.

Inputs: the JSON that `bench/data_parallel.py compute` writes (measured
step, backward time and gradient timeline per model), or --model
NAME:PARAMETERS:STEP_MS:BACKWARD_MS by hand (gradients produced uniformly
over the backward pass). Output: Markdown tables, the predictions and the
bucket sizes where smaller buckets stop helping.

    .venv/bin/python bench/scaling_model.py --compute build/dp_compute.json
    .venv/bin/python bench/scaling_model.py --model mlp:4198400:8.52:2.95 --alpha-us 5
"""
import argparse
import json
import math
import sys
import time
from typing import Callable, NamedTuple

import numpy as np

GBIT = 1e9 / 8  # bytes per second in one Gbit/s
MIB = 1 << 20


def ring_allreduce_s(n, wire_bytes, elements, alpha_s, beta_bps, gamma_s):
    """Seconds for one ring all-reduce of one bucket on n ranks."""
    if n <= 1:
        return 0.0
    return (2 * (n - 1) * alpha_s + 2 * (n - 1) / n * wire_bytes / beta_bps +
            (n - 1) / n * elements * gamma_s)


FIRST_BUCKET_BYTES = MIB


def make_buckets(timeline, bucket_bytes):
    """Buckets from [(ready_s, f32_bytes)] in production order, as ampx's
    plan_buckets makes them: at most bucket_bytes of f32 gradient each (the
    first at most 1 MiB), a
    tensor larger than that a bucket of its own, never split; a bucket's
    ready time is its last tensor's. Returns [(ready_s, f32_bytes)]."""
    buckets, size, ready = [], 0, 0.0
    for t, b in timeline:
        # The first bucket holds at most 1 MiB (FIRST_BUCKET_BYTES, DDP's
        # rule, as plan_buckets' kFirstBucketBytes).
        cap = min(bucket_bytes, FIRST_BUCKET_BYTES) if not buckets else bucket_bytes
        if size and size + b > cap:
            buckets.append((ready, size))
            size = 0
            cap = bucket_bytes
        size += b
        ready = t
        if size >= cap:
            buckets.append((ready, size))
            size = 0
    if size:
        buckets.append((ready, size))
    return buckets


def recursive_doubling_s(n, wire_bytes, elements, alpha_s, beta_bps, gamma_s):
    """Seconds for a recursive-doubling all-reduce (log2 n exchanges of the
    whole buffer): what MPI libraries pick for small buffers."""
    if n <= 1:
        return 0.0
    return math.log2(n) * (alpha_s + wire_bytes / beta_bps + elements * gamma_s)


ALGORITHMS = {"ring": ring_allreduce_s, "recursive-doubling": recursive_doubling_s}


class Network(NamedTuple):
    alpha_s: float  # latency per hop
    beta_bps: float  # bytes per second
    gamma_s: float  # reduction time per element
    allreduce: Callable = ring_allreduce_s


def exposed_s(buckets, backward_s, n, wire_bytes_per_elem, net, overlap):
    """Communication time the step waits for after its backward pass, and
    the total communication time (sum over buckets)."""
    end, total = 0.0, 0.0
    for ready, f32_bytes in buckets:
        elements = f32_bytes / 4
        t = net.allreduce(n, elements * wire_bytes_per_elem, elements, net.alpha_s, net.beta_bps,
                          net.gamma_s)
        start = max(ready if overlap else backward_s, end)
        end = start + t
        total += t
    return max(0.0, end - backward_s), total


def measure_gamma_s():
    """Seconds per f32 element of an in-place sum of two 16 MiB buffers
    (the reduction step of a ring all-reduce), best of 20."""
    a = np.ones(4 * MIB, dtype=np.float32)
    b = np.ones_like(a)
    best = math.inf
    for _ in range(20):
        t0 = time.perf_counter()
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    return best / a.size


def uniform_timeline(parameters, backward_s, pieces=1024):
    """Gradients produced at an even rate over the backward pass."""
    total = parameters * 4
    return [(backward_s * (i + 1) / pieces, total / pieces) for i in range(pieces)]


class Model:
    def __init__(self, name, parameters, step_s, backward_s, timeline, note):
        self.name, self.parameters, self.step_s = name, parameters, step_s
        self.backward_s, self.timeline, self.note = backward_s, timeline, note


def load_models(args):
    models = []
    if args.compute:
        with open(args.compute) as f:
            doc = json.load(f)
        for m in doc["models"]:
            step_s = m["step_ms"] / 1e3
            backward_s = m["backward_ms"] / 1e3
            if m.get("timeline"):
                # Measured production order, scaled from the profiled step to
                # the timed step's backward time.
                tl = [(backward_s * frac, b) for frac, b in m["timeline"]]
                note = "measured gradient order"
            else:
                tl = uniform_timeline(m["parameters"], backward_s)
                note = "uniform gradient production (no per-layer profile)"
            models.append(Model(m["model"], m["parameters"], step_s, backward_s, tl, note))
    for spec in args.model or []:
        try:
            name, params, step_ms, bwd_ms = spec.split(":")
            p, s, b = int(params), float(step_ms) / 1e3, float(bwd_ms) / 1e3
        except ValueError:
            sys.exit(f"scaling_model.py: --model '{spec}': expected NAME:PARAMETERS:STEP_MS:BACKWARD_MS")
        if p <= 0 or s <= 0 or not 0 <= b <= s:
            sys.exit(f"scaling_model.py: --model '{spec}': need PARAMETERS > 0, STEP_MS > 0, "
                     "0 <= BACKWARD_MS <= STEP_MS")
        models.append(Model(name, p, s, b, uniform_timeline(p, b), "given by hand, uniform"))
    if not models:
        sys.exit("scaling_model.py: no models: give --compute FILE or --model ...")
    return models


def fmt_bytes(b):
    if b >= MIB:
        return f"{b / MIB:.1f} MiB"
    return f"{b / 1024:.0f} KiB"


def efficiency_table(models, args, nets, dtypes):
    bucket = args.bucket_mb * MIB
    cols = " | ".join(f"n={n} no overlap | n={n} overlap | n={n} overlap, best bucket"
                      for n in args.machines)
    out = [f"| model | step (measured) | backward (measured) | gradients f32 | link | all-reduce | "
           f"{cols} |", "|---|---|---|---|---|---|" + "---|---|---|" * len(args.machines)]

    def cell(step_s, e):
        return f"{100 * step_s / (step_s + e):.0f} % ({e * 1e3:.2f} ms)"

    for m in models:
        buckets = make_buckets(m.timeline, bucket)
        for gbit, net in nets:
            for dname, wbytes in dtypes:
                cells = []
                for n in args.machines:
                    for ov in (False, True):
                        e, _ = exposed_s(buckets, m.backward_s, n, wbytes, net, ov)
                        cells.append(cell(m.step_s, e))
                    s, e = best_bucket(m, n, wbytes, net)
                    cells.append(cell(m.step_s, e) + f", {fmt_bucket(s, m)}")
                out.append(f"| {m.name} | {m.step_s * 1e3:.2f} ms | {m.backward_s * 1e3:.2f} ms | "
                           f"{fmt_bytes(m.parameters * 4)} ({len(buckets)} bucket"
                           f"{'s' if len(buckets) != 1 else ''} of {args.bucket_mb:g} MiB) | "
                           f"{gbit:g} Gbit/s | {dname} | " + " | ".join(cells) + " |")
    return out


def bucket_sizes():
    """Candidate bucket sizes: 16 KiB to 256 MiB in powers of two."""
    return [(1 << k) for k in range(14, 29)]


def best_bucket(m, n, wire_bytes_per_elem, net, tolerance=0.05):
    """Where smaller buckets stop helping, with overlap: the largest bucket
    size (f32 bytes) whose exposed communication is within `tolerance` (and
    1 us) of the least any size reaches; and its exposed time."""
    sweep = []
    for s in bucket_sizes():
        e, _ = exposed_s(make_buckets(m.timeline, s), m.backward_s, n, wire_bytes_per_elem, net,
                         True)
        sweep.append((s, e))
        if s >= m.parameters * 4:
            break
    least = min(e for _, e in sweep)
    return max((s, e) for s, e in sweep if e <= least * (1 + tolerance) + 1e-6)


def fmt_bucket(s, m):
    return "one bucket" if s >= m.parameters * 4 else fmt_bytes(s)


def bucket_table(models, args, nets, dtypes):
    alpha_s = args.alpha_us * 1e-6
    out = ["| model | link | all-reduce | n | s_alpha = n alpha beta (ring, wire bytes) "
           "| largest bucket within 5 % of the best (f32 bytes) | exposed there "
           "| at --bucket-mb | ring k_opt = sqrt(B / 2(n-1)alpha), s = G / k_opt |",
           "|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        total = m.parameters * 4
        for gbit, net in nets:
            for dname, wbytes in dtypes:
                for n in args.machines:
                    s_alpha = n * alpha_s * net.beta_bps
                    s_best, e_best = best_bucket(m, n, wbytes, net)
                    e_def, _ = exposed_s(make_buckets(m.timeline, args.bucket_mb * MIB),
                                         m.backward_s, n, wbytes, net, True)
                    k_opt = math.sqrt(m.backward_s / (2 * (n - 1) * alpha_s)) if alpha_s else math.inf
                    k_cell = (f"{k_opt:.1f}, {fmt_bytes(total / k_opt)}"
                              if 1 < k_opt < math.inf else "-")
                    out.append(
                        f"| {m.name} | {gbit:g} Gbit/s | {dname} | {n} | {fmt_bytes(s_alpha)} | "
                        f"{fmt_bucket(s_best, m)} | {e_best * 1e3:.2f} ms | {e_def * 1e3:.2f} ms | "
                        f"{k_cell} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compute", help="JSON from `bench/data_parallel.py compute`")
    ap.add_argument("--model", action="append",
                    help="NAME:PARAMETERS:STEP_MS:BACKWARD_MS (repeatable)")
    ap.add_argument("--machines", default="8,64", help="comma-separated machine counts")
    ap.add_argument("--gbits", default="25,100", help="comma-separated link speeds, Gbit/s")
    ap.add_argument("--alpha-us", type=float, default=10.0,
                    help="latency per ring hop in us (default 10: Open MPI over kernel TCP)")
    ap.add_argument("--link-efficiency", type=float, default=1.0,
                    help="share of the line rate the all-reduce achieves (default 1: an upper "
                    "bound)")
    ap.add_argument("--gamma-ns", type=float,
                    help="reduction time per f32 element in ns (default: measured here)")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="bucket size in MiB")
    ap.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="ring",
                    help="all-reduce algorithm (default ring; recursive-doubling: log2(n) "
                    "exchanges of the whole buffer, for small buffers)")
    args = ap.parse_args()
    try:
        args.machines = [int(x) for x in args.machines.split(",")]
        gbits = [float(x) for x in args.gbits.split(",")]
    except ValueError:
        sys.exit("scaling_model.py: --machines and --gbits take comma-separated numbers")
    if min(args.machines) < 2 or min(gbits) <= 0 or args.alpha_us < 0 or args.bucket_mb <= 0 \
            or not 0 < args.link_efficiency <= 1:
        sys.exit("scaling_model.py: need machines >= 2, Gbit/s > 0, alpha >= 0, bucket > 0, "
                 "0 < link efficiency <= 1")
    models = load_models(args)
    gamma_s = args.gamma_ns * 1e-9 if args.gamma_ns is not None else measure_gamma_s()
    nets = [(g, Network(args.alpha_us * 1e-6, g * GBIT * args.link_efficiency, gamma_s,
                        ALGORITHMS[args.algorithm])) for g in gbits]
    dtypes = [("f32", 4), ("16-bit", 2)]
    print(f"Predictions (alpha-beta model, {args.algorithm} all-reduce, one rank per machine): alpha = "
          f"{args.alpha_us:g} us per hop, beta = link x {args.link_efficiency:g}, gamma = "
          f"{gamma_s * 1e9:.3f} ns per element, buckets of {args.bucket_mb:g} MiB.")
    for m in models:
        print(f"- {m.name}: {m.parameters} parameters, {m.note}")
    print()
    print("Scaling efficiency T_c / (T_c + T_exposed) (exposed communication per step):")
    print()
    print("\n".join(efficiency_table(models, args, nets, dtypes)))
    print()
    print("Where smaller buckets stop helping (with overlap):")
    print()
    print("\n".join(bucket_table(models, args, nets, dtypes)))


if __name__ == "__main__":
    main()
