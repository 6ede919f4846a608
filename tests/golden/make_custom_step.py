#!/usr/bin/python3
"""Writes the modules and data of kiln's tests of models written in PyTorch
(`model: {type: torchscript}`) and of the `custom` loop, as a PyTorch user would: modules scripted
with torch.jit.script and saved with torch.jit.save, and expected.json with the loss of every
training step that PyTorch itself computes in eager mode from the same initial weights, on the
same rows in the same order, with the same optimizer.

Re-run from the repository root after changing a module:

    /usr/bin/python3 tests/golden/make_custom_step.py

It needs Debian's python3-torch (torch 1.13, as the LibTorch kiln links). It writes under
tests/golden/custom_step/:
  data.csv      96 rows of 4 features (three blobs) and a class label, `a,b,c,d,label`
  step.pt       Step: forward gives 3 logits; training_step and validation_step give the loss
                and the accuracy of a batch {input, target}
  no_step.pt    a linear model with forward alone (no training_step)
  pair.pt       a model whose forward returns a tuple (not one tensor)
  bad_steps.pt  a linear model (5 classes) whose training_step gives what the custom loop refuses, chosen by
                the batch's first target: 0 no loss, 1 a value of two numbers, 2 a loss without
                gradient, 3 a value named "a b", 4 raises
  expected.json the settings and, per step, the mean cross-entropy PyTorch computed
"""

import csv
import json
import os
from typing import Dict, Tuple

import torch
import torch.nn.functional as F

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "custom_step")
ROWS, BATCH, EPOCHS, LR, MOMENTUM = 96, 16, 5, 0.1, 0.9


class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 16)
        self.norm = torch.nn.BatchNorm1d(16)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.norm(self.hidden(x))))

    def measure(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        logits = self.forward(batch["input"])
        target = batch["target"]
        accuracy = (logits.argmax(1) == target).float().mean()
        return {"loss": F.cross_entropy(logits, target), "accuracy": accuracy}

    @torch.jit.export
    def training_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        return self.measure(batch)

    @torch.jit.export
    def validation_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        return self.measure(batch)


class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        y = self.linear(x)
        return y, y


class BadSteps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 5)  # a class for each case

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)

    @torch.jit.export
    def training_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        loss = F.cross_entropy(self.forward(batch["input"]), batch["target"])
        case = int(batch["target"][0])
        if case == 0:
            return {"accuracy": loss.detach()}
        if case == 1:
            return {"loss": loss, "pair": torch.zeros(2)}
        if case == 2:
            return {"loss": loss.detach()}
        if case == 3:
            return {"loss": loss, "a b": loss.detach()}
        raise RuntimeError("the step gave up")


def write_data(path):
    generator = torch.Generator().manual_seed(7)
    centres = torch.tensor([[2.0, 0.0, -1.0, 1.0], [-2.0, 1.0, 0.0, -1.0], [0.0, -2.0, 2.0, 0.0]])
    rows = []
    for i in range(ROWS):
        label = i % 3
        point = centres[label] + torch.randn(4, generator=generator)
        rows.append(["%.6g" % float(v) for v in point] + [str(label)])
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["a", "b", "c", "d", "label"])
        writer.writerows(rows)


def read_data(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    features = torch.tensor([[float(r[k]) for k in "abcd"] for r in rows], dtype=torch.float32)
    labels = torch.tensor([int(r["label"]) for r in rows], dtype=torch.int64)
    return features, labels


def eager_losses(model, features, labels):
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    losses = []
    model.train()
    for _ in range(EPOCHS):
        for start in range(0, ROWS, BATCH):
            batch = {"input": features[start:start + BATCH], "target": labels[start:start + BATCH]}
            optimizer.zero_grad(set_to_none=True)
            loss = model.training_step(batch)["loss"]
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


def main():
    os.makedirs(HERE, exist_ok=True)
    write_data(os.path.join(HERE, "data.csv"))
    torch.manual_seed(3)
    step = Step()
    torch.jit.save(torch.jit.script(step), os.path.join(HERE, "step.pt"))
    torch.jit.save(torch.jit.script(torch.nn.Linear(4, 3)), os.path.join(HERE, "no_step.pt"))
    torch.jit.save(torch.jit.script(Pair()), os.path.join(HERE, "pair.pt"))
    torch.jit.save(torch.jit.script(BadSteps()), os.path.join(HERE, "bad_steps.pt"))
    features, labels = read_data(os.path.join(HERE, "data.csv"))
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    losses = eager_losses(step, features, labels)
    expected = {"rows": ROWS, "batch_size": BATCH, "epochs": EPOCHS, "lr": LR,
                "momentum": MOMENTUM, "losses": losses}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
