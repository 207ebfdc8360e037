"""bench/scaling_model.py's formulas and bench/data_parallel.py's parsing
(issue 41), on hand-made inputs; with AMPX_CLI set, `data_parallel.py
compute` end to end on digits-cnn (one process, no MPI)."""
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import data_parallel as dp  # noqa: E402
import scaling_model as sm  # noqa: E402

GB = 1e9


def test_ring_allreduce_terms():
    # Bandwidth only: 2(n-1)/n * m / beta.
    assert sm.ring_allreduce_s(2, 1e6, 0, 0.0, GB, 0.0) == pytest.approx(1e-3)
    assert sm.ring_allreduce_s(8, 8e6, 0, 0.0, GB, 0.0) == pytest.approx(2 * 7 / 8 * 8e-3)
    # Latency only: 2(n-1) alpha.
    assert sm.ring_allreduce_s(64, 0, 0, 1e-5, GB, 0.0) == pytest.approx(126e-5)
    # Reduction: (n-1)/n elements gamma.
    assert sm.ring_allreduce_s(4, 0, 1000, 0.0, GB, 1e-9) == pytest.approx(0.75e-6)
    assert sm.ring_allreduce_s(1, 1e9, 1e9, 1.0, 1.0, 1.0) == 0.0


def test_recursive_doubling_exchanges_the_whole_buffer_log2_n_times():
    assert sm.recursive_doubling_s(64, 1e6, 0, 1e-5, GB, 0.0) == pytest.approx(6 * (1e-5 + 1e-3))
    net = sm.Network(1e-5, GB, 0.0, sm.recursive_doubling_s)
    e, _ = sm.exposed_s([(0.0, 4e6)], 0.0, 8, 4, net, overlap=False)
    assert e == pytest.approx(3 * (1e-5 + 4e-3))


def test_buckets_hold_at_most_the_size_and_never_split_a_tensor():
    tl = [(1.0, 100), (2.0, 100), (3.0, 500), (4.0, 50)]
    assert sm.make_buckets(tl, 200) == [(2.0, 200), (3.0, 500), (4.0, 50)]
    assert sm.make_buckets(tl, 150) == [(1.0, 100), (2.0, 100), (3.0, 500), (4.0, 50)]
    assert sm.make_buckets(tl, 600) == [(2.0, 200), (4.0, 550)]
    assert sm.make_buckets(tl, 10_000) == [(4.0, 750)]


def uniform_buckets(k, total, backward):
    return [(backward * (i + 1) / k, total / k) for i in range(k)]


def test_without_overlap_everything_is_exposed():
    net = sm.Network(1e-5, GB, 0.0)
    b = uniform_buckets(4, 4e6, 0.010)
    per = sm.ring_allreduce_s(8, 1e6, 0, *net[:2], 0.0)
    exposed, total = sm.exposed_s(b, 0.010, 8, 4, net, overlap=False)
    assert total == pytest.approx(4 * per)
    assert exposed == pytest.approx(4 * per)


def test_overlap_hides_all_but_the_last_bucket_when_communication_keeps_up():
    net = sm.Network(1e-5, GB, 0.0)
    b = uniform_buckets(4, 4e6, 0.100)  # 25 ms between buckets, ~2 ms each
    per = sm.ring_allreduce_s(8, 1e6, 0, *net[:2], 0.0)
    exposed, _ = sm.exposed_s(b, 0.100, 8, 4, net, overlap=True)
    assert exposed == pytest.approx(per)


def test_overlap_when_communication_bound_matches_the_closed_form():
    # C - B (1 - 1/k): the channel busy from the first bucket on.
    net = sm.Network(1e-5, 1e8, 0.0)
    k, backward = 8, 0.010
    b = uniform_buckets(k, 16e6, backward)
    per = sm.ring_allreduce_s(8, 2e6, 0, *net[:2], 0.0)
    exposed, total = sm.exposed_s(b, backward, 8, 4, net, overlap=True)
    assert per > backward / k
    assert exposed == pytest.approx(total - backward * (1 - 1 / k))


def test_sixteen_bit_halves_the_bandwidth_term():
    net = sm.Network(0.0, GB, 0.0)
    b = [(0.0, 8e6)]
    f32, _ = sm.exposed_s(b, 0.0, 2, 4, net, overlap=False)
    half, _ = sm.exposed_s(b, 0.0, 2, 2, net, overlap=False)
    assert half == pytest.approx(f32 / 2)


def test_default_buckets_overlap_only_their_first_mebibyte():
    net = sm.Network(1e-5, GB, 0.0)
    tl = sm.uniform_timeline(1_000_000, 0.005)
    b = sm.make_buckets(tl, 25 << 20)
    # plan_buckets' rule: the first bucket at most 1 MiB, the rest in one.
    assert len(b) == 2
    assert b[0][1] <= sm.FIRST_BUCKET_BYTES < b[0][1] + 4_000_000 / 1024
    overlapped, _ = sm.exposed_s(b, 0.005, 8, 4, net, True)
    alone, _ = sm.exposed_s(b, 0.005, 8, 4, net, False)
    assert overlapped < alone
    # A single tensor is one bucket, whatever its size: nothing overlaps.
    one = sm.make_buckets([(0.005, 4_000_000)], 25 << 20)
    assert len(one) == 1
    assert sm.exposed_s(one, 0.005, 8, 4, net, True) == sm.exposed_s(one, 0.005, 8, 4, net, False)


def profile_record(steps):
    return {"event": "profile", "per_node": {"steps": steps}}


def node(name, op, us, shapes):
    return {"name": name, "op": op, "measured_us": us, "shapes": shapes}


PROFILE = [
    node("conv1", "Conv2d", 10, "f32[8x1x8x8], f32[4x1x3x3], f32[4] -> f32[8x4x8x8]"),
    node("bn1", "BatchNormTraining", 10,
         "f32[8x4x8x8], f32[4], f32[4], f32[4], f32[4] -> f32[8x4x8x8], f32[4], f32[4]"),
    node("fc", "Gemm", 20, "f32[8x256], f32[10x256], f32[10] -> f32[8x10]"),
    node("loss", "SoftmaxCrossEntropy", 10, "f32[8x10], i64[8] -> f32[], f32[8x10]"),
    node("loss/grad/dlogits", "SoftmaxCrossEntropyGrad", 10, "f32[], f32[8x10], i64[8] -> f32[8x10]"),
    node("fc/grad/db", "Gemm", 20, "f32[8x10], f32[8x256] -> f32[10x256]"),
    node("fc/grad/dc/sum", "ReduceSum", 10, "f32[8x10] -> f32[1x10]"),
    node("bn1/grad/bn", "BatchNormGrad", 30, "x -> y"),
    node("conv1/grad/dw", "Conv2dGradWeight", 30, "x -> y"),
    node("optimizer", "MultiSgdUpdate", 10, "x -> y"),
]
PARAMS = 4 * 9 + 4 + 8 + 2570


def test_profile_split_gives_the_backward_share_and_the_gradient_order():
    total, share, tl = dp.profile_split([profile_record(PROFILE)], PARAMS)
    assert total == 160
    assert share == pytest.approx(100 / 160)
    assert tl == [(pytest.approx(0.4), 2570 * 4), (pytest.approx(0.7), 8 * 4),
                  (pytest.approx(1.0), 40 * 4)]


def test_profile_split_falls_back_when_the_layers_do_not_add_up():
    _, _, tl = dp.profile_split([profile_record(PROFILE)], PARAMS + 1)
    assert tl is None
    with pytest.raises(dp.BenchError, match="no profile record"):
        dp.profile_split([{"event": "epoch"}], PARAMS)


def test_dp_summary_names_a_missing_field():
    good = {"ranks": 2, "buckets": 1, "allreduce_dtype": "f32", "wire_bytes_per_step": 8.0,
            "comm_ms_per_step": 2.0, "exposed_comm_ms_per_step": 1.0, "overlap": 0.5}
    epochs = [{}, {"data_parallel": good}, {"data_parallel": dict(good, overlap=0.7)}]
    assert dp.dp_summary(epochs, 2)["overlap"] == pytest.approx(0.6)
    with pytest.raises(dp.BenchError, match="no 'data_parallel'"):
        dp.dp_summary([{}, {}], 2)
    with pytest.raises(dp.BenchError, match="ranks 1, mpirun started 2"):
        dp.dp_summary([{}, {"data_parallel": dict(good, ranks=1)}], 2)
    missing = {k: v for k, v in good.items() if k != "wire_bytes_per_step"}
    with pytest.raises(dp.BenchError, match="'wire_bytes_per_step'"):
        dp.dp_summary([{}, {"data_parallel": missing}], 2)


def run_script(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600)


def test_scaling_model_refuses_bad_input_in_one_line():
    p = run_script(str(ROOT / "bench/scaling_model.py"), "--model", "mlp:10:5")
    assert p.returncode != 0
    assert p.stderr.strip().count("\n") == 0 and "--model 'mlp:10:5'" in p.stderr
    p = run_script(str(ROOT / "bench/scaling_model.py"), "--model", "mlp:10:5:6")
    assert p.returncode != 0 and "BACKWARD_MS <= STEP_MS" in p.stderr


def test_scaling_model_prints_both_tables():
    p = run_script(str(ROOT / "bench/scaling_model.py"), "--model", "mlp:4198400:8.6:3.1",
                   "--gamma-ns", "0.3")
    assert p.returncode == 0, p.stderr
    assert "| mlp | 8.60 ms | 3.10 ms | 16.0 MiB (2 buckets of 25 MiB) | 25 Gbit/s | f32 |" in p.stdout
    assert "Where smaller buckets stop helping" in p.stdout


@pytest.mark.skipif("AMPX_CLI" not in os.environ, reason="AMPX_CLI (the ampx binary) not set")
def test_compute_end_to_end_on_digits(tmp_path):
    out = tmp_path / "c.json"
    p = run_script(str(ROOT / "bench/data_parallel.py"), "compute", "--ampx",
                   os.environ["AMPX_CLI"], "--device", "cpu_ref:0", "--models", "digits-cnn",
                   "--rounds", "1", "--epochs", "2", "--out", str(out))
    assert p.returncode == 0, p.stderr
    m = json.loads(out.read_text())["models"][0]
    assert m["parameters"] == 13802
    assert sum(b for _, b in m["timeline"]) == 13802 * 4
    assert 0 < m["backward_ms"] < m["step_ms"]
    p = run_script(str(ROOT / "bench/scaling_model.py"), "--compute", str(out))
    assert p.returncode == 0, p.stderr
    assert "measured gradient order" in p.stdout


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
def test_compare_under_mpirun_with_a_stand_in_for_ampx():
    p = run_script(str(ROOT / "bench/data_parallel.py"), "compare", "--ampx",
                   str(ROOT / "tests/bench/fake_ampx.sh"), "--models", "digits-cnn", "--rounds",
                   "2")
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if line.startswith("| digits-cnn")]
    assert len(rows) == 3
    assert "| 1 rank x 2 threads | - | 2.00 ms (2.00-2.00) | 16000 | 1.00x | 2.33 ms |" in rows[0]
    assert "| f32 |" in rows[1] and "| 1 | 64 | 2.00 | 0.50 | 75 % |" in rows[1]
    assert "| bf16 |" in rows[2] and "| 1 | 32 | 2.00 | 0.50 | 75 % |" in rows[2]


def test_compare_refuses_an_ampx_without_data_parallel(tmp_path):
    fake = tmp_path / "ampx"
    fake.write_text("#!/bin/sh\necho '  --epochs INT'\n")
    fake.chmod(0o755)
    p = run_script(str(ROOT / "bench/data_parallel.py"), "compare", "--ampx", str(fake))
    assert p.returncode != 0
    assert "has no --data-parallel" in p.stderr and p.stderr.strip().count("\n") == 0
