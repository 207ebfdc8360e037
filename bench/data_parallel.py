#!/usr/bin/env python3
"""Issue 41's data-parallel benchmark (docs/DISTRIBUTED.md, "Scaling model";
docs/benchmarks.md, "Data-parallel").

`compute`: the single-process inputs of the scaling model. For each model,
`ampx --threads T train ... --format json` at 1 and 2 threads (and at 1
thread with half the batch, what each of 2 ranks computes), the rounds
alternating; the step time is the median of a run's steps after its first
epoch. One `--profile-step` run per round gives the backward pass's share
of the step (nodes named `*/grad/*`) and the order in which each layer's
gradients are complete; a short text run gives the trainable parameters.
Writes JSON for `bench/scaling_model.py --compute` (the quietest round's
2-thread step and the quietest profile: the model is of dedicated
machines, this one is shared) and prints a table.

`compare`: 1 rank x 2 threads against 2 ranks x 1 thread (`mpirun
--oversubscribe -np 2 --bind-to none -x OMP_NUM_THREADS=1 ampx --threads 1
train ... --data-parallel`) at the same global batch (each rank --batch
b/2), f32 and 16-bit all-reduce, the runs alternating, with the
`data_parallel` fields of the epoch records. Prints a Markdown table.

    .venv/bin/python bench/data_parallel.py compute --out build/dp_compute.json
    .venv/bin/python bench/scaling_model.py --compute build/dp_compute.json
    .venv/bin/python bench/data_parallel.py compare --rounds 3
    .venv/bin/python bench/data_parallel.py zero --rounds 3

`zero`: 2 ranks replicated against 2 ranks with --shard-optimizer (ZeRO-1),
Adam at O2 by default: step time, communication, the weights' all-gather,
and rank 0's optimizer state and whole state against the unsharded run's.

Models: builtin:digits-cnn on builtin:digits (batch 32), builtin:cnn (the
CIFAR-shaped CNN, 3x32x32, batch 32) and builtin:mlp (4 x 1024, batch 64)
on random data of their shapes (uniform in [-1, 1], labels in [0, 10),
seed 1), written as .npy into a scratch directory.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

# name, model, sample shape (None: builtin:digits), batch, samples
MODELS = {
    "digits-cnn": ("builtin:digits-cnn", None, 32, None),
    "cnn": ("builtin:cnn", (3, 32, 32), 32, 256),
    "mlp": ("builtin:mlp", (1024,), 64, 512),
}
MPIRUN_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class BenchError(Exception):
    pass


def fail(msg):
    sys.exit(f"data_parallel.py: {msg}")


def make_data(name, scratch):
    """The --data argument for a model: builtin:digits or random .npy."""
    _, shape, _, n = MODELS[name]
    if shape is None:
        return "builtin:digits"
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (n, *shape)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    d = os.path.join(scratch, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "inputs.npy"), x)
    np.save(os.path.join(d, "labels.npy"), y)
    return d


def run(cmd, env_extra, what):
    env = dict(os.environ, **env_extra)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: timed out after 1800 s: {' '.join(cmd)}")
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise BenchError(f"{what}: exit {p.returncode}: {last}")
    return p.stdout


def records(stdout, what):
    try:
        return [json.loads(line) for line in stdout.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise BenchError(f"{what}: output is not JSON lines: {e}")


def train_cmd(args, name, data, threads, batch, extra=()):
    model, _, _, _ = MODELS[name]
    return [args.ampx, "--threads", str(threads), "train", model, "--data", data, "--batch",
            str(batch), "--epochs", str(args.epochs), "--device", args.device, "--format",
            "json", *extra]


def step_ms(recs):
    """Median step of the epochs after the first (the first warms up)."""
    epochs = [r for r in recs if r.get("event") == "epoch"]
    steps = [t for r in epochs[1:] for t in r["step_times_ms"] if t is not None]
    if not steps:
        raise BenchError("no timed steps after the first epoch (raise --epochs)")
    return statistics.median(steps), epochs


def mean_step_ms(epochs):
    """Mean step of the epochs after the first, as their step_ms weighs it."""
    steps = [t for r in epochs[1:] for t in r["step_times_ms"] if t is not None]
    return sum(steps) / len(steps)


SHAPE = re.compile(r"\w+\[([0-9x]*)\]")


def elements(dims):
    n = 1
    for d in dims.split("x") if dims else []:
        n *= int(d)
    return n


def layer_parameters(step):
    """Trainable parameters a forward node owns, from its input shapes."""
    inputs = SHAPE.findall(step["shapes"].split(" -> ")[0])
    if step["op"] in ("Conv2d", "Gemm", "Conv", "MatMul"):
        return sum(elements(d) for d in inputs[1:])
    if step["op"] == "BatchNormTraining":
        return sum(elements(d) for d in inputs[1:3])  # scale, bias (not the running stats)
    return 0


def profile_split(recs, parameters):
    """From a profiled step: (the nodes' total time in us, the backward
    share of it, the gradient timeline [(fraction of the backward pass, f32
    bytes)] or None when the layers' parameters do not add up to the
    trainable ones)."""
    prof = [r for r in recs if r.get("event") == "profile"]
    if not prof:
        raise BenchError("no profile record")
    steps = prof[0]["per_node"]["steps"]
    owned = {s["name"]: layer_parameters(s) for s in steps if "/grad/" not in s["name"]}
    backward = [s for s in steps if "/grad/" in s["name"]]
    total = sum(s["measured_us"] for s in steps)
    bwd = sum(s["measured_us"] for s in backward)
    done, t = {}, 0.0
    for s in backward:
        t += s["measured_us"]
        done[s["name"].split("/grad/")[0]] = t  # the layer's last gradient node so far
    timeline = sorted((t / bwd, owned[layer] * 4) for layer, t in done.items()
                      if owned.get(layer))
    if sum(b for _, b in timeline) != parameters * 4:
        timeline = None
    return total, bwd / total, timeline


def parameters_of(args, name, data):
    model = MODELS[name][0]
    out = run([args.ampx, "train", model, "--data", data, "--epochs", "1", "--device",
               args.device], {}, f"{name}: parameter count")
    m = re.search(r"\((\d+) parameters\)", out)
    if not m:
        raise BenchError(f"{name}: no '(N parameters)' in ampx train's output")
    return int(m.group(1))


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f}"


def cmd_compute(args):
    names = args.models.split(",")
    scratch = tempfile.mkdtemp(prefix="ampx-dp-")
    doc = {"device": args.device, "models": [], "load_average_start": os.getloadavg()[0]}
    try:
        data = {n: make_data(n, scratch) for n in names}
        params = {n: parameters_of(args, n, data[n]) for n in names}
        configs = [("2 threads, batch b", 2, 1), ("1 thread, batch b", 1, 1),
                   ("1 thread, batch b/2", 1, 2)]
        times = {(n, c[0]): [] for n in names for c in configs}
        profiles = {n: [] for n in names}  # (total us, backward share, timeline) per round
        for rnd in range(args.rounds):
            for n in names:
                batch = MODELS[n][2]
                order = configs if rnd % 2 == 0 else configs[::-1]
                for label, threads, div in order:
                    recs = records(run(train_cmd(args, n, data[n], threads, batch // div),
                                       {"OMP_NUM_THREADS": str(threads)}, f"{n} {label}"), n)
                    times[(n, label)].append(step_ms(recs)[0])
                recs = records(run(train_cmd(args, n, data[n], 2, batch,
                                             ["--profile-step", str(args.profile_step)]),
                                   {"OMP_NUM_THREADS": "2"}, f"{n} profile"), n)
                profiles[n].append(profile_split(recs, params[n]))
    except BenchError as e:
        fail(str(e))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    doc["load_average_end"] = os.getloadavg()[0]
    print(f"Compute per step on {args.device} ({args.rounds} rounds, median of each run's steps "
          "after its first epoch; cells: median over rounds (range of the rounds); load average "
          f"{doc['load_average_start']:.2f} at the start, {doc['load_average_end']:.2f} at the "
          "end). The model's inputs: the quietest round's step at 2 threads, and the backward "
          "share and gradient order of the quietest profiled step (least node time):\n")
    print("| model | parameters | gradients f32 | b | " + " | ".join(c[0] for c in configs) +
          " | backward share (profiled, 2 threads) | model input: step, backward |")
    print("|---|---|---|---|" + "---|" * len(configs) + "---|---|")
    for n in names:
        med = {c[0]: statistics.median(times[(n, c[0])]) for c in configs}
        shares = [p[1] for p in profiles[n]]
        _, share, timeline = min(profiles[n], key=lambda p: p[0])
        step = min(times[(n, configs[0][0])])
        cells = [f"{med[c[0]]:.2f} ms ({spread(times[(n, c[0])])})" for c in configs]
        print(f"| {n} | {params[n]} | {params[n] * 4 / 2**20:.2f} MiB | {MODELS[n][2]} | " +
              " | ".join(cells) + f" | {100 * statistics.median(shares):.0f} % "
              f"({spread([100 * s for s in shares])} %) | {step:.2f} ms, {step * share:.2f} ms "
              f"({100 * share:.0f} %) |")
        doc["models"].append({
            "model": n, "parameters": params[n], "batch": MODELS[n][2], "threads": 2,
            "step_ms": step, "backward_ms": step * share, "backward_share": share,
            "step_ms_by_config": {c[0]: times[(n, c[0])] for c in configs},
            "timeline": timeline})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"\nwritten: {args.out}")


DP_FIELDS = ("buckets", "allreduce_dtype", "wire_bytes_per_step", "comm_ms_per_step",
             "exposed_comm_ms_per_step", "overlap")


def dp_summary(epochs, ranks):
    """The data_parallel fields of the epochs after the first (medians)."""
    dps = [e.get("data_parallel") for e in epochs[1:]]
    if not dps or any(d is None for d in dps):
        raise BenchError("the epoch records have no 'data_parallel' object")
    if any(d.get("ranks") != ranks for d in dps):
        # N singletons (an mpirun of another MPI) would each train alone.
        raise BenchError(f"'data_parallel' says ranks {dps[0].get('ranks')}, mpirun started {ranks}")
    out = {}
    for k in DP_FIELDS:
        vals = [d.get(k) for d in dps]
        if any(v is None for v in vals):
            raise BenchError(f"'data_parallel' has no '{k}'")
        out[k] = vals[0] if isinstance(vals[0], str) else statistics.median(vals)
    return out


def cmd_compare(args):
    help_text = subprocess.run([args.ampx, "train", "--help"], capture_output=True,
                               text=True).stdout
    if "--data-parallel" not in help_text:
        fail(f"{args.ampx} train has no --data-parallel yet (issue 41, item 1): "
             "`compute` runs without it")
    mpirun = shutil.which(args.mpirun)
    if not mpirun:
        fail(f"no '{args.mpirun}' on PATH")
    names = args.models.split(",")
    dtypes = args.allreduce_dtypes.split(",")
    scratch = tempfile.mkdtemp(prefix="ampx-dp-")
    results, load_start = {}, os.getloadavg()[0]
    try:
        data = {n: make_data(n, scratch) for n in names}
        for rnd in range(args.rounds):
            for n in names:
                batch = MODELS[n][2]
                modes = [("1 rank x 2 threads", None)] + [("2 ranks x 1 thread", d) for d in dtypes]
                for label, dt in (modes if rnd % 2 == 0 else modes[::-1]):
                    if dt is None:
                        cmd, env = train_cmd(args, n, data[n], 2, batch), {"OMP_NUM_THREADS": "2"}
                    else:
                        cmd = [mpirun, "--oversubscribe", "-np", "2", "--bind-to", "none",
                               "--mca", "btl", "self,vader", "-x", "OMP_NUM_THREADS=1",
                               *train_cmd(args, n, data[n], 1, batch // 2,
                                          ["--data-parallel", "--allreduce-dtype", dt,
                                           "--bucket-mb", str(args.bucket_mb)])]
                        env = dict(MPIRUN_ENV, OMP_NUM_THREADS="1")
                    what = f"{n} {label} {dt or ''}".strip()
                    ms, epochs = step_ms(records(run(cmd, env, what), what))
                    dp = dp_summary(epochs, 2) if dt else None
                    results.setdefault((n, label, dt), []).append((ms, mean_step_ms(epochs), dp))
    except BenchError as e:
        fail(str(e))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"Data-parallel on {args.device}, {args.rounds} rounds alternating, the same global "
          f"batch (2 ranks: b/2 each), buckets of {args.bucket_mb:g} MiB, load average "
          f"{load_start:.2f} at the start and {os.getloadavg()[0]:.2f} at the end. Cells: median "
          "over rounds (range of the rounds) of each run's median step after its first epoch; "
          "'mean step' and the communication columns are means per step (the JSON gives "
          "communication as means), so compare exposed time with the mean step:\n")
    print("| model | b | configuration | all-reduce | step | samples/s | against 1 rank "
          "| mean step | buckets | wire bytes/step | comm ms/step | exposed ms/step | overlap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, label, dt), rs in results.items():
        steps = [r[0] for r in rs]
        med = statistics.median(steps)
        base = statistics.median(r[0] for r in results[(n, "1 rank x 2 threads", None)])
        batch = MODELS[n][2]
        cells = [n, str(batch), label, dt or "-", f"{med:.2f} ms ({spread(steps)})",
                 f"{batch / med * 1e3:.0f}", f"{base / med:.2f}x",
                 f"{statistics.median(r[1] for r in rs):.2f} ms"]
        if dt:
            dps = [r[2] for r in rs]
            m = {k: statistics.median(d[k] for d in dps) for k in DP_FIELDS
                 if k != "allreduce_dtype"}
            cells += [f"{m['buckets']:g}", f"{m['wire_bytes_per_step']:.0f}",
                      f"{m['comm_ms_per_step']:.2f}", f"{m['exposed_comm_ms_per_step']:.2f}",
                      f"{100 * m['overlap']:.0f} %"]
        else:
            cells += ["-"] * 5
        print("| " + " | ".join(cells) + " |")


def cmd_zero(args):
    """2 ranks replicated against 2 ranks with --shard-optimizer (ZeRO-1), the
    same global batch, alternating: step time, communication, the all-gather,
    and rank 0's state against the unsharded run's."""
    mpirun = shutil.which(args.mpirun)
    if not mpirun:
        fail(f"no '{args.mpirun}' on PATH")
    names = args.models.split(",")
    scratch = tempfile.mkdtemp(prefix="ampx-zero-")
    results, memory, load_start = {}, {}, os.getloadavg()[0]
    extra_common = ["--data-parallel", "--optimizer", args.optimizer, "--amp", args.amp]
    if args.capability_blind:
        extra_common.append("--capability-blind")
    try:
        data = {n: make_data(n, scratch) for n in names}
        for rnd in range(args.rounds):
            for n in names:
                batch = MODELS[n][2]
                modes = [("replicated", []), ("ZeRO-1", ["--shard-optimizer"])]
                for label, flags in (modes if rnd % 2 == 0 else modes[::-1]):
                    cmd = [mpirun, "--oversubscribe", "-np", "2", "--bind-to", "none",
                           "--mca", "btl", "self,vader", "-x", "OMP_NUM_THREADS=1",
                           *train_cmd(args, n, data[n], 1, batch // 2, extra_common + flags)]
                    env = dict(MPIRUN_ENV, OMP_NUM_THREADS="1")
                    what = f"{n} {label}"
                    recs = records(run(cmd, env, what), what)
                    ms, epochs = step_ms(recs)
                    dp = dp_summary(epochs, 2)
                    extra = [e["data_parallel"] for e in epochs[1:]]
                    gather = statistics.median(d.get("allgather_ms_per_step", 0) for d in extra)
                    gbytes = statistics.median(d.get("allgather_bytes_per_step", 0) for d in extra)
                    done = [r for r in recs if r.get("event") == "done"]
                    if flags and done and "sharded_optimizer" in done[0]:
                        memory[n] = done[0]["sharded_optimizer"]
                    results.setdefault((n, label), []).append((ms, dp, gather, gbytes))
    except BenchError as e:
        fail(str(e))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"ZeRO-1 on {args.device}, {args.optimizer}, amp {args.amp}"
          f"{' (capability-blind)' if args.capability_blind else ''}, 2 ranks x 1 thread at "
          f"b/2 each, {args.rounds} rounds alternating, load average {load_start:.2f} at the "
          f"start and {os.getloadavg()[0]:.2f} at the end. Step: median over rounds (range) of "
          "each run's median step after its first epoch; communication columns: means per "
          "step; state: rank 0's, from the run's `done` record:\n")
    print("| model | configuration | step | comm ms/step | exposed ms/step | reduce/all-reduce "
          "bytes | all-gather ms | all-gather bytes | optimizer state (rank 0) | all state "
          "(rank 0) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    mib = lambda b: f"{b / 1048576:.2f} MiB"
    for (n, label), rs in results.items():
        steps = [r[0] for r in rs]
        m = {k: statistics.median(r[1][k] for r in rs) for k in
             ("comm_ms_per_step", "exposed_comm_ms_per_step", "wire_bytes_per_step")}
        mem = memory.get(n)
        if label == "ZeRO-1" and mem:
            opt = f"{mib(mem['optimizer_bytes'])} (unsharded {mib(mem['unsharded_optimizer_bytes'])})"
            state = f"{mib(mem['state_bytes'])} (unsharded {mib(mem['unsharded_state_bytes'])})"
        else:
            opt = state = "-"
        print("| " + " | ".join([
            n, label, f"{statistics.median(steps):.2f} ms ({spread(steps)})",
            f"{m['comm_ms_per_step']:.2f}", f"{m['exposed_comm_ms_per_step']:.2f}",
            f"{m['wire_bytes_per_step']:.0f}",
            f"{statistics.median(r[2] for r in rs):.2f}",
            f"{statistics.median(r[3] for r in rs):.0f}", opt, state]) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("compute", "compare", "zero"):
        p = sub.add_parser(name)
        p.add_argument("--ampx", default="build/release/apps/ampx")
        p.add_argument("--device", default="onednn:0")
        p.add_argument("--models", default="digits-cnn,cnn,mlp")
        p.add_argument("--rounds", type=int, default=3)
        p.add_argument("--epochs", type=int, default=3,
                       help="epochs a run (the first is not timed)")
    sub.choices["compute"].add_argument("--out", help="JSON for bench/scaling_model.py")
    sub.choices["compute"].add_argument("--profile-step", type=int, default=6)
    sub.choices["compare"].add_argument("--allreduce-dtypes", default="f32,bf16")
    sub.choices["compare"].add_argument("--bucket-mb", type=float, default=25.0)
    sub.choices["compare"].add_argument("--mpirun", default="mpirun")
    sub.choices["zero"].add_argument("--mpirun", default="mpirun")
    sub.choices["zero"].add_argument("--optimizer", default="adam")
    sub.choices["zero"].add_argument("--amp", default="O2")
    sub.choices["zero"].add_argument("--capability-blind", action="store_true",
                                     help="plan 16-bit on emulated kernels too (cpu_ref)")
    args = ap.parse_args()
    for n in args.models.split(","):
        if n not in MODELS:
            fail(f"--models: unknown model '{n}' (known: {', '.join(MODELS)})")
    if args.rounds < 1 or args.epochs < 2:
        fail("--rounds must be >= 1 and --epochs >= 2 (the first epoch is not timed)")
    if not os.access(args.ampx, os.X_OK):
        fail(f"--ampx '{args.ampx}': not an executable")
    os.environ.setdefault("AMPX_CAPABILITY_DB",
                          os.path.join(tempfile.mkdtemp(prefix="ampx-dp-db-"), "c.db"))
    {"compute": cmd_compute, "compare": cmd_compare, "zero": cmd_zero}[args.cmd](args)


if __name__ == "__main__":
    main()
