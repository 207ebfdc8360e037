"""OneHot and Compress (their depth and condition read at import), and the
ops of ONNX's other domains ampx imports as compositions of op-set ops
(frontend/onnx/src/onnx_ml_ops.cpp, onnx_training_ops.cpp; docs/ONNX.md
"Other domains"): run through ampx.backend on each CPU device and compared
with ONNX's own reference implementation (onnx.reference), on the forms and
edge values the node suite leaves out (NaN, out-of-range and negative
indices, several steps of an optimizer, double tensors, integer inputs),
and the refusals, each one line."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}
ML, TRAINING = "ai.onnx.ml", "ai.onnx.preview.training"


def model(op, inputs, n_out=1, opsets=(("", 22),), domain="", initializers=(), order=None,
          **attrs):
    """A one-node model of `domain`, importing exactly `opsets` (the other
    domains' cases import no default opset, as ONNX's do); the node reads
    the inputs, then the initializers, or the names in `order`."""
    ins = [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape)
           for k, v in inputs.items()]
    names = list(order) if order else list(inputs) + [t.name for t in initializers]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    node = helper.make_node(op, names, [o.name for o in outs], domain=domain, **attrs)
    graph = helper.make_graph([node], "g", ins, outs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def check(m, feed, rtol=1e-5, atol=1e-6, want=None):
    if want is None:
        want = ReferenceEvaluator(m).run(None, feed)
    for device in DEVICES:
        rep = ampx.backend.prepare(m, device)
        got = rep.run([feed[i.name] for i in m.graph.input])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, f"{device}: dtype {g.dtype}, expected {w.dtype}"
            assert g.shape == w.shape, f"{device}: shape {g.shape}, expected {w.shape}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"on {device}")


def refused(m, match, feed=None):
    with pytest.raises(ampx.ModelError, match=match):
        rep = ampx.backend.prepare(m, "cpu_ref:0")
        if feed is not None:  # planned at the first run, from the inputs' values
            rep.run([feed[i.name] for i in m.graph.input])


@pytest.fixture(scope="module", autouse=True)
def _db(tmp_path_factory):
    os.environ.setdefault("AMPX_CAPABILITY_DB", str(tmp_path_factory.mktemp("db") / "c.db"))


# --- OneHot -----------------------------------------------------------------------

@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
def test_onehot_axes_and_ranges(axis):
    # in range, negative in range, and out of range on both sides
    idx = np.array([[0, 3, -1], [-4, 4, -5]], np.int64)
    depth = helper.make_tensor("depth", TensorProto.INT64, [], [4])
    values = np.array([-2.0, 7.5], np.float32)
    check(model("OneHot", {"i": idx, "v": values}, opsets=(("", 11),), initializers=[depth],
                order=["i", "depth", "v"], axis=axis), {"i": idx, "v": values})


def test_onehot_float_indices_are_truncated_and_depth_from_input():
    # non-integer indices and depth cast to int64 (ONNX's text, ONNX
    # Runtime's behaviour); the reference compares the floats, so the
    # expected values are numpy's of the truncated indices
    idx = np.array([1.7, -0.5, 2.0, -1.2], np.float32)
    m = model("OneHot", {"i": idx, "d": np.array(3.9, np.float32),
                         "v": np.array([0, 1], np.int32)}, opsets=(("", 11),))
    want = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1]], np.int32)
    check(m, {"i": idx, "d": np.array(3.9, np.float32), "v": np.array([0, 1], np.int32)},
          want=[want])


def test_onehot_opset9_has_no_negative_indices():
    idx = np.array([2, -1], np.int64)
    depth = helper.make_tensor("depth", TensorProto.INT64, [1], [3])
    values = np.array([0.0, 1.0], np.float32)
    m = model("OneHot", {"i": idx, "v": values}, opsets=(("", 9),), initializers=[depth],
              order=["i", "depth", "v"])
    check(m, {"i": idx, "v": values}, want=[np.array([[0, 0, 1], [0, 0, 0]], np.float32)])


def test_onehot_refusals():
    idx = np.array([0, 1], np.int64)
    values = np.array([0.0, 1.0], np.float32)
    zero = helper.make_tensor("depth", TensorProto.INT64, [], [0])
    refused(model("OneHot", {"i": idx, "v": values}, opsets=(("", 11),), initializers=[zero],
                  order=["i", "depth", "v"]),
            r"depth \('depth'\) must be at least 1, got 0")
    three = helper.make_tensor("depth", TensorProto.INT64, [], [3])
    refused(model("OneHot", {"i": idx, "v": values}, opsets=(("", 11),), initializers=[three],
                  order=["i", "depth", "v"], axis=3), "axis 3 is out of range for indices of rank 1")
    refused(model("OneHot", {"i": idx, "v": np.zeros(3, np.float32)}, opsets=(("", 11),),
                  initializers=[three], order=["i", "depth", "v"]), r"values \('v'\) must be \[off_value, on_value\]")


# --- Compress ----------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_constant_condition(axis):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    n = 12 if axis is None else x.shape[axis]
    cond = helper.make_tensor("c", TensorProto.BOOL, [n - 1],
                              [k % 3 != 1 for k in range(n - 1)])  # shorter than the axis
    attrs = {} if axis is None else {"axis": axis}
    check(model("Compress", {"x": x}, opsets=(("", 11),), initializers=[cond], **attrs), {"x": x})


def test_compress_condition_from_input_replans_per_value():
    x = np.arange(6, dtype=np.int64).reshape(3, 2)
    m = model("Compress", {"x": x, "c": np.array([True, False, True])}, opsets=(("", 11),),
              axis=0)
    for device in DEVICES:
        rep = ampx.backend.prepare(m, device)
        for c in ([True, False, True], [False, True, False]):
            (got,) = rep.run([x, np.array(c)])
            np.testing.assert_array_equal(got, np.compress(c, x, axis=0))


def test_compress_refusals():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    past = helper.make_tensor("c", TensorProto.BOOL, [4], [True, False, False, True])
    refused(model("Compress", {"x": x}, opsets=(("", 11),), initializers=[past], axis=0),
            "condition selects position 3, past the axis' 3 elements")
    big = np.zeros((100,), np.bool_)  # too large to specialise on: a run-time value
    refused(model("Compress", {"x": np.zeros((100,), np.float32), "c": big}, opsets=(("", 11),),
                  axis=0),
            "Compress's output shape depends on its values", feed={"x": np.zeros(100, np.float32),
                                                                   "c": big})


# --- ai.onnx.ml -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype,threshold", [(np.float32, 0.25), (np.float64, -1.0),
                                             (np.int64, -0.5), (np.int32, 2.5), (np.int64, 3.0)])
def test_binarizer(dtype, threshold):
    if np.issubdtype(dtype, np.floating):
        x = np.array([-np.inf, -1.0, -0.5, 0.0, 0.25, 0.3, 2.0, np.inf, np.nan], dtype)
    else:
        x = np.array([-3, -1, 0, 1, 2, 3, 4], dtype)
    check(model("Binarizer", {"x": x}, opsets=((ML, 1),), domain=ML, threshold=threshold),
          {"x": x})


@pytest.mark.parametrize("shape,indices", [((3, 4), [[3, 0, 3]]), ((2, 2, 5), [4, 1]),
                                           ((5,), [2, 0])])
def test_array_feature_extractor(shape, indices):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = np.array(indices, np.int64)
    check(model("ArrayFeatureExtractor", {"x": x, "y": y}, opsets=((ML, 1),), domain=ML),
          {"x": x, "y": y})


def test_ml_domain_refusals():
    x = np.zeros((2, 3), np.float32)
    refused(model("Binarizer", {"x": x}, opsets=((ML, 6),), domain=ML),
            r"ai.onnx.ml.Binarizer x1 \(ai.onnx.ml opset 6: ampx knows opsets 1 to 5\)")
    refused(model("Normalizer", {"x": x}, opsets=((ML, 1),), domain=ML),
            r"1 unsupported op type \(1 node, ai.onnx.ml 1\): ai.onnx.ml.Normalizer x1")
    # a node of the default domain in a model that imports no default opset
    refused(model("Relu", {"x": x}, opsets=((ML, 1),)),
            "no opset of the default ONNX domain is imported, but a Relu node is of that domain")


# --- ai.onnx.preview.training --------------------------------------------------------

def optimizer_feed(n_tensors, states, t, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    feed = {"R": np.array(0.05, np.float32), "T": np.array(t, np.int64)}
    shapes = [(3,), (2, 2)][:n_tensors]
    for kind in ["X", "G"] + states:
        for i, s in enumerate(shapes):
            v = rng.standard_normal(s).astype(dtype)
            feed[f"{kind}{i}"] = np.abs(v) if kind == "H" else v
    return feed


OPTIMIZERS = [
    ("Adagrad", ["H"], {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.01}),
    ("Adam", ["V", "H"], {"alpha": 0.9, "beta": 0.99, "epsilon": 1e-6, "norm_coefficient": 0.01,
                          "norm_coefficient_post": 0.02}),
    ("Adam", ["V", "H"], {}),
    ("Momentum", ["V"], {"alpha": 0.9, "beta": 0.5, "mode": "standard",
                         "norm_coefficient": 0.01}),
    ("Momentum", ["V"], {"alpha": 0.9, "beta": 0.5, "mode": "nesterov",
                         "norm_coefficient": 0.0}),
]


@pytest.mark.parametrize("op,states,attrs", OPTIMIZERS)
@pytest.mark.parametrize("n_tensors", [1, 2])
def test_optimizers_over_steps(op, states, attrs, n_tensors):
    # one plan for every step: T's first step and the later ones differ
    feed = optimizer_feed(n_tensors, states, 0)
    m = model(op, feed, n_out=n_tensors * (1 + len(states)), opsets=((TRAINING, 1),),
              domain=TRAINING, **attrs)
    ref = ReferenceEvaluator(m)
    for device in DEVICES:
        rep = ampx.backend.prepare(m, device)
        for t in (0, 1, 5):
            feed["T"] = np.array(t, np.int64)
            want = ref.run(None, feed)
            got = rep.run([feed[i.name] for i in m.graph.input])
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w.astype(np.float32), rtol=1e-5, atol=1e-6,
                                           err_msg=f"{op} step {t} on {device}")


def test_optimizer_double_tensors():
    feed = optimizer_feed(1, ["H"], 3, dtype=np.float64)
    m = model("Adagrad", feed, n_out=2, opsets=((TRAINING, 1),), domain=TRAINING,
              decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)
    check(m, feed, rtol=1e-6)


def test_optimizer_refusals():
    feed = optimizer_feed(1, ["H"], 0)
    del feed["H0"]
    refused(model("Adagrad", feed, n_out=2, opsets=((TRAINING, 1),), domain=TRAINING),
            "takes R, T and 3 runs of tensors of one length; it has 4 inputs")
    feed = optimizer_feed(1, ["V"], 0)
    feed["V0"] = np.zeros(4, np.float32)
    refused(model("Momentum", feed, n_out=2, opsets=((TRAINING, 1),), domain=TRAINING,
                  alpha=0.9, beta=0.1, mode="standard", norm_coefficient=0.0),
            r"input 4 \('V0'\) is f32 \[4\], but its X \('X0'\) is f32 \[3\]")
    feed = optimizer_feed(1, ["V"], 0)
    refused(model("Momentum", feed, n_out=2, opsets=((TRAINING, 1),), domain=TRAINING,
                  alpha=0.9, beta=0.1, mode="heavy", norm_coefficient=0.0),
            "mode 'heavy' is not 'standard' or 'nesterov'")


# --- TreeEnsemble (ai.onnx.ml 5) --------------------------------------------------------

def random_ensemble(rng, trees, features, n_targets, modes, missing):
    """Random trees, nodes numbered in preorder (the order ONNX's reference
    reads membership_values in, which is the order in nodes_modes here)."""
    a = {k: [] for k in ("feat", "mode", "split", "t", "f", "tl", "fl", "miss")}
    leaf_t, leaf_w, members, roots = [], [], [], []

    def leaf():
        leaf_t.append(int(rng.integers(n_targets)))
        leaf_w.append(float(rng.integers(-20, 20)) / 4)
        return len(leaf_t) - 1

    def node(depth):
        i = len(a["feat"])
        mode = int(rng.choice(modes))
        a["feat"].append(int(rng.integers(features)))
        a["mode"].append(mode)
        a["split"].append(float(rng.integers(-4, 5)) / 2)
        a["miss"].append(int(rng.integers(2)) if missing else 0)
        if mode == 6:  # a set without 0.0 (the reference stops a set at a falsy member)
            members.extend([float(v) / 2 for v in rng.choice([-3, -1, 1, 2, 5], 2)] + [np.nan])
        for side in ("t", "f"):
            a[side].append(None)
            a[side + "l"].append(None)
        for side in ("t", "f"):
            if depth >= 3 or rng.random() < 0.3:
                a[side][i], a[side + "l"][i] = leaf(), 1
            else:
                a[side][i], a[side + "l"][i] = node(depth + 1), 0
        return i

    for _ in range(trees):
        roots.append(node(0))
    attrs = dict(
        nodes_featureids=a["feat"], nodes_truenodeids=a["t"], nodes_falsenodeids=a["f"],
        nodes_trueleafs=a["tl"], nodes_falseleafs=a["fl"], leaf_targetids=leaf_t,
        tree_roots=roots, n_targets=n_targets,
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [len(a["mode"])], a["mode"]),
        nodes_splits=helper.make_tensor("s", TensorProto.FLOAT, [len(a["split"])], a["split"]),
        leaf_weights=helper.make_tensor("w", TensorProto.FLOAT, [len(leaf_w)], leaf_w))
    if missing:
        attrs["nodes_missing_value_tracks_true"] = a["miss"]
    if members:
        attrs["membership_values"] = helper.make_tensor("mv", TensorProto.FLOAT, [len(members)],
                                                        members)
    return attrs


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("modes,missing", [([0], False), ([0, 1, 2, 3, 4, 5, 6], True),
                                           ([1, 6], False)])
def test_tree_ensemble_random_forests(aggregate, modes, missing):
    rng = np.random.default_rng(aggregate * 10 + len(modes))
    attrs = random_ensemble(rng, trees=5, features=3, n_targets=3, modes=modes, missing=missing)
    x = (rng.integers(-5, 6, (40, 3)) / 2).astype(np.float32)  # hits the splits exactly
    x[::7, 1] = np.nan
    check(model("TreeEnsemble", {"x": x}, opsets=((ML, 5),), domain=ML,
                aggregate_function=aggregate, **attrs), {"x": x})


def test_tree_ensemble_post_transform_as_onnx_runtime():
    # ONNX's reference ignores post_transform; ONNX Runtime applies it
    rng = np.random.default_rng(7)
    attrs = random_ensemble(rng, trees=3, features=2, n_targets=2, modes=[0], missing=False)
    x = rng.standard_normal((8, 2)).astype(np.float32)
    (raw,) = ReferenceEvaluator(model("TreeEnsemble", {"x": x}, opsets=((ML, 5),), domain=ML,
                                      **attrs)).run(None, {"x": x})
    check(model("TreeEnsemble", {"x": x}, opsets=((ML, 5),), domain=ML, post_transform=2,
                **attrs), {"x": x}, want=[1 / (1 + np.exp(-raw))])
    e = np.exp(raw - raw.max(axis=1, keepdims=True))
    check(model("TreeEnsemble", {"x": x}, opsets=((ML, 5),), domain=ML, post_transform=1,
                **attrs), {"x": x}, want=[e / e.sum(axis=1, keepdims=True)])


def test_tree_ensemble_refusals():
    x = np.zeros((2, 2), np.float32)
    base = random_ensemble(np.random.default_rng(1), trees=1, features=2, n_targets=1,
                           modes=[0], missing=False)

    def ensemble(**change):
        return model("TreeEnsemble", {"x": x}, opsets=((ML, 5),), domain=ML, **{**base, **change})

    refused(ensemble(post_transform=4), "post_transform 4 is not supported")
    refused(ensemble(nodes_featureids=[5] * len(base["nodes_featureids"])),
            "node 0 reads feature 5, X has 2")
    cyc = list(base["nodes_truenodeids"])
    tl = list(base["nodes_trueleafs"])
    cyc[0], tl[0] = 0, 0  # the root's true branch back to itself
    refused(ensemble(nodes_truenodeids=cyc, nodes_trueleafs=tl), "the trees have a cycle")
    refused(ensemble(tree_roots=[len(base["nodes_featureids"])]), "tree root .* is not a node")
    refused(ensemble(leaf_targetids=[3] * len(base["leaf_targetids"])), "leaf 0 has target 3")


# --- TreeEnsembleRegressor (ai.onnx.ml 1 to 4) ---------------------------------------------

REG_MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def random_regressor(rng, trees, features, n_targets, modes, missing):
    """scikit-learn's converters' form: nodes by (tree id, node id), LEAF
    nodes, and target_* entries (here one or two per leaf)."""
    a = {k: [] for k in ("tree", "id", "feat", "mode", "value", "t", "f", "miss")}
    targets = {k: [] for k in ("tree", "node", "id", "w")}

    def node(tree, depth, next_id):
        nid = next_id[0]
        next_id[0] += 1
        i = len(a["tree"])
        leaf = depth >= 3 or (depth > 0 and rng.random() < 0.3)
        a["tree"].append(tree)
        a["id"].append(nid)
        a["feat"].append(int(rng.integers(features)) if not leaf else 0)
        a["mode"].append("LEAF" if leaf else str(rng.choice(modes)))
        a["value"].append(float(rng.integers(-4, 5)) / 2 if not leaf else 0.0)
        a["miss"].append(int(rng.integers(2)) if missing and not leaf else 0)
        a["t"].append(0)
        a["f"].append(0)
        if leaf:
            count = int(rng.integers(1, min(n_targets, 2) + 1))
            for target in rng.choice(n_targets, count, replace=False):
                targets["tree"].append(tree)
                targets["node"].append(nid)
                targets["id"].append(int(target))
                targets["w"].append(float(rng.integers(-20, 20)) / 4)
        else:
            a["t"][i] = node(tree, depth + 1, next_id)
            a["f"][i] = node(tree, depth + 1, next_id)
        return nid

    for tree in range(trees):
        node(tree, 0, [0])
    attrs = dict(nodes_treeids=a["tree"], nodes_nodeids=a["id"], nodes_featureids=a["feat"],
                 nodes_modes=a["mode"], nodes_values=a["value"], nodes_truenodeids=a["t"],
                 nodes_falsenodeids=a["f"], target_treeids=targets["tree"],
                 target_nodeids=targets["node"], target_ids=targets["id"],
                 target_weights=targets["w"], n_targets=n_targets,
                 # all zeros without `missing` (ONNX's reference needs the list)
                 nodes_missing_value_tracks_true=a["miss"])
    return attrs


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("modes,missing", [(["BRANCH_LEQ"], False), (REG_MODES, True)])
def test_tree_ensemble_regressor(aggregate, modes, missing):
    rng = np.random.default_rng(len(aggregate) * 10 + len(modes))
    attrs = random_regressor(rng, trees=6, features=3, n_targets=2, modes=modes, missing=missing)
    x = (rng.integers(-5, 6, (40, 3)) / 2).astype(np.float32)
    x[::5, 0] = np.nan
    check(model("TreeEnsembleRegressor", {"x": x}, opsets=((ML, 3),), domain=ML,
                aggregate_function=aggregate, base_values=[0.5, -1.0], **attrs), {"x": x})


def test_tree_ensemble_regressor_double_and_refusals():
    rng = np.random.default_rng(3)
    attrs = random_regressor(rng, trees=2, features=2, n_targets=1, modes=["BRANCH_LEQ"],
                             missing=False)
    x = rng.standard_normal((5, 2))
    check(model("TreeEnsembleRegressor", {"x": x}, opsets=((ML, 3),), domain=ML, **attrs),
          {"x": x})
    bad = dict(attrs, nodes_truenodeids=[99] * len(attrs["nodes_truenodeids"]))
    refused(model("TreeEnsembleRegressor", {"x": x}, opsets=((ML, 3),), domain=ML, **bad),
            "node 0 of tree 0 branches to node 99, which the tree does not have")
    refused(model("TreeEnsembleRegressor", {"x": x}, opsets=((ML, 3),), domain=ML,
                  post_transform="PROBIT", **attrs), "post_transform 'PROBIT' is not supported")
    refused(model("TreeEnsembleRegressor", {"x": x}, opsets=((ML, 5),), domain=ML, **attrs),
            r"TreeEnsembleRegressor x1 \(defined in opsets 1 to 4 of ai.onnx.ml\)")


# --- LabelEncoder (ai.onnx.ml 2+), numeric ---------------------------------------------------

@pytest.mark.parametrize("opset,x,attrs", [
    (2, np.array([[1, 7, 3], [3, -2, 7]], np.int64),
     dict(keys_int64s=[3, 7, 1, 7], values_floats=[0.5, -1.0, 2.0, 9.0], default_float=-4.0)),
    (2, np.array([0.5, np.nan, -1.0, 2.25], np.float32),
     dict(keys_floats=[2.25, 0.5], values_int64s=[10, 20])),  # the default -1
    (4, np.array([4, 5, 6], np.int64),
     dict(keys_tensor=helper.make_tensor("k", TensorProto.INT64, [2], [6, 4]),
          values_tensor=helper.make_tensor("v", TensorProto.INT32, [2], [-7, 8]),
          default_tensor=helper.make_tensor("d", TensorProto.INT32, [1], [42]))),
])
def test_label_encoder_numeric(opset, x, attrs):
    check(model("LabelEncoder", {"x": x}, opsets=((ML, opset),), domain=ML, **attrs), {"x": x})


def test_label_encoder_strings_refused():
    x = np.array([1, 2], np.int64)
    refused(model("LabelEncoder", {"x": x}, opsets=((ML, 2),), domain=ML, keys_int64s=[1],
                  values_strings=["a"]), "values are strings, which ampx does not support")
