#!/usr/bin/python3
"""Export the torchvision zoo of the ONNX Runtime comparison (bench/ort_compare.py).

Random weights (weights=None, torch.manual_seed(0)), eval mode, opset 13
(--opset for another), batch 1, the model's usual input size; segmentation
models return their 'out' head only. BatchNorm statistics are calibrated
(calibrate_batchnorm): with torchvision's initial ones (mean 0, variance 1)
the activations of a random MobileNet shrink layer by layer to logits of
about 1e-9, below what f16 can hold, which would make every 16-bit check
on them meaningless; calibrated, they stay of order 1 as in a trained
network. The running time is the same. Runs on Debian's python3-torch /
python3-torchvision (1.13 / 0.14), not the project's virtual environment:
torch is not pinned on PyPI here. Nothing downloads (no pretrained weights).
scripts/model-zoo.sh exports a few of these (some at older opsets) into the
real-model zoo and pins their sha256.

Byte-reproducible: the weights come from torch's CPU generator, whose normal
fill has an AVX2 copy that rounds differently from the default one, and the
exporter folds BatchNorm into Conv with torch's kernels; both run under
ATEN_CPU_CAPABILITY=default (set here before torch is imported, unless the
caller set it) and one thread. The calibration's forward pass runs in
float64 (its convolutions may take CPU-dependent kernels, which differ far
below float32's rounding of the statistics). So the same torch package
gives the same bytes on every run; scripts/model-zoo.sh pins their sha256.

Usage: /usr/bin/python3 bench/export_torchvision_zoo.py --out DIR [--opset N] [NAME...]
Writes DIR/NAME.onnx (NAME_opsetN.onnx for N other than 13) and the same name
with .shapes ("input=1x3xHxW"), skipping files that exist.
"""
import argparse
import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "default")  # before torch: see above

import torch  # noqa: E402
import torchvision  # noqa: E402

DEFAULT_OPSET = 13

# name -> (constructor, input H=W)
ZOO = {
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), 224),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(), 224),
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(), 224),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), 224),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(), 224),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(), 224),
    "resnet18": (lambda: torchvision.models.resnet18(), 224),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(), 224),
    "densenet121": (lambda: torchvision.models.densenet121(), 224),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(), 224),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(), 224),
    "vit_b_16": (lambda: torchvision.models.vit_b_16(), 224),
    "lraspp_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None), 224),
    "deeplabv3_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None),
        224),
    "fcn_resnet50": (lambda: torchvision.models.segmentation.fcn_resnet50(weights_backbone=None), 224),
}


class OutOnly(torch.nn.Module):
    """Segmentation models return a dict; ONNX export wants tensors."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


CALIBRATION_BATCH = 4


def calibrate_batchnorm(model, size):
    """Sets every BatchNorm's running mean and variance to those of its input
    over one seeded batch of CALIBRATION_BATCH standard normal images (each
    BatchNorm normalising with the batch's statistics, as in training), in
    float64; the rest of the model in eval mode (no dropout). Returns the
    model in float32 and eval mode."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model
    model = model.double().eval()
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average: one batch gives its statistics
        m.train()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(CALIBRATION_BATCH, 3, size, size, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        model(x)
    return model.float().eval()


def file_stem(name, opset):
    return name if opset == DEFAULT_OPSET else f"{name}_opset{opset}"


def export(name, out_dir, opset=DEFAULT_OPSET):
    stem = file_stem(name, opset)
    path = os.path.join(out_dir, stem + ".onnx")
    if os.path.exists(path):
        return path
    make, size = ZOO[name]
    torch.manual_seed(0)
    model = calibrate_batchnorm(make(), size)
    if "segmentation" in type(model).__module__:
        model = OutOnly(model)
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    # Not under torch.no_grad(): without autograd, nn.MultiheadAttention takes
    # its fused fast path (aten::_native_multi_head_attention), which opset 13
    # cannot express.
    torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    os.replace(tmp, path)
    with open(os.path.join(out_dir, stem + ".shapes"), "w") as f:
        f.write(f"input=1x3x{size}x{size}\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET,
                    help=f"ONNX opset to export at (default {DEFAULT_OPSET}; torch 1.13 knows 7 to 17)")
    ap.add_argument("names", nargs="*", help=f"default: all of {', '.join(ZOO)}")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)
    for n in a.names or ZOO:
        if n not in ZOO:
            sys.exit(f"export_torchvision_zoo: unknown model '{n}' (known: {', '.join(ZOO)})")
        print(export(n, a.out, a.opset), flush=True)


if __name__ == "__main__":
    main()
