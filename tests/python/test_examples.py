"""The examples of docs/PYTHON.md run as documented."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


@pytest.mark.parametrize("script,args", [("plan_and_run.py", ["builtin:cnn", "cpu_ref:0"]),
                                         ("onnxruntime_drop_in.py", []),
                                         ("train_digits.py", ["cpu_ref:0"])])
def test_example_runs(script, args):
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip()
