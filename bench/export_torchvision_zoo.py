#!/usr/bin/python3
"""Export the torchvision zoo of the ONNX Runtime comparison (bench/ort_compare.py).

Random weights (weights=None, torch.manual_seed(0)), eval mode, opset 13,
batch 1, the model's usual input size; segmentation models return their
'out' head only. Runs on Debian's python3-torch / python3-torchvision (1.13 /
0.14), not the project's virtual environment: torch is not pinned on PyPI
here. Nothing downloads (no pretrained weights).

Usage: /usr/bin/python3 bench/export_torchvision_zoo.py --out DIR [NAME...]
Writes DIR/NAME.onnx and DIR/NAME.shapes ("input=1x3xHxW"), skipping files that
exist.
"""
import argparse
import os
import sys

import torch
import torchvision

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


def export(name, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    make, size = ZOO[name]
    torch.manual_seed(0)
    model = make().eval()
    if "segmentation" in type(model).__module__:
        model = OutOnly(model)
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    # Not under torch.no_grad(): without autograd, nn.MultiheadAttention takes
    # its fused fast path (aten::_native_multi_head_attention), which opset 13
    # cannot express.
    torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    os.replace(tmp, path)
    with open(os.path.join(out_dir, name + ".shapes"), "w") as f:
        f.write(f"input=1x3x{size}x{size}\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("names", nargs="*", help=f"default: all of {', '.join(ZOO)}")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for n in a.names or ZOO:
        if n not in ZOO:
            sys.exit(f"export_torchvision_zoo: unknown model '{n}' (known: {', '.join(ZOO)})")
        print(export(n, a.out), flush=True)


if __name__ == "__main__":
    main()
