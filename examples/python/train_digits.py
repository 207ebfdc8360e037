"""Train the built-in digits CNN at O2 for a few epochs, checkpointing after
each, then export it. Run it again with the same checkpoint directory and it
resumes (`ampx train --resume`): only the epochs still missing are trained.

    python examples/python/train_digits.py [DEVICE [CHECKPOINT_DIR]]
        (default cpu_ref:0, a fresh temporary directory)
"""

import os
import sys
import tempfile

import ampx

device = sys.argv[1] if len(sys.argv) > 1 else "cpu_ref:0"
ckpt = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tempfile.mkdtemp(), "ckpt")
(x, y), (x_test, y_test) = ampx.load_digits()
sess = ampx.Session(devices=device)
trainer = sess.trainer("builtin:digits-cnn", optimizer="sgd", lr=0.1, momentum=0.9, amp="O2",
                       dtype="auto", batch=32)
print(trainer)
# A progress bar per epoch on a terminal (progress=True, the default).
for record in trainer.fit(x, y, epochs=3, eval=(x_test, y_test), checkpoint=ckpt, resume=True):
    print(f"epoch {record['epoch']}: loss {record['loss']:.4f}, "
          f"test accuracy {100 * record['eval_accuracy']:.1f} %, "
          f"{record['step_ms']:.2f} ms per step, loss scale {record['loss_scale']:g}")
print(f"trained {trainer.epoch} epochs ({trainer.step} steps); checkpoints in {ckpt}")
path = os.path.join(tempfile.mkdtemp(), "digits.onnx")
trainer.export(path)
print(f"exported to {path}")
