"""NumPy in and out of a run. An input array of the input's dtype that is
C-contiguous is handed to the run as it is (read in place, no copy); any
other is converted once, as NumPy's same-kind casting allows. bf16 comes
out as ml_dtypes.bfloat16 when that package is installed, else as float32
(exact: every bf16 value is a float32)."""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # optional: NumPy has no bfloat16 of its own
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
    _BF16 = None

NUMPY_DTYPES = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "f64": np.dtype(np.float64),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "i16": np.dtype(np.int16),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}

# ONNX Runtime's names of the same types (NodeArg.type).
ONNX_TYPES = {
    "f32": "tensor(float)",
    "f16": "tensor(float16)",
    "bf16": "tensor(bfloat16)",
    "f64": "tensor(double)",
    "i64": "tensor(int64)",
    "i32": "tensor(int32)",
    "i8": "tensor(int8)",
    "u8": "tensor(uint8)",
    "i16": "tensor(int16)",
    "u16": "tensor(uint16)",
    "u32": "tensor(uint32)",
    "u64": "tensor(uint64)",
    "bool": "tensor(bool)",
}


def _float32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """Round to nearest even, as ampx's own conversion (sdk half.hpp); NaN stays NaN."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16)
    return rounded


def to_input(name: str, dtype: str, value: Any) -> np.ndarray:
    """The array a run reads for input `name` of ampx dtype `dtype`."""
    if dtype == "bf16":
        arr = np.asarray(value)
        if _BF16 is not None and arr.dtype == _BF16:
            return (arr if arr.flags.c_contiguous else np.array(arr, order="C")).view(np.uint16)
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"input '{name}': expected numbers for bf16, got {arr.dtype}")
        return _float32_to_bf16_bits(arr)
    target = NUMPY_DTYPES[dtype]
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype != target:
        if not np.can_cast(arr.dtype, target, casting="same_kind"):
            raise TypeError(f"input '{name}': expected {target} ({dtype}), got {arr.dtype}")
        arr = arr.astype(target)
    # C-contiguous and of the right dtype: the same object, not a copy.
    return arr if arr.flags.c_contiguous else np.array(arr, order="C")


def from_output(dtype: str, arr: np.ndarray) -> np.ndarray:
    """A run's output: bf16 bits as ml_dtypes.bfloat16 or float32."""
    if dtype != "bf16":
        return arr
    if _BF16 is not None:
        return arr.view(_BF16)
    return (arr.astype(np.uint32) << np.uint32(16)).view(np.float32)
