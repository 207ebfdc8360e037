"""Plan a model at O2, look at the plan, compile it and run it on NumPy arrays.

    python examples/python/plan_and_run.py [MODEL] [DEVICES]

MODEL: builtin:cnn (the default), builtin:encoder, or an .onnx file with fixed
input shapes. DEVICES: e.g. "onednn:0" (default: every device there is, in
`auto` order)."""

import sys

import numpy as np

import ampx

model = sys.argv[1] if len(sys.argv) > 1 else "builtin:cnn"
devices = sys.argv[2] if len(sys.argv) > 2 else "auto"

for d in ampx.devices():
    print(d)

sess = ampx.Session(devices=devices)
plan = sess.plan(model, amp="O2", dtype="auto")
print(plan)  # ampx plan's table: every node, intended and effective dtype, device, why
kept = [n.name for n in plan.nodes if n.intended != n.effective]
print(f"kept f32 though the policy wanted 16-bit: {kept or 'none'}")
print(plan.summary)

compiled = sess.compile(plan)
rng = np.random.default_rng(0)
feed = {t.name: rng.uniform(-1, 1, t.shape).astype(np.float32) if t.dtype == "f32"
        else rng.integers(0, 8, t.shape) for t in compiled.inputs}
outputs = compiled.run(feed)
for name, array in outputs.items():
    print(f"{name}: {array.dtype}{list(array.shape)}, first values {array.ravel()[:4]}")

_, per_node = compiled.run(feed, profile=True, runs=3)
slowest = max(per_node["steps"], key=lambda s: s["measured_us"])
print(f"slowest step: {slowest['name']} ({slowest['op']}, {slowest['measured_us']:.1f} us)")
