#!/usr/bin/env python3
"""What the plugin pre-flight costs: `ampx devices` with --trust-plugins (no
pre-flight), with cached verdicts, and with none cached (a fresh cache file
per run), alternating, N rounds; medians and ranges in milliseconds.

Usage: python3 bench/preflight_cost.py --ampx build/release/apps/ampx [--rounds 8]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def timed(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return (time.perf_counter() - start) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(os.environ, AMPX_PREFLIGHT_CACHE=os.path.join(tmp, "cached.json"))
        timed([a.ampx, "devices"], base)  # fills the cache
        res = {"--trust-plugins": [], "cached verdicts": [], "no cache (first time)": []}
        for i in range(a.rounds):
            res["--trust-plugins"].append(timed([a.ampx, "--trust-plugins", "devices"], base))
            res["cached verdicts"].append(timed([a.ampx, "devices"], base))
            fresh = dict(base, AMPX_PREFLIGHT_CACHE=os.path.join(tmp, f"fresh{i}.json"))
            res["no cache (first time)"].append(timed([a.ampx, "devices"], fresh))
    print("| mode | median ms | range ms |\n|---|---|---|")
    for k, v in res.items():
        print(f"| {k} | {statistics.median(v):.0f} | {min(v):.0f}-{max(v):.0f} |")


if __name__ == "__main__":
    main()
