"""`pip wheel .` gives a wheel that installs into a fresh virtual
environment and imports there, outside the checkout, with the plugins it
carries (docs/PYTHON.md, "Install"). The wheel is built without build
isolation, by the build requirements of the project's environment
(tests/onnx/requirements.txt pins the ones pyproject.toml names), so that
only the wheel's own dependency (numpy) comes from the package index."""

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_installs_and_imports_in_a_fresh_venv(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--disable-pip-version-check", "-w", str(wheels),
                    str(ROOT)], check=True)
    (wheel,) = wheels.glob("ampx-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    str(wheel)], check=True)
    script = """
import json, ampx
listing = ampx.plugins()
plan = ampx.Session(devices="cpu_ref:0").plan("builtin:cnn", amp="O0")
print(json.dumps({"file": ampx.__file__, "devices": [d.id for d in ampx.devices()],
                  "plugin_files": [p["file"] for p in listing["plugins"]],
                  "nodes": len(plan.nodes)}))
"""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "AMPX_PLUGIN_PATH", "AMPX_DEVICES")}
    out = subprocess.run([str(python), "-c", script], cwd="/", env=clean, check=True,
                         capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["file"].startswith(str(env_dir)), got["file"]  # the installed package, not the checkout
    assert "cpu_ref:0" in got["devices"], got
    # The plugins the wheel carries, found beside its module.
    assert got["plugin_files"] and all(f.startswith(str(env_dir)) for f in got["plugin_files"]), got
    assert got["nodes"] > 0
