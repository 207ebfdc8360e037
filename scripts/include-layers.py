#!/usr/bin/env python3
"""The per-folder include graph against the declared layer order.

Every C/C++ source and header of the repository belongs to one folder of
LAYERS below (the longest matching path prefix). Each `#include <...>` and
`#include "..."` that names a file of the repository (looked up next to the
including file, then in every `include/` directory, as the compiler would)
is an edge from the including file's folder to the included file's folder.
An edge must go strictly down the order: from a folder to a folder of a
lower layer. Folders of one layer are peers and do not include each other.
Any other edge, and any cycle, fails the check with the include lines that
make it. A source file in no declared folder fails it too: a new folder is
placed in the order here (and in docs/ARCHITECTURE.md) when it is made.

  scripts/include-layers.py [--root DIR] [--graph]

--graph prints every folder-to-folder edge with its number of includes.
Exit status 0: no upward edge, no cycle; 1: violations (listed); 2: usage.
Standard library only: CI and ctest (test Layers.IncludeGraph) run it.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

# Lowest layer first. A folder is a name and the path prefixes of its files.
# docs/ARCHITECTURE.md ("Layers") states the same order.
LAYERS = [
    # The plugin SDK (sdk/): the C ABI and its C++ support, the op set, the
    # reference kernels, the host-memory plugin. fileio stands alone.
    [("sdk/backend_api", ["sdk/backend_api/"]), ("fileio", ["fileio/"])],
    [("sdk/opset", ["sdk/opset/"])],
    [("sdk/reference", ["sdk/reference/"])],
    [("sdk/host_plugin", ["sdk/host_plugin/"])],
    # The plugins (SDK users) and the host side that loads them: peers.
    [
        ("backends/cpu_ref", ["backends/cpu_ref/"]),
        ("backends/onednn", ["backends/onednn/"]),
        ("backends/vulkan", ["backends/vulkan/"]),
        ("backends/cuda", ["backends/cuda/"]),
        ("examples/plugin_template", ["examples/plugin_template/"]),
        ("plugins", ["plugins/"]),
    ],
    [("plugins/check", ["plugins/check/"]), ("capability_db", ["capability_db/"])],
    # The frontend, one folder per library: ir -> amp -> exec -> session.
    [("frontend/ir", ["frontend/ir/"])],
    # Data-parallel communication over MPI (built where MPI is found).
    [("frontend/dist", ["frontend/dist/"])],
    # NCCL for CUDA devices over the MPI communicator (built where CUDA,
    # MPI and NCCL are found); the module it loads names no ampx layer.
    [("frontend/nccl", ["frontend/nccl/"])],
    [("frontend/amp", ["frontend/amp/"])],
    [("frontend/exec", ["frontend/exec/"])],
    [("frontend/onnx", ["frontend/onnx/"])],
    [("frontend/models", ["frontend/models/"])],
    # Autodiff, the training-step graph, checkpoints, datasets; the Trainer
    # that runs them is the Session's (session/trainer.hpp).
    [("frontend/train", ["frontend/train/"])],
    [("frontend/tune", ["frontend/tune/"])],
    [("frontend/session", ["frontend/session/"])],
    # What uses the libraries.
    [("apps", ["apps/"]), ("bench", ["bench/"])],
    # The Python package: links the CLI's output library (apps/ampx, ampx_cli_output).
    [("python", ["python/"])],
    [("tests", ["tests/"])],
]

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hxx", ".cu", ".cuh", ".inc")
# Kept inputs of the fuzzers are data, not sources.
SKIPPED_PREFIXES = ("tests/fuzz/corpus/", "tests/fuzz/regressions/")
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def list_files(root):
    """Tracked and untracked (not ignored) files; a plain walk without git."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root, capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--graph", action="store_true", help="print every folder edge")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    layer_of, prefixes = {}, []
    for i, layer in enumerate(LAYERS):
        for name, pres in layer:
            layer_of[name] = i
            prefixes += [(p, name) for p in pres]
    prefixes.sort(key=lambda x: -len(x[0]))

    def folder(path):
        return next((name for p, name in prefixes if path.startswith(p)), None)

    files = list_files(root)
    fileset = set(files)
    sources = [f for f in files
               if f.endswith(SOURCE_SUFFIXES) and not f.startswith(SKIPPED_PREFIXES)]
    include_roots = sorted({f[:f.index("/include/") + len("/include/")]
                            for f in files if "/include/" in f})

    problems = []
    edges = defaultdict(list)  # (from, to) -> ["file:line: #include ...", ...]
    for src in sources:
        a = folder(src)
        if a is None:
            problems.append(f"{src}: in no folder of the layer order (scripts/include-layers.py)")
            continue
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE_RE.finditer(text):
            kind, name = m.groups()
            candidates = [os.path.normpath(os.path.join(os.path.dirname(src), name))] \
                if kind == '"' else []
            candidates += [r + name for r in include_roots]
            target = next((c for c in candidates if c in fileset), None)
            if target is None:
                continue  # a system or third-party header, or a generated one
            b = folder(target)
            if b is None or b == a:
                continue
            line = text.count("\n", 0, m.start()) + 1
            edges[(a, b)].append(f"{src}:{line}: #include {kind}{name}{'>' if kind == '<' else kind}")

    for (a, b), where in sorted(edges.items()):
        if layer_of[b] < layer_of[a]:
            continue
        how = "a peer of the same layer" if layer_of[b] == layer_of[a] else "a higher layer"
        problems.append(f"{a} -> {b}: {b} is {how} ({len(where)} include"
                        f"{'s' if len(where) > 1 else ''}):\n    " + "\n    ".join(where[:5]) +
                        (f"\n    ... and {len(where) - 5} more" if len(where) > 5 else ""))

    # Cycles (strongly connected components of more than one folder): each
    # also shows up as an upward edge above; named here as the loop it is.
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []

    def visit(v):  # Tarjan, iterative over an explicit stack of iterators
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

    for v in sorted(layer_of):
        if v not in index:
            visit(v)
    for comp in sccs:
        problems.append("cycle: " + ", ".join(comp) + " include each other")

    if args.graph:
        for (a, b), where in sorted(edges.items(), key=lambda e: (layer_of[e[0][0]], e[0])):
            print(f"{a} -> {b} ({len(where)})")
    if problems:
        print(f"include-layers: {len(problems)} violation{'s' if len(problems) > 1 else ''} "
              "of the layer order (scripts/include-layers.py, docs/ARCHITECTURE.md):",
              file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"include-layers: {len(sources)} files in {len(layer_of)} folders, {len(edges)} "
          "folder edges, all downward, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
