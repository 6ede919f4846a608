#!/usr/bin/python3
"""Writes custom_step.pt beside this file: the module of custom_step.yaml, a training step written
in PyTorch that kiln trains (docs/training.md, "Loops"). It is what a PyTorch user would write: an
nn.Module whose forward gives the logits (what kiln validates, exports and serves), with a
training_step and a validation_step over a batch {"input": images, "target": classes}, scripted
by torch.jit.script and saved by torch.jit.save. Re-run it after changing the module:

    /usr/bin/python3 configs/examples/fashion_mnist/custom_step.py

It needs PyTorch (Debian's python3-torch 1.13 matches the LibTorch kiln links). The weights it
saves are the initial ones (seed 1); kiln trains them.
"""

import os
from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class FashionStep(nn.Module):
    """Two convolution blocks and a linear classifier; images normalised inside, so that the
    exported model takes the pixels in [0, 1] as the data delivers them."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.norm1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.norm2 = nn.BatchNorm2d(64)
        self.classifier = nn.Linear(64 * 7 * 7, 10)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = (images - 0.286) / 0.353
        x = F.max_pool2d(F.relu(self.norm1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.norm2(self.conv2(x))), 2)
        return self.classifier(x.flatten(1))

    @torch.jit.export
    def training_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        logits = self.forward(batch["input"])
        target = batch["target"]
        loss = F.cross_entropy(logits, target, label_smoothing=0.1)
        accuracy = (logits.argmax(1) == target).float().mean()
        return {"loss": loss, "accuracy": accuracy}

    @torch.jit.export
    def validation_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        logits = self.forward(batch["input"])
        return {"plain_loss": F.cross_entropy(logits, batch["target"])}


def main():
    torch.manual_seed(1)
    torch.jit.save(torch.jit.script(FashionStep()), os.path.join(HERE, "custom_step.pt"))


if __name__ == "__main__":
    main()
