"""The GIL is released while ampx works; two sessions run at once."""

import threading
import time

import numpy as np

import ampx
from conftest import TickCounter


def slow_model():
    """builtin:cnn at O0 on cpu_ref:0 (the reference kernels): tens of
    milliseconds a run, and the time of one."""
    sess = ampx.Session(devices="cpu_ref:0")
    compiled = sess.compile(sess.plan("builtin:cnn", amp="O0"))
    (t,) = compiled.inputs
    feed = {t.name: np.ones(t.shape, np.float32)}
    t0 = time.perf_counter()
    compiled.run(feed)
    return sess, compiled, feed, time.perf_counter() - t0


def test_gil_released_during_run():
    _, compiled, feed, one = slow_model()
    runs = max(1, int(0.3 / max(one, 1e-4)))
    with TickCounter() as ticks:
        for _ in range(runs):
            compiled.run(feed)
    # With the GIL held through each run, the counter could tick only
    # between runs: about `runs` ticks. Released, it ticks every millisecond
    # or so all along.
    assert ticks.during > 3 * runs, (ticks.during, runs, ticks.seconds)


def test_two_threads_run_two_models_at_once():
    models = []
    for _ in range(2):
        sess = ampx.Session(devices="cpu_ref:0")
        compiled = sess.compile(sess.plan("builtin:encoder", amp="O2", dtype="f16"))
        rng = np.random.default_rng(1)
        feed = {}
        for t in compiled.inputs:
            dt = ampx._tensors.NUMPY_DTYPES[t.dtype]
            feed[t.name] = (rng.uniform(-1, 1, t.shape) if t.dtype.startswith("f")
                            else rng.integers(0, 8, t.shape)).astype(dt)
        models.append((sess, compiled, feed))
    expected = models[0][1].run(models[0][2])
    results = [None, None]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                results[i] = models[i][1].run(models[i][2])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        for k in expected:
            assert np.array_equal(r[k], expected[k])


def test_one_session_from_two_threads_is_serialised():
    """A session's devices are used by one thread at a time: a second
    thread waits for the lock instead of entering the plugin beside the first."""
    sess = ampx.Session(devices="cpu_ref:0")
    compiled = sess.compile(sess.plan("builtin:mlp", amp="O0"))
    (t,) = compiled.inputs
    feed = {t.name: np.ones(t.shape, np.float32)}
    expected = compiled.run(feed)
    out = []

    def work():
        for _ in range(20):
            out.append(compiled.run(feed))
            sess.plan("builtin:mlp", amp="O1")

    threads = [threading.Thread(target=work) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(out) == 40
    for r in out:
        for k in expected:
            assert np.array_equal(r[k], expected[k])
