#!/usr/bin/env python3
"""`ampx train` against PyTorch eager, the same modules, step by step.

Both sides train the same torch modules with SGD (momentum 0.9, lr 0.01) on
the same random data, at the same batch and thread count:

  models   digits  the digits CNN (as builtin:digits-cnn: conv3x3(1->16),
                   BatchNorm, ReLU, max-pool 2; conv3x3(16->32), BatchNorm,
                   ReLU, max-pool 2; dense 64, ReLU, dense 10), 1x8x8, batch 32
           cifar   the CIFAR-shaped CNN (conv3x3(3->32, no bias), BatchNorm,
                   ReLU, max-pool 2; conv3x3(32->64, no bias), BatchNorm, ReLU,
                   max-pool 2; dense 512, ReLU, dense 10), 3x32x32, batch 32
           resnet18  torchvision's ResNet-18 (weights=None), 3x224x224, batch 8
  forms    kept    BatchNorm kept for ampx: model.eval(), torch.onnx.export(...,
                   training=TrainingMode.PRESERVE, do_constant_folding=False,
                   dynamo=False: torch 2.15's dynamo exporter ignores
                   TrainingMode)
           folded  a plain TorchScript export (dynamo=False; constant folding
                   folds each BatchNorm into its conv as a bias)
  modes    ampx-O0, ampx-O2-f16, ampx-O2-bf16 (`ampx train --device
           onednn:0 --amp ...`; the planner keeps 16-bit only where the CPU
           runs it natively: the table gives the 16-bit node count), against
           torch-fp32 (eager) and torch-bf16 (eager, torch.autocast("cpu",
           bfloat16)); torch trains the module itself, with BatchNorm.

Each round runs every mode once, ampx and torch alternating (ampx O0, torch
fp32, ampx O2 f16, torch bf16, ampx O2 bf16), each in a fresh process: W
warm-up steps, then S timed ones. A round's figure is the median of its
timed steps: ampx's from `ampx train --format json` (`step_times_ms`, the
compiled step's run), torch's the wall time of zero_grad, forward, loss,
backward and step. The table gives the median over rounds and the range
of the round medians (the spread: on a loaded machine it is wide).

`--isa avx2` restricts both sides to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2 for
ampx, ATEN_CPU_CAPABILITY=avx2 for torch), as the developers' machines are.

PyTorch (torch==2.15.0, torchvision==0.29.2, pinned) lives in an environment
of its own that this script makes on first use (it is large: never in CI,
never in requirements.txt): $AMPX_VENV_CACHE, else $XDG_CACHE_HOME/ampx, else
~/.cache/ampx, then torch-2.15.0 (`/usr/bin/python3 -m venv` and pip), and
the script runs itself again inside it.

Usage: python3 bench/train_vs_torch.py [--ampx build/release/apps/ampx]
         [--models digits,cifar,resnet18] [--forms kept,folded]
         [--modes ampx-O0,ampx-O2-f16,ampx-O2-bf16,torch-fp32,torch-bf16]
         [--rounds 3] [--steps S] [--warmup W] [--threads 2] [--isa native|avx2]
         [--determinism thread-count-free|fastest] [--format md|json] [--out FILE]
e.g. `--models cifar --rounds 3` takes a few minutes.
Prints a Markdown table (docs/benchmarks.md, "Training against PyTorch").

`--table seeds` measures instead the seeds' comparison (one article: 0.15 s
a step eager, 0.09 s compiled, 0.045 s compiled with AMP), ampx against
itself, per device: `ampx train --eager` (O0), the compiled step (O0) and
the compiled step with AMP (`--amp O2 --dtype auto`: the 16-bit type the
device runs natively, none where it has none). Models: digits
(builtin:digits-cnn on builtin:digits, no torch needed), cifar and resnet18
(the modules above, exported with BatchNorm kept, random data). Devices
(`--devices`, comma-separated; `onednn:0/avx2` is onednn:0 under
ONEDNN_MAX_CPU_ISA=AVX2; a device this build does not list is reported as
absent): by default cpu_ref:0 (digits only: its reference kernels take
minutes a ResNet-18 step), onednn:0, onednn:0/avx2 and vulkan:0 (digits and
cifar: lavapipe computes on the CPU, far slower than oneDNN). Eager is
`ampx train --eager` (the EagerExecutor: each node prepared and given
buffers of its own at every step). Each round runs the three modes on one device in turn, each in a
fresh process; the step times are `step_times_ms`, as above.

  python3 bench/train_vs_torch.py --table seeds [--models digits,cifar,resnet18]
         [--devices cpu_ref:0,onednn:0,onednn:0/avx2,vulkan:0] [--rounds 3] [--steps S]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

TORCH = "2.15.0"
TORCHVISION = "0.29.2"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS = {
    # name: (sample shape, classes, batch, default timed steps)
    "digits": ((1, 8, 8), 10, 32, 30),
    "cifar": ((3, 32, 32), 10, 32, 20),
    "resnet18": ((3, 224, 224), 1000, 8, 6),
}
MODES = ["ampx-O0", "ampx-O2-f16", "ampx-O2-bf16", "torch-fp32", "torch-bf16"]
# --table seeds: the modes (the flags each adds to `ampx train`), and the
# devices each model runs on by default.
SEED_MODES = {"eager": ["--amp", "O0", "--eager"], "compiled": ["--amp", "O0"],
              "compiled-amp": ["--amp", "O2", "--dtype", "auto"]}
SEED_DEVICES = {"digits": ["cpu_ref:0", "onednn:0", "onednn:0/avx2", "vulkan:0"],
                "cifar": ["onednn:0", "onednn:0/avx2", "vulkan:0"],
                "resnet18": ["onednn:0", "onednn:0/avx2"]}
ROUND_ORDER = ["ampx-O0", "torch-fp32", "ampx-O2-f16", "torch-bf16", "ampx-O2-bf16"]
LR, MOMENTUM = 0.01, 0.9


# --- The environment -------------------------------------------------------


def cache_dir():
    if os.environ.get("AMPX_VENV_CACHE"):
        return os.environ["AMPX_VENV_CACHE"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "ampx")
    return os.path.join(os.path.expanduser("~"), ".cache", "ampx")


def venv_ready(python):
    check = (f"import torch, torchvision, onnx, numpy; "
             f"assert torch.__version__.split('+')[0] == '{TORCH}'; "
             f"assert torchvision.__version__.split('+')[0] == '{TORCHVISION}'")
    return os.path.exists(python) and subprocess.run(
        [python, "-c", check], capture_output=True).returncode == 0


def ensure_torch_env():
    """Runs the script inside the pinned torch environment (made if missing)."""
    venv = os.path.join(cache_dir(), f"torch-{TORCH}")
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not venv_ready(python):
        print(f"train_vs_torch: installing torch {TORCH} and torchvision {TORCHVISION} "
              f"into {venv} (once; several GB)", file=sys.stderr)
        subprocess.run(["rm", "-rf", venv], check=True)
        os.makedirs(cache_dir(), exist_ok=True)
        subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet",
                        "--disable-pip-version-check", f"torch=={TORCH}",
                        f"torchvision=={TORCHVISION}", "onnx", "onnxscript", "numpy"],
                       check=True)
        if not venv_ready(python):
            sys.exit(f"train_vs_torch: {venv} does not import torch {TORCH}")
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


# --- The models (inside the environment) -----------------------------------


def make_module(name):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    if name == "digits":
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10))
    if name == "cifar":
        return nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 8 * 8, 512), nn.ReLU(), nn.Linear(512, 10))
    import torchvision
    return torchvision.models.resnet18(weights=None)


def export(name, form, path):
    import torch
    m = make_module(name).eval()
    shape, _, batch, _ = MODELS[name]
    x = torch.randn(batch, *shape)
    kw = dict(input_names=["input"], output_names=["logits"], opset_version=17, dynamo=False)
    if form == "kept":
        kw.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x,), path, **kw)


def write_data(name, n, directory):
    import numpy as np
    shape, classes, _, _ = MODELS[name]
    rng = np.random.default_rng(1)
    np.save(os.path.join(directory, "inputs.npy"),
            rng.standard_normal((n, *shape)).astype(np.float32))
    np.save(os.path.join(directory, "labels.npy"),
            rng.integers(0, classes, n).astype(np.int64))


def torch_worker(a):
    """One torch round in this process: prints {"steps_ms": [...]}."""
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    m = make_module(a.model).train()
    opt = torch.optim.SGD(m.parameters(), lr=LR, momentum=MOMENTUM)
    x = torch.from_numpy(np.load(os.path.join(a.data, "inputs.npy")))
    y = torch.from_numpy(np.load(os.path.join(a.data, "labels.npy")))
    batch = MODELS[a.model][2]
    times = []
    for k in range(x.shape[0] // batch):
        xb, yb = x[k * batch:(k + 1) * batch], y[k * batch:(k + 1) * batch]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if a.worker == "torch-bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(m(xb), yb)
        else:
            loss = torch.nn.functional.cross_entropy(m(xb), yb)
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"steps_ms": times, "loss": float(loss),
                      "capability": torch.backends.cpu.get_cpu_capability()}))


# --- One round of each side --------------------------------------------------


def isa_env(a, isa=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if (isa or a.isa) == "avx2":
        env["ONEDNN_MAX_CPU_ISA"] = "AVX2"
        env["ATEN_CPU_CAPABILITY"] = "avx2"
    return env


def npy_data(data):
    return os.path.join(data, "inputs.npy") + "," + os.path.join(data, "labels.npy")


def run_ampx(a, mode, model_path, data, batch):
    amp, _, dtype = mode.partition("-")[2].partition("-")
    flags = ["--amp", amp] + (["--dtype", dtype] if dtype else [])
    return ampx_train(a, model_path, npy_data(data), batch, "onednn:0", flags, isa_env(a))


def ampx_train(a, model_path, data, batch, device, flags, env):
    """One `ampx train` epoch in a fresh process: its step times after the
    warm-up, and the step plan's node counts; {"error": last line} if it
    fails."""
    cmd = [a.ampx, "--threads", str(a.threads), "--determinism", a.determinism,
           "train", model_path, "--device", device, "--data", data,
           "--batch", str(batch), "--epochs", "1", "--optimizer", "sgd", "--lr", str(LR),
           "--momentum", str(MOMENTUM), "--format", "json"] + flags
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"}
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    epoch = next(j for j in lines if j["event"] == "epoch")
    done = next(j for j in lines if j["event"] == "done")
    return {"steps_ms": epoch["step_times_ms"][a.warmup:], "nodes": done["nodes"],
            "nodes_16bit": done["nodes_16bit"], "shared_copies": len(done.get("shared_copies", []))}


def run_torch(a, mode, model, data):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--model", model,
           "--data", data, "--threads", str(a.threads)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=isa_env(a))
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"}
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return {"steps_ms": j["steps_ms"][a.warmup:], "capability": j["capability"]}


# --- The machine --------------------------------------------------------------


def machine(a):
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    isa = "?"
    r = subprocess.run([a.ampx, "devices", "--format", "json"], capture_output=True, text=True,
                       env=isa_env(a))
    if r.returncode == 0:
        for d in json.loads(r.stdout)["devices"]:
            if d["id"] == "onednn:0":
                isa = d["fingerprint"].split("/")[3]
    version = subprocess.run([a.ampx, "--version"], capture_output=True, text=True).stdout.strip()
    out = {"cpu": cpu, "cores": os.cpu_count(), "onednn_isa": isa, "ampx": version,
           "threads": a.threads, "isa": a.isa, "determinism": a.determinism,
           "load_before": os.getloadavg()[0]}
    try:
        import torch
        import torchvision
    except ImportError:  # --table seeds on builtin models only
        return out
    out["torch_capability"] = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        capture_output=True, text=True, env=isa_env(a)).stdout.strip()
    out.update(torch=torch.__version__, torchvision=torchvision.__version__)
    return out


# --- Report ---------------------------------------------------------------------


def summary(rounds):
    meds = [statistics.median(r["steps_ms"]) for r in rounds if r.get("steps_ms")]
    if not meds:
        errs = [r.get("error", "") for r in rounds]
        return {"error": errs[0] if errs else "no rounds"}
    steps = [t for r in rounds for t in r.get("steps_ms", [])]
    # best_ms: the fastest single step of all rounds, the step as an
    # uncontended machine runs it (2 threads on a loaded 2-core machine
    # wait for a descheduled thread at every barrier: see the noise note).
    out = {"median_ms": statistics.median(meds), "min_ms": min(meds), "max_ms": max(meds),
           "best_ms": min(steps), "round_medians_ms": meds,
           "steps_ms": [r.get("steps_ms", []) for r in rounds]}
    for k in ("nodes", "nodes_16bit", "shared_copies"):
        if k in rounds[0]:
            out[k] = rounds[0][k]
    return out


# Ratios taken round by round (the two runs next to each other in time), so
# that load on the machine hits both alike.
RATIOS = [("ampx-O2-bf16", "torch-bf16"), ("ampx-O0", "torch-fp32")]


def paired_ratios(xs, ys):
    out = []
    for x, y in zip(xs or [], ys or []):
        if x.get("steps_ms") and y.get("steps_ms"):
            out.append(statistics.median(x["steps_ms"]) / statistics.median(y["steps_ms"]))
    return out


def ratio_cell(rs):
    if not rs:
        return "—"
    return f"{statistics.median(rs):.2f}x ({min(rs):.2f}–{max(rs):.2f})"


def best_ratio(c, x, y):
    if c.get(x, {}).get("best_ms") and c.get(y, {}).get("best_ms"):
        return f", best {c[x]['best_ms'] / c[y]['best_ms']:.2f}x"
    return ""


def cell(s, best=True, error_chars=0):
    """A mode's summary: median (range of the round medians)[, best], 16-bit nodes."""
    if not s:
        return "—"
    if "error" in s:
        return "fails" + (": " + s["error"][:error_chars] if error_chars else "")
    text = f"{s['median_ms']:.1f} ({s['min_ms']:.1f}–{s['max_ms']:.1f})"
    if best:
        text += f", best {s['best_ms']:.1f}"
    if "nodes_16bit" in s:
        text += f", {s['nodes_16bit']}/{s['nodes']} 16-bit"
    return text


def markdown(results, m):
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores; oneDNN ISA `{m['onednn_isa']}`, torch "
             f"CPU capability `{m['torch_capability']}` (--isa {m['isa']}); {m['ampx']}; torch "
             f"{m['torch']}, torchvision {m['torchvision']}; {m['threads']} threads both sides; "
             f"ampx --determinism {m['determinism']}; load average {m['load_before']:.1f} "
             f"at the start.",
             "",
             "Each cell: median step in ms over the rounds (the range of the round medians), "
             "the fastest single step, "
             "and for ampx the 16-bit nodes of the step plan (0: the planner kept f32). The "
             "torch columns are the same module for both forms (rounds pooled). Ratios: the "
             "median of the per-round ratios (their range), each round's two runs adjacent.",
             "",
             "| model | form | " + " | ".join(MODES) + " | ampx O2 bf16 / torch bf16 | "
             "ampx O0 / torch fp32 |",
             "|---|---|" + "---|" * (len(MODES) + 2)]
    for r in results:
        c = r["modes"]
        lines.append(f"| {r['model']} (batch {r['batch']}) | {r['form']} | " +
                     " | ".join(cell(c.get(k)) for k in MODES) + " | " +
                     " | ".join(ratio_cell(r["ratios"][f"{x}/{y}"]) + best_ratio(c, x, y)
                                for x, y in RATIOS) + " |")
    return "\n".join(lines)


# --- --table seeds: eager, compiled, compiled with AMP, per device -------------


def listed_devices(a, isa):
    r = subprocess.run([a.ampx, "devices", "--format", "json"], capture_output=True, text=True,
                       env=isa_env(a, isa))
    return {d["id"]: d for d in json.loads(r.stdout)["devices"]} if r.returncode == 0 else {}


def seeds_markdown(results, m):
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores; oneDNN ISA natively `{m['onednn_isa']}`; "
             f"{m['ampx']}; {m['threads']} threads; ampx --determinism {m['determinism']}; load "
             f"average {m['load_before']:.1f} at the start.",
             "",
             "Each cell: median step in ms over the rounds (the range of the round medians); "
             "with AMP, the 16-bit nodes of the step plan. Ratios: the median of the per-round "
             "ratios (each round's runs adjacent in time). The seeds' article: 150 ms eager, "
             "90 ms compiled (0.60x), 45 ms compiled with AMP (0.50x of compiled).",
             "",
             "| model | device | eager (O0) | compiled (O0) | compiled + AMP (O2, --dtype auto) "
             "| compiled / eager | AMP / compiled |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        c = r["modes"]
        if "absent" in r:
            lines.append(f"| {r['model']} (batch {r['batch']}) | {r['device']} | "
                         f"not listed by this build ({r['absent']}) | | | | |")
            continue
        lines.append(f"| {r['model']} (batch {r['batch']}) | {r['device']} | " +
                     " | ".join(cell(c.get(k), best=False, error_chars=80) for k in SEED_MODES) + " | " +
                     ratio_cell(r["ratios"]["compiled/eager"]) + " | " +
                     ratio_cell(r["ratios"]["compiled-amp/compiled"]) + " |")
    return "\n".join(lines)


def seeds_main(a):
    models = a.models.split(",")
    for v in models:
        if v not in MODELS:
            sys.exit(f"train_vs_torch: --models: unknown '{v}' (expected one of "
                     f"{', '.join(MODELS)})")
    # digits is builtin:digits-cnn on builtin:digits: torch only for the others.
    if any(name != "digits" for name in models):
        ensure_torch_env()
    if not os.access(a.ampx, os.X_OK):
        sys.exit(f"train_vs_torch: --ampx {a.ampx} is not an executable (build target ampx)")
    work = a.work or tempfile.mkdtemp(prefix="ampx_train_seeds_")
    m = machine(a)
    listed = {isa: listed_devices(a, isa) for isa in ("native", "avx2")}
    results = []
    for name in models:
        shape, _, batch, default_steps = MODELS[name]
        steps = a.steps or default_steps
        if name == "digits":
            model, data = "builtin:digits-cnn", "builtin:digits"
        else:
            d = os.path.join(work, name + "-data")
            os.makedirs(d, exist_ok=True)
            write_data(name, (a.warmup + steps) * batch, d)
            model, data = os.path.join(work, f"{name}-kept.onnx"), npy_data(d)
            export(name, "kept", model)
        devices = a.devices.split(",") if a.devices else SEED_DEVICES[name]
        for spec in devices:
            device, _, isa = spec.partition("/")
            isa = isa or "native"
            res = {"model": name, "device": spec, "batch": batch, "steps": steps,
                   "warmup": a.warmup, "modes": {}, "ratios": {}}
            results.append(res)
            if device not in listed.get(isa, {}):
                res["absent"] = f"{device} under --isa {isa}"
                print(f"train_vs_torch: {name} on {spec}: not listed, skipped", file=sys.stderr)
                continue
            rounds = {k: [] for k in SEED_MODES}
            for rnd in range(a.rounds):
                for mode, flags in SEED_MODES.items():
                    r = ampx_train(a, model, data, batch, device, flags, isa_env(a, isa))
                    rounds[mode].append(r)
                    med = statistics.median(r["steps_ms"]) if r.get("steps_ms") else None
                    print(f"train_vs_torch: {name} on {spec} round {rnd + 1} {mode}: "
                          + (f"{med:.1f} ms" if med else r.get("error", "?")),
                          file=sys.stderr)
            for mode, rs in rounds.items():
                res["modes"][mode] = summary(rs)
            timed = [r for rs in rounds.values() for r in rs if r.get("steps_ms")]
            if timed:  # builtin:digits: its epoch's steps, whatever --steps says
                res["steps"] = len(timed[0]["steps_ms"])
            res["ratios"] = {"compiled/eager": paired_ratios(rounds["compiled"], rounds["eager"]),
                             "compiled-amp/compiled": paired_ratios(rounds["compiled-amp"],
                                                                    rounds["compiled"])}
    m["load_after"] = os.getloadavg()[0]
    report = {"table": "seeds", "machine": m, "date": datetime.date.today().isoformat(),
              "rounds": a.rounds, "results": results}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1) if a.format == "json" else seeds_markdown(results, m))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ampx", default=os.path.join(REPO, "build", "release", "apps", "ampx"))
    ap.add_argument("--models", default="digits,cifar,resnet18")
    ap.add_argument("--forms", default="kept,folded")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="timed steps per round (0: per model)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--isa", choices=["native", "avx2"], default="native")
    ap.add_argument("--determinism", choices=["thread-count-free", "fastest"],
                    default="thread-count-free")
    ap.add_argument("--format", choices=["md", "json"], default="md")
    ap.add_argument("--out", help="also write the JSON results here")
    ap.add_argument("--work", help="keep models and data here (default: a temporary directory)")
    ap.add_argument("--table", choices=["torch", "seeds"], default="torch",
                    help="torch: ampx against PyTorch (above); seeds: eager against compiled "
                         "against compiled with AMP, per device")
    ap.add_argument("--devices", help="--table seeds: the devices (default: per model, above)")
    # The torch round's worker (internal).
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.warmup = 0
        return torch_worker(a)
    if a.table == "seeds":
        return seeds_main(a)
    ensure_torch_env()
    for flag, value, allowed in (("--models", a.models, MODELS), ("--modes", a.modes, MODES),
                                 ("--forms", a.forms, ("kept", "folded"))):
        for v in value.split(","):
            if v not in allowed:
                sys.exit(f"train_vs_torch: {flag}: unknown '{v}' (expected one of "
                         f"{', '.join(allowed)})")
    if not os.access(a.ampx, os.X_OK):
        sys.exit(f"train_vs_torch: --ampx {a.ampx} is not an executable (build target ampx)")
    modes = [m for m in ROUND_ORDER if m in a.modes.split(",")]
    work = a.work or tempfile.mkdtemp(prefix="ampx_train_vs_torch_")
    m = machine(a)
    results = []
    for name in a.models.split(","):
        shape, _, batch, default_steps = MODELS[name]
        steps = a.steps or default_steps
        data = os.path.join(work, name + "-data")
        os.makedirs(data, exist_ok=True)
        write_data(name, (a.warmup + steps) * batch, data)
        torch_rounds = {k: [] for k in modes if k.startswith("torch")}
        for form in a.forms.split(","):
            path = os.path.join(work, f"{name}-{form}.onnx")
            export(name, form, path)
            rounds = {k: [] for k in modes}
            for rnd in range(a.rounds):
                for mode in modes:
                    # torch trains the module itself, the same for both
                    # forms: its rounds of every form are pooled.
                    r = (run_ampx(a, mode, path, data, batch) if mode.startswith("ampx")
                         else run_torch(a, mode, name, data))
                    rounds[mode].append(r)
                    if mode.startswith("torch"):
                        torch_rounds[mode].append(r)
                    med = statistics.median(r["steps_ms"]) if r.get("steps_ms") else None
                    print(f"train_vs_torch: {name} {form} round {rnd + 1} {mode}: "
                          + (f"{med:.1f} ms" if med else r.get("error", "?")), file=sys.stderr)
            res = {"model": name, "form": form, "batch": batch, "steps": steps,
                   "warmup": a.warmup, "modes": {k: summary(v) for k, v in rounds.items()
                                                 if k.startswith("ampx")},
                   "ratios": {f"{x}/{y}": paired_ratios(rounds.get(x), rounds.get(y))
                              for x, y in RATIOS}}
            results.append(res)
        for res in results:
            if res["model"] == name:
                res["modes"].update({k: summary(v) for k, v in torch_rounds.items()})
    m["load_after"] = os.getloadavg()[0]
    report = {"machine": m, "date": datetime.date.today().isoformat(), "rounds": a.rounds,
              "results": results}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1) if a.format == "json" else markdown(results, m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
