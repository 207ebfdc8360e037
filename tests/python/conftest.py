"""The Python package's tests (tests/python, docs/PYTHON.md), run by ctest
(tests/python/CMakeLists.txt) on the package the build tree assembles:
PYTHONPATH=<build>/python, AMPX_CLI=<build>/apps/ampx (the CLI compared
with), AMPX_TEST_MODELS=<build>/tests/onnx/models (make_models.py's models
with ONNX Runtime's outputs)."""

import os
import shutil

import pytest


def _devices():
    import ampx

    return {d.id for d in ampx.devices()}


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("AMPX_CLI") or shutil.which("ampx")
    if not path:
        pytest.fail("AMPX_CLI names no ampx executable")
    return path


@pytest.fixture(scope="session")
def models_dir():
    path = os.environ.get("AMPX_TEST_MODELS")
    if not path or not os.path.isdir(path):
        pytest.fail("AMPX_TEST_MODELS names no directory of test models (make_models.py)")
    return path


@pytest.fixture(scope="session")
def device_ids():
    return _devices()


@pytest.fixture(scope="session")
def run_devices(device_ids):
    """The devices the numerics tests run on: cpu_ref:0, and onednn:0 where built."""
    return [d for d in ("cpu_ref:0", "onednn:0") if d in device_ids]


class TickCounter:
    """A Python thread that notes the time every millisecond or so, to tell
    whether a call releases the GIL: held through the call, the thread
    cannot tick until it returns.

        with TickCounter() as ticks:
            compiled.run(feed)
        assert ticks.during > ...
    """

    def __enter__(self):
        import threading
        import time

        self._ticks = []
        self._stop = threading.Event()

        def counter():
            while not self._stop.is_set():
                self._ticks.append(time.perf_counter())
                time.sleep(0.001)

        self._thread = threading.Thread(target=counter)
        self._thread.start()
        time.sleep(0.02)
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        import time

        self.end = time.perf_counter()
        self._stop.set()
        self._thread.join()
        self.during = sum(1 for t in self._ticks if self.start <= t <= self.end)
        return False

    @property
    def seconds(self):
        return self.end - self.start
