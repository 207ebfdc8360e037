"""Train the built-in digits CNN at O2 for a few epochs, then export it.

    python examples/python/train_digits.py [DEVICE]   (default cpu_ref:0)
"""

import os
import sys
import tempfile

import ampx

device = sys.argv[1] if len(sys.argv) > 1 else "cpu_ref:0"
(x, y), (x_test, y_test) = ampx.load_digits()
sess = ampx.Session(devices=device)
trainer = sess.trainer("builtin:digits-cnn", optimizer="sgd", lr=0.1, momentum=0.9, amp="O2",
                       dtype="auto", batch=32)
print(trainer)
for record in trainer.fit(x, y, epochs=3, eval=(x_test, y_test)):
    print(f"epoch {record['epoch']}: loss {record['loss']:.4f}, "
          f"test accuracy {100 * record['eval_accuracy']:.1f} %, "
          f"{record['step_ms']:.2f} ms per step, loss scale {record['loss_scale']:g}")
path = os.path.join(tempfile.mkdtemp(), "digits.onnx")
trainer.export(path)
print(f"exported to {path}")
