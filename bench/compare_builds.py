#!/usr/bin/env python3
"""Two builds of `ampx` side by side: does a change slow a command?

Runs one subcommand of build A and build B in alternation (A B B A A B ...),
ROUNDS times each, and reports each build's median, the ratio B/A and the
spread of the ratio over the rounds, so that machine noise is visible.

`run` (the default) is timed by what it reports itself: the median of its
iterations (`ampx run ... --format json`, `median_ms`). Any other
subcommand (`--subcommand plan|tune|report|export|train|...`) is timed as
the whole process's wall time, start-up and plugin loading included.

Usage:
  bench/compare_builds.py --a OLD/ampx [--a-plugins DIR] --b NEW/ampx \
      [--b-plugins DIR] [--rounds 8] -- builtin:mlp --device onednn:0 --iters 50
  bench/compare_builds.py --a OLD/ampx --b NEW/ampx --subcommand plan -- builtin:cnn --amp O2
Everything after `--` goes to that subcommand of both builds.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def run_once(ampx, plugin_dir, subcommand, args):
    cmd = [ampx]
    if plugin_dir:
        cmd += ["--plugin-dir", plugin_dir]
    if subcommand == "run":
        cmd += ["run"] + args + ["--format", "json"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return json.loads(out)["median_ms"]
    cmd += [subcommand] + args
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="ampx binary of the baseline build")
    p.add_argument("--a-plugins", default="", help="its plugin directory (--plugin-dir)")
    p.add_argument("--b", required=True, help="ampx binary of the build under test")
    p.add_argument("--b-plugins", default="", help="its plugin directory (--plugin-dir)")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--subcommand", default="run",
                   help="run (its own median_ms) or any other subcommand (process wall time)")
    p.add_argument("run_args", nargs=argparse.REMAINDER, help="-- then the subcommand's arguments")
    a = p.parse_args()
    args = a.run_args[1:] if a.run_args[:1] == ["--"] else a.run_args
    if not args:
        p.error(f"no `ampx {a.subcommand}` arguments after --")
    times = {"a": [], "b": []}
    for r in range(a.rounds):
        order = ["a", "b"] if r % 2 == 0 else ["b", "a"]
        for which in order:
            ampx, plugins = (a.a, a.a_plugins) if which == "a" else (a.b, a.b_plugins)
            times[which].append(run_once(ampx, plugins, a.subcommand, args))
    ratios = [b / x for x, b in zip(times["a"], times["b"])]
    ma, mb = statistics.median(times["a"]), statistics.median(times["b"])
    what = "median_ms" if a.subcommand == "run" else "process wall time"
    print(f"ampx {a.subcommand} {' '.join(args)}")
    print(f"  A {ma:.3f} ms  B {mb:.3f} ms  ({what}, medians of {a.rounds} alternating processes)")
    print(f"  B/A median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f} over the rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
