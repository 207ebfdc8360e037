"""The integer element types (i8, i16, i32, i64, u8, u16, u32, u64) through
ONNX import, the Python conversion and the kernels of cpu_ref and onednn,
against NumPy: wrapping arithmetic and comparisons per dtype, the bit ops
(BitShift with ONNX opset 28's edge rule, BitwiseAnd/Or/Xor/Not, BitCast),
Cast between every pair of types, and the data-movement ops."""

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import ampx.backend as backend

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SIGNED = [t for t in INTS if np.issubdtype(t, np.signedinteger)]
FLOATS = [np.float16, np.float32, np.float64]


def elem(dtype):
    return oh.np_dtype_to_tensor_dtype(np.dtype(dtype))


def model(nodes, inputs, outputs, opset=18):
    """inputs/outputs: (name, numpy dtype, shape)."""
    graph = oh.make_graph(
        nodes, "g", [oh.make_tensor_value_info(n, elem(t), s) for n, t, s in inputs],
        [oh.make_tensor_value_info(n, elem(t), s) for n, t, s in outputs])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def run(m, feeds, device):
    return backend.prepare(m, device).run(feeds)


def operands(t, n=12, seed=0):
    """Values over the type's whole range, the extremes included; b has no zeros."""
    info = np.iinfo(t)
    rng = np.random.default_rng(seed)
    a = rng.integers(info.min, info.max, size=n, dtype=t, endpoint=True)
    b = rng.integers(info.min, info.max, size=n, dtype=t, endpoint=True)
    a[:2] = [info.min, info.max]
    b[:2] = [info.max, 3]
    b[b == 0] = 1
    if info.min < 0:
        b[(a == info.min) & (b == -1)] = 2  # MIN / -1 overflows in NumPy too
    return a.reshape(3, 4), b.reshape(3, 4)


def trunc_div(a, b):
    q = a // b
    fix = (a % b != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(a.dtype)).astype(a.dtype)


def c_mod(a, b):  # fmod=1: the dividend's sign
    return (a - trunc_div(a, b) * b).astype(a.dtype)


BINARY = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Div": trunc_div,
    "Max": np.maximum,
    "Min": np.minimum,
    "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
}
COMPARE = {
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
}


@pytest.mark.parametrize("t", INTS, ids=lambda t: np.dtype(t).name)
def test_arithmetic_wraps_and_compares_in_every_width(run_devices, t):
    a, b = operands(t)
    with np.errstate(over="ignore"):
        for device in run_devices:
            for op, ref in BINARY.items():
                m = model([oh.make_node(op, ["a", "b"], ["y"])], [("a", t, [3, 4]), ("b", t, [3, 4])],
                          [("y", t, [3, 4])])
                got = run(m, [a, b], device)[0]
                assert got.dtype == t and np.array_equal(got, ref(a, b)), (device, op)
            for fmod, ref in ((0, lambda x, y: np.mod(x, y)), (1, c_mod)):
                m = model([oh.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
                          [("a", t, [3, 4]), ("b", t, [3, 4])], [("y", t, [3, 4])])
                assert np.array_equal(run(m, [a, b], device)[0], ref(a, b)), (device, fmod)
            for op, ref in COMPARE.items():
                m = model([oh.make_node(op, ["a", "b"], ["y"])], [("a", t, [3, 4]), ("b", t, [1, 4])],
                          [("y", np.bool_, [3, 4])])
                assert np.array_equal(run(m, [a, b[:1]], device)[0], ref(a, b[:1])), (device, op)
            m = model([oh.make_node("Abs", ["a"], ["y"])], [("a", t, [3, 4])], [("y", t, [3, 4])])
            assert np.array_equal(run(m, [a], device)[0], np.abs(a)), device
            m = model([oh.make_node("BitwiseNot", ["a"], ["y"])], [("a", t, [3, 4])],
                      [("y", t, [3, 4])])
            assert np.array_equal(run(m, [a], device)[0], np.invert(a)), device
            cond = (a > b)
            m = model([oh.make_node("Where", ["c", "a", "b"], ["y"])],
                      [("c", np.bool_, [3, 4]), ("a", t, [3, 4]), ("b", t, [3, 4])],
                      [("y", t, [3, 4])])
            assert np.array_equal(run(m, [cond, a, b], device)[0], np.where(cond, a, b)), device
            if t in SIGNED:
                m = model([oh.make_node("Neg", ["a"], ["y"])], [("a", t, [3, 4])],
                          [("y", t, [3, 4])])
                assert np.array_equal(run(m, [a], device)[0], -a), device


def test_neg_of_an_unsigned_type_is_refused(run_devices):
    m = model([oh.make_node("Neg", ["a"], ["y"])], [("a", np.uint16, [3])], [("y", np.uint16, [3])])
    for device in run_devices:
        with pytest.raises(Exception, match="unsigned"):
            run(m, [np.arange(3, dtype=np.uint16)], device)


def shift_reference(x, y, left):
    """ONNX opset 28: an amount < 0 or >= the width gives the sign extension alone."""
    bits = x.dtype.itemsize * 8
    out = np.zeros_like(x)
    for i, (xv, yv) in enumerate(zip(x.tolist(), y.tolist())):
        if yv < 0 or yv >= bits:
            out[i] = -1 if (not left and xv < 0) else 0
        elif left:
            out[i] = np.array((xv << yv) & ((1 << bits) - 1), dtype=np.uint64).astype(x.dtype)
        else:
            out[i] = xv >> yv
    return out


@pytest.mark.parametrize("t", INTS, ids=lambda t: np.dtype(t).name)
def test_bit_shift_every_amount(run_devices, t):
    bits = np.dtype(t).itemsize * 8
    info = np.iinfo(t)
    x = np.array([1, 3, info.max, info.min, 5, info.max // 3, 0, 1], dtype=t)
    amounts = [0, 1, bits - 1, bits, bits + 1, 3, 2, bits // 2]
    if info.min < 0:
        x[4] = -5
        amounts[6] = -1
    y = np.array(amounts, dtype=t)
    for device in run_devices:
        for direction in ("LEFT", "RIGHT"):
            opset = 18 if info.min == 0 else 28
            m = model([oh.make_node("BitShift", ["x", "y"], ["z"], direction=direction)],
                      [("x", t, [8]), ("y", t, [8])], [("z", t, [8])], opset=opset)
            got = run(m, [x, y], device)[0]
            assert np.array_equal(got, shift_reference(x, y, direction == "LEFT")), (device, direction)


@pytest.mark.parametrize("pair", [(np.float32, np.int32), (np.float32, np.uint32),
                                  (np.float64, np.int64), (np.uint64, np.float64),
                                  (np.float16, np.int16), (np.int8, np.uint8),
                                  (np.uint16, np.int16)], ids=lambda p: f"{p[0].__name__}_{p[1].__name__}")
def test_bit_cast_keeps_the_bytes(run_devices, pair):
    src, dst = pair
    x = (np.arange(-6, 6).reshape(3, 4) * 37 + 1).astype(src)
    m = model([oh.make_node("BitCast", ["x"], ["y"], to=elem(dst))], [("x", src, [3, 4])],
              [("y", dst, [3, 4])], opset=26)
    for device in run_devices:
        got = run(m, [x], device)[0]
        assert got.dtype == dst and got.tobytes() == x.tobytes(), device


def test_bit_cast_between_widths_is_refused(run_devices):
    m = model([oh.make_node("BitCast", ["x"], ["y"], to=elem(np.int64))], [("x", np.float32, [3])],
              [("y", np.int64, [3])], opset=26)
    for device in run_devices:
        with pytest.raises(Exception, match="width"):
            run(m, [np.zeros(3, np.float32)], device)


ALL = INTS + FLOATS + [np.bool_]


@pytest.mark.parametrize("src", ALL, ids=lambda t: np.dtype(t).name)
def test_cast_table_against_numpy(run_devices, src):
    """Every pair of types on values every type holds; integers to narrower
    integers wrap as NumPy's astype does."""
    if src is np.bool_:
        x = np.array([True, False, True, True, False, False])
    elif np.issubdtype(src, np.signedinteger):
        x = np.array([0, 1, 7, 100, -1, -128], dtype=src)
    else:
        x = np.array([0, 1, 7, 100, 127, 42], dtype=src)
    for dst in ALL:
        if src is dst:
            continue
        if np.issubdtype(src, np.floating) and np.issubdtype(dst, np.unsignedinteger):
            xs = np.abs(x)  # a negative float to unsigned is undefined in NumPy (C)
        else:
            xs = x
        m = model([oh.make_node("Cast", ["x"], ["y"], to=elem(dst))], [("x", src, [6])],
                  [("y", dst, [6])])
        with np.errstate(invalid="ignore", over="ignore"):
            want = xs.astype(dst)
        for device in run_devices:
            got = run(m, [xs], device)[0]
            assert got.dtype == dst and np.array_equal(got, want), (device, dst)


def test_cast_float_to_integer_saturates_and_u64_keeps_its_top_bit(run_devices):
    x = np.array([1e10, -1e10, np.nan, 65535.9, -0.9], dtype=np.float64)
    big = np.array([2**63 + 2**11, 2**64 - 1, 5], dtype=np.uint64)
    for device in run_devices:
        for dst, want in ((np.uint16, [65535, 0, 0, 65535, 0]), (np.int16, [32767, -32768, 0, 32767, 0]),
                          (np.uint32, [2**32 - 1, 0, 0, 65535, 0])):
            m = model([oh.make_node("Cast", ["x"], ["y"], to=elem(dst))], [("x", np.float64, [5])],
                      [("y", dst, [5])])
            assert run(m, [x], device)[0].tolist() == want, (device, dst)
        m = model([oh.make_node("Cast", ["x"], ["y"], to=elem(np.float64))], [("x", np.uint64, [3])],
                  [("y", np.float64, [3])])
        assert np.array_equal(run(m, [big], device)[0], big.astype(np.float64)), device
        m = model([oh.make_node("Cast", ["x"], ["y"], to=elem(np.float32))], [("x", np.uint64, [3])],
                  [("y", np.float32, [3])])
        assert np.array_equal(run(m, [big], device)[0], big.astype(np.float32)), device


@pytest.mark.parametrize("t", [np.int16, np.uint16, np.uint32, np.uint64],
                         ids=lambda t: np.dtype(t).name)
def test_data_movement(run_devices, t):
    x = (np.arange(24) * 2654435761 % 65521).astype(t).reshape(2, 3, 4)
    idx = np.array([2, 0], dtype=np.int64)
    i64 = lambda name, v: oh.make_tensor(name, onnx.TensorProto.INT64, [len(v)], v)  # noqa: E731
    cases = [
        ([oh.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [], [4, 2, 3], x.transpose(2, 0, 1)),
        ([oh.make_node("Concat", ["x", "x"], ["y"], axis=1)], [], [2, 6, 4], np.concatenate([x, x], 1)),
        ([oh.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
         [i64("s", [1]), i64("e", [3]), i64("a", [2])], [2, 3, 2], x[:, :, 1:3]),
        ([oh.make_node("Gather", ["x", "i"], ["y"], axis=1)],
         [oh.make_tensor("i", onnx.TensorProto.INT64, [2], idx)], [2, 2, 4], x[:, idx]),
        ([oh.make_node("Reshape", ["x", "s"], ["y"])], [i64("s", [6, 4])], [6, 4], x.reshape(6, 4)),
        ([oh.make_node("Expand", ["x", "s"], ["y"])], [i64("s", [2, 2, 3, 4])], [2, 2, 3, 4],
         np.broadcast_to(x, (2, 2, 3, 4))),
        ([oh.make_node("Pad", ["x", "p", "v"], ["y"])],
         [i64("p", [0, 0, 1, 0, 0, 1]), oh.make_tensor("v", elem(t), [], np.array([9], dtype=t))],
         [2, 3, 6], np.pad(x, ((0, 0), (0, 0), (1, 1)), constant_values=9)),
    ]
    for nodes, inits, shape, want in cases:
        m = model(nodes, [("x", t, [2, 3, 4])], [("y", t, shape)])
        m.graph.initializer.extend(inits)
        for device in run_devices:
            got = run(m, [x], device)[0]
            assert got.dtype == t and np.array_equal(got, want), (device, nodes[0].op_type)
