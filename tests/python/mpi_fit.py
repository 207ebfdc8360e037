"""trainer.fit(data_parallel=True), also with shard_optimizer=True, under
mpirun (docs/DISTRIBUTED.md): run
by ctest as `mpiexec -n 2 python mpi_fit.py`. Each rank also trains alone at
the global batch and compares; a failed check exits 1 on that rank."""

import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ampx


def mlp(path, features=12, hidden=16, classes=4):
    """Gemm, Relu, Gemm: no Dropout or BatchNorm, whose results depend on
    the rows a rank holds."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("w1", (features, hidden)), ("b1", (hidden,)),
                          ("w2", (hidden, classes)), ("b2", (classes,)))]
    nodes = [helper.make_node("Gemm", ["input", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"])]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", features])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def data(n=150, features=12, classes=4, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features), dtype=np.float32)
    w = rng.standard_normal((features, classes), dtype=np.float32)
    return x, np.argmax(x @ w, axis=1).astype(np.int64)


def main() -> int:
    x, y = data()
    # Every rank writes its own copy (the same bytes).
    model = os.path.join(tempfile.mkdtemp(prefix="ampx_mpi_fit_"), "mlp.onnx")
    mlp(model)
    common = dict(optimizer="sgd", lr=0.05, momentum=0.9, amp="O0", seed=3)
    s = ampx.Session(devices="cpu_ref:0")
    dp = s.trainer(model, batch=8, data_parallel=True, bucket_mb=0.0001, **common)
    history = dp.fit(x, y, epochs=2, progress=False, eval=(x, y))
    alone = s.trainer(model, batch=8 * dp.ranks, **common)
    alone.fit(x, y, epochs=2, progress=False)
    failures = []
    record = history[-1]
    info = record.get("data_parallel")
    if info is None or info["ranks"] != dp.ranks or info["global_batch"] != 8 * dp.ranks:
        failures.append(f"the epoch record's data_parallel is {info}")
    elif info["buckets"] < 2:
        failures.append(f"bucket_mb=0.0001 made {info['buckets']} buckets")
    for name, value in alone.state_dict().items():
        mine = dp.state_dict()[name]
        diff = float(np.max(np.abs(mine - value) / (1 + np.abs(value))))
        if diff > 2e-5:
            failures.append(f"{name}: {diff:g} from the one-rank run at the global batch")
    # ZeRO-1: this rank's moments only, the same weights as the one-rank run.
    sharded = s.trainer(model, batch=8, data_parallel=True, shard_optimizer=True, **common)
    sharded.fit(x, y, epochs=2, progress=False)
    mine = sharded.state_dict()
    if len(mine) >= len(alone.state_dict()) and dp.ranks > 1:
        failures.append(f"the sharded trainer holds {len(mine)} tensors, all of them")
    for name in ("w1", "b1", "w2", "b2"):
        value = alone.state_dict()[name]
        diff = float(np.max(np.abs(mine[name] - value) / (1 + np.abs(value))))
        if diff > 2e-5:
            failures.append(f"sharded {name}: {diff:g} from the one-rank run at the global batch")
    for f in failures:
        print(f"[rank {dp.rank}] {f}", file=sys.stderr)
    if dp.rank == 0 and not failures:
        print(f"{dp.ranks} ranks: eval accuracy {record['eval_accuracy']:.3f}, "
              f"{info['buckets']} buckets, {info['wire_bytes_per_step']} bytes per step")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
