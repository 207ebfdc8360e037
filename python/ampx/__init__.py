"""ampx: automatic mixed precision on the devices you have (docs/PYTHON.md).

The package wraps ampx's one pipeline, the C++ ``ampx::Session`` the ``ampx``
CLI is a shell around: ``Session.plan`` is ``ampx plan``, ``Session.compile``
and ``CompiledModel.run`` are ``ampx run``, ``Plan.export`` is ``ampx export``.

    import ampx, numpy as np
    sess = ampx.Session(devices="onednn:0")
    plan = sess.plan("model.onnx", amp="O2", dtype="auto")
    print(plan)                       # ampx plan's table
    model = sess.compile(plan)
    out = model.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
"""

from . import _ampx
from ._ampx import DeviceError, Error, ModelError, UsageError, set_log_level
from ._devices import Device, devices, plugins
from ._inference import InferenceSession, NodeArg
from ._plan import CastRecord, NodeRecord, Plan
from ._compiled import CompiledModel, TensorInfo
from ._session import Session
from ._trainer import Trainer, load_digits

__version__ = "0.1.0"

__all__ = [
    "CastRecord",
    "CompiledModel",
    "Device",
    "DeviceError",
    "Error",
    "InferenceSession",
    "ModelError",
    "NodeArg",
    "NodeRecord",
    "Plan",
    "Session",
    "TensorInfo",
    "Trainer",
    "UsageError",
    "devices",
    "load_digits",
    "plugins",
    "set_log_level",
]
