"""Sequence and optional inputs and outputs through ampx.InferenceSession
(docs/PYTHON.md; docs/ONNX.md, "Sequences and optionals"): a sequence is a
list of arrays in and out, an optional an array or None, and each run's
lengths and optionals given as none are part of the plan cache's key."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as oh

import ampx


def _seq(name: str, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return oh.make_tensor_sequence_value_info(name, elem, ["n"])


def _map_model() -> bytes:
    """ys = SequenceMap(xs, b) with the body y = x + b; n = SequenceLength(xs)."""
    body = oh.make_graph(
        [oh.make_node("Add", ["x", "b"], ["y"])], "body",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         oh.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    graph = oh.make_graph(
        [oh.make_node("SequenceMap", ["xs", "b"], ["ys"], body=body),
         oh.make_node("SequenceLength", ["xs"], ["n"])], "g",
        [_seq("xs"), oh.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
        [_seq("ys"), oh.make_tensor_value_info("n", TensorProto.INT64, [])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]).SerializeToString()


def test_a_sequence_is_a_list_in_and_out_and_its_length_keys_the_plan():
    sess = ampx.InferenceSession(_map_model(), providers=["cpu_ref:0"], amp="O0")
    assert [(a.name, a.type) for a in sess.get_inputs()] == [
        ("xs", "seq(tensor(float))"), ("b", "tensor(float)")]
    assert sess.plan is None  # the length comes with the run
    b = np.array([0.5], np.float32)
    xs = [np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32)]
    ys, n = sess.run(None, {"xs": xs, "b": b})
    assert isinstance(ys, list) and len(ys) == 2
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(y, x + b)
    assert n == 2
    # Another length is another plan; the first one's is kept.
    ys, n = sess.run(None, {"xs": xs[:1], "b": b})
    assert len(ys) == 1 and n == 1
    ys, n = sess.run(None, {"xs": xs, "b": b})
    assert len(ys) == 2
    assert sess.cache_stats()["plans"] == 2
    with pytest.raises(TypeError, match="'xs' is a sequence"):
        sess.run(None, {"xs": xs[0], "b": b})


def test_an_optional_is_an_array_or_none():
    graph = oh.make_graph(
        [oh.make_node("OptionalHasElement", ["o"], ["has"]),
         oh.make_node("Identity", ["o"], ["same"])], "g",
        [oh.make_value_info("o", oh.make_optional_type_proto(
            oh.make_tensor_type_proto(TensorProto.FLOAT, [2])))],
        [oh.make_tensor_value_info("has", TensorProto.BOOL, []),
         oh.make_value_info("same", oh.make_optional_type_proto(
             oh.make_tensor_type_proto(TensorProto.FLOAT, [2])))])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])
    sess = ampx.InferenceSession(model.SerializeToString(), providers=["cpu_ref:0"], amp="O0")
    assert sess.get_inputs()[0].type == "optional(tensor(float))"
    x = np.array([1, 2], np.float32)
    has, same = sess.run(None, {"o": x})
    assert has and same is not None
    np.testing.assert_array_equal(same, x)
    has, same = sess.run(None, {"o": None})
    assert not has and same is None


def test_a_sequence_output_of_tensor_inputs_is_planned_at_construction():
    graph = oh.make_graph(
        [oh.make_node("SplitToSequence", ["x"], ["parts"], axis=0, keepdims=0)], "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])], [_seq("parts")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    sess = ampx.InferenceSession(model.SerializeToString(), providers=["cpu_ref:0"], amp="O0")
    assert sess.plan is not None
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    (parts,) = sess.run(None, {"x": x})
    assert [p.tolist() for p in parts] == x.tolist()


def test_a_branch_sequence_shadows_an_outer_one_only_inside_the_branch():
    """The If branch names its own sequence `s` (one element) like the outer
    one (two): inside it SequenceLength(s) is 1, after it the outer s is back."""
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    then = oh.make_graph(
        [oh.make_node("SequenceConstruct", ["x"], ["s"]),
         oh.make_node("SequenceLength", ["s"], ["m"])], "then", [],
        [oh.make_tensor_value_info("m", TensorProto.INT64, [])])
    other = oh.make_graph([oh.make_node("SequenceLength", ["s"], ["m"])], "else", [],
                          [oh.make_tensor_value_info("m", TensorProto.INT64, [])])
    graph = oh.make_graph(
        [oh.make_node("SequenceConstruct", ["x", "x"], ["s"]),
         oh.make_node("If", ["c"], ["inner"], then_branch=then, else_branch=other),
         oh.make_node("SequenceLength", ["s"], ["outer"]),
         oh.make_node("Add", ["x", "x"], ["y"])], "g", [x],
        [oh.make_tensor_value_info("inner", TensorProto.INT64, []),
         oh.make_tensor_value_info("outer", TensorProto.INT64, []),
         oh.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [oh.make_tensor("c", TensorProto.BOOL, [], [True])])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]).SerializeToString()
    sess = ampx.InferenceSession(model, providers=["cpu_ref:0"], amp="O0")
    inner, outer, _ = sess.run(None, {"x": np.ones(2, np.float32)})
    assert (int(inner), int(outer)) == (1, 2)
