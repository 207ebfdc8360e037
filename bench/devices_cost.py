#!/usr/bin/env python3
"""`ampx devices --format json` wall time of two ampx builds, runs alternating
(docs/benchmarks.md, "ampx devices with the per-op native dtypes").

    bench/devices_cost.py BEFORE_AMPX AFTER_AMPX [--runs N] [-- GLOBAL_ARGS...]

GLOBAL_ARGS go before `devices` (e.g. --exclude-plugin vulkan). Prints the
median, min and max per build. The pre-flight cache is warmed by one
uncounted run of each first, so both are timed with cached verdicts."""

import argparse
import statistics
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=20)
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    builds = {"before": a.before, "after": a.after}
    times: dict[str, list[float]] = {k: [] for k in builds}
    cmd = lambda b: [b, *extra, "devices", "--format", "json"]  # noqa: E731
    for b in builds.values():
        subprocess.run(cmd(b), stdout=subprocess.DEVNULL, check=True)
    for _ in range(a.runs):
        for k, b in builds.items():
            t = time.perf_counter()
            subprocess.run(cmd(b), stdout=subprocess.DEVNULL, check=True)
            times[k].append(time.perf_counter() - t)
    for k, v in times.items():
        print(f"{k}: median {statistics.median(v) * 1e3:.1f} ms, min {min(v) * 1e3:.1f}, "
              f"max {max(v) * 1e3:.1f} ({len(v)} runs)")


if __name__ == "__main__":
    main()
