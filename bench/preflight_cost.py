#!/usr/bin/env python3
"""What the plugin pre-flight costs: `ampx devices` with --trust-plugins (no
pre-flight), with cached verdicts, and with none cached (a fresh cache file
per run), alternating, N rounds; medians and ranges in milliseconds.

--per-plugin: the first-time pre-flight child of each plugin on its own (the
host's debug line "pre-flight of FILE: ok in S s"), and with --baseline
AMPX the same for another build (one without the smoke launch, say),
alternating build by build each round.

Usage: python3 bench/preflight_cost.py --ampx build/release/apps/ampx [--rounds 8]
       python3 bench/preflight_cost.py --ampx A --baseline B --per-plugin [--plugin-dir D]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time


def timed(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return (time.perf_counter() - start) * 1000


def child_seconds(ampx, extra, env):
    """{plugin file name: seconds of its pre-flight child} from one run."""
    out = subprocess.run([ampx, *extra, "--log-level", "debug", "devices"], env=env, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"pre-flight of \S*/(libampx_backend_\w+\.so): .* in ([0-9.]+) s",
                                 out)}


def per_plugin(a):
    builds = {"ampx": a.ampx}
    if a.baseline:
        builds["baseline"] = a.baseline
    extra = ["--plugin-dir", a.plugin_dir] if a.plugin_dir else []
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.rounds):
            for name, exe in builds.items():
                env = dict(os.environ, AMPX_PREFLIGHT_CACHE=os.path.join(tmp, f"{name}{i}.json"))
                for plugin, sec in child_seconds(exe, extra, env).items():
                    res.setdefault((plugin, name), []).append(sec * 1000)
    print("| plugin | build | median ms | range ms |\n|---|---|---|---|")
    for (plugin, name), v in sorted(res.items()):
        print(f"| {plugin} | {name} | {statistics.median(v):.0f} | {min(v):.0f}-{max(v):.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ampx", required=True)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--per-plugin", action="store_true")
    ap.add_argument("--baseline", help="another ampx build, with --per-plugin")
    ap.add_argument("--plugin-dir", help="passed to ampx as --plugin-dir")
    a = ap.parse_args()
    if a.per_plugin:
        per_plugin(a)
        return
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
