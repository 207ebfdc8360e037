"""TfIdfVectorizer over integer n-grams (frontend/onnx/src/onnx_tfidf.cpp,
composed at import out of Slice/Equal/And/ReduceSum and a one-hot MatMul)
against ONNX's reference on random pools: every mode, with and without
weights, skips, unigrams with bigrams and trigrams, a repeated pool n-gram,
several n-grams sharing an output column, [C] and [B, C], int32 and int64;
and the one-line refusals."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import ampx
import ampx.backend

DEVICES = os.environ.get("AMPX_COMPOSED_DEVICES", "cpu_ref:0,onednn:0").split(",")


def model(x, **attrs):
    dt = TensorProto.INT64 if x.dtype == np.int64 else TensorProto.INT32
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dt, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 8
    return m


def check(m, x, reference=None):
    """ampx against ONNX's reference on `reference` (by default m itself)."""
    want = ReferenceEvaluator(reference or m).run(None, {"x": x})[0]
    for device in DEVICES:
        got = ampx.backend.prepare(m, device).run([x])[0]
        assert got.dtype == np.float32 and got.shape == want.shape, (device, got.shape, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=device)


def random_pool(rng, sizes, vocab):
    """ngram_counts and pool_int64s for sizes[i] n-grams of length i+1."""
    counts, pool = [], []
    for n, k in enumerate(sizes, start=1):
        counts.append(len(pool))
        for _ in range(k):
            pool.extend(int(v) for v in rng.integers(0, vocab, n))
    return counts, pool


@pytest.mark.parametrize("seed", range(12))
def test_random_pools(seed):
    rng = np.random.default_rng(seed)
    vocab = 4  # small, so n-grams do occur
    sizes = [int(rng.integers(0, 4)), int(rng.integers(1, 5)), int(rng.integers(0, 4))]
    counts, pool = random_pool(rng, sizes, vocab)
    total = sum(sizes)
    out = total + int(rng.integers(0, 3))
    # a permutation into the output, sometimes two n-grams in one column
    indexes = [int(v) for v in rng.permutation(out)[:total]]
    if seed % 3 == 0 and total > 1:
        indexes[-1] = indexes[0]
    mode = ["TF", "IDF", "TFIDF"][seed % 3]
    attrs = dict(mode=mode, min_gram_length=int(rng.integers(1, 3)), max_gram_length=3,
                 max_skip_count=int(rng.integers(0, 4)), ngram_counts=counts,
                 ngram_indexes=indexes, pool_int64s=pool)
    dtype = np.int64 if seed % 4 < 2 else np.int32
    shape = (int(rng.integers(1, 4)), int(rng.integers(1, 12))) if seed % 2 else (12,)
    x = rng.integers(0, vocab, shape).astype(dtype)
    if seed % 2 == 0:
        attrs["weights"] = [float(v) for v in rng.uniform(0.1, 2.0, max(indexes) + 1)]
        check(model(x, **attrs), x)
    else:
        # without weights the reference raises (len(None)); the spec's default
        # is weights of 1, which ONNX Runtime applies
        ones = [1.0] * (max(indexes) + 1)
        check(model(x, **attrs), x, reference=model(x, **attrs, weights=ones))


def test_repeated_ngram_keeps_last_id():
    # (2, 3) twice: the reference's trie keeps the second id, column 2
    x = np.array([[2, 3, 2, 3, 1]], np.int64)
    check(model(x, mode="TF", min_gram_length=2, max_gram_length=2, max_skip_count=1,
                ngram_counts=[0, 0], ngram_indexes=[0, 1, 2],
                pool_int64s=[2, 3, 1, 2, 2, 3]), x)


def test_windows_longer_than_input():
    x = np.array([5, 6], np.int32)
    check(model(x, mode="TF", min_gram_length=3, max_gram_length=3, max_skip_count=2,
                ngram_counts=[0, 0, 0], ngram_indexes=[0], pool_int64s=[5, 6, 5]), x)


@pytest.mark.parametrize("attrs, match", [
    (dict(pool_strings=["a", "b"], ngram_counts=[0], ngram_indexes=[0, 1]), "pool_strings"),
    (dict(pool_int64s=[1, 2], ngram_counts=[0], ngram_indexes=[0, 1], mode="BM25"), "mode"),
    (dict(pool_int64s=[1, 2], ngram_counts=[0], ngram_indexes=[0]), "ngram_indexes"),
    (dict(pool_int64s=[1, 2], ngram_counts=[0], ngram_indexes=[0, -1]), "ngram_indexes"),
    (dict(pool_int64s=[1, 2], ngram_counts=[0], ngram_indexes=[0, 1], mode="IDF",
          weights=[1.0]), "weights"),
    (dict(pool_int64s=[1, 2, 1, 2, 3, 1, 2, 3, 4], ngram_counts=[0, 0, 2, 5],
          ngram_indexes=[0, 1, 2], max_gram_length=4, max_skip_count=300), "bound"),
])
def test_refusals(attrs, match):
    base = dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0)
    x = np.zeros((2, 300), np.int64)
    with pytest.raises(ampx.ModelError, match=match):
        ampx.backend.prepare(model(x, **{**base, **attrs}), "cpu_ref:0")


@pytest.mark.parametrize("shape", [(0,), (3, 0), (1, 1)])
def test_empty_and_short_inputs(shape):
    x = np.zeros(shape, np.int64)
    check(model(x, mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=3,
                ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[0, 1, 0, 0],
                weights=[1.0, 2.0, 3.0]), x)


def test_int32_input_and_pool_values_past_int32():
    x = np.array([[1, 2**31 - 1, 5]], np.int32)
    check(model(x, mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                ngram_counts=[0], ngram_indexes=[0, 1], pool_int64s=[2**33 + 5, 2**31 - 1]), x)


def test_huge_max_skip_count():
    # the reference would loop 2^63 times: every skip up to C - 1 fits, the rest do not
    x = np.array([[1, 2, 1, 2]], np.int64)
    m = model(x, mode="TF", min_gram_length=2, max_gram_length=2, max_skip_count=2**63 - 1,
              ngram_counts=[0, 0], ngram_indexes=[0], pool_int64s=[1, 2])
    np.testing.assert_array_equal(ampx.backend.prepare(m, "cpu_ref:0").run([x])[0], [[3.0]])
