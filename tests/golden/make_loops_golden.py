#!/usr/bin/python3
"""Writes loops.json beside itself: the loss and the student's gradient of a distillation step,
computed by PyTorch as its users write knowledge distillation (Hinton et al. 2015):

    alpha * cross_entropy(s, y) + (1 - alpha) * T^2 * kl_div(log_softmax(s / T),
                                                            log_softmax(t / T),
                                                            reduction="batchmean", log_target=True)

for a student s = x @ W_s and a teacher t = x @ W_t over the same batch; and a mean teacher's
(Tarvainen and Valpola 2017, as their PyTorch code computes it): after one update of the student
from W0 to W1 the teacher is a * W0 + (1 - a) * W1 with a = min(1 - 1 / (1 + 1), ema_decay), and
a batch of which some rows are unlabelled (target -1) costs

    cross_entropy(labelled rows) * labelled / rows
        + consistency * exp(-5 (1 - 1 / rampup_steps)^2) * mse(softmax(s), softmax(t)).

kiln's kiln/loops/*_test.cpp build the loops from each case's config text and compare.
Re-run from the repository root (the output is deterministic):

    /usr/bin/python3 tests/golden/make_loops_golden.py

It needs Debian's python3-torch (torch 1.13, as the LibTorch kiln links).
"""

import json
import math
import os

import numpy
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def rounded(shape, scale=1.0):
    """A float32 tensor of normal values rounded to 4 decimals."""
    values = torch.randn(shape, dtype=torch.float64) * scale
    return torch.tensor([round(v, 4) for v in values.flatten().tolist()],
                        dtype=torch.float32).reshape(shape)


def encode(tensor):
    values = tensor.detach().to(torch.float32).flatten().tolist()
    return {"shape": list(tensor.shape), "data": [float(str(numpy.float32(v))) for v in values]}


def distillation_case(name, alpha, temperature, teacher_scale):
    x = rounded((6, 5))
    student = rounded((5, 4)).requires_grad_()
    teacher = rounded((5, 4), teacher_scale)
    target = torch.tensor([0, 3, 1, 2, 3, 0])
    s = x @ student
    t = x @ teacher
    hard = F.cross_entropy(s, target)
    soft = F.kl_div(F.log_softmax(s / temperature, dim=1), F.log_softmax(t / temperature, dim=1),
                    reduction="batchmean", log_target=True) * temperature * temperature
    loss = alpha * hard + (1 - alpha) * soft
    loss.backward()
    return {"name": name,
            "config": f"{{type: distillation, teacher: a_run, alpha: {alpha}, "
                      f"temperature: {temperature}}}",
            "input": encode(x), "target": target.tolist(), "student": encode(student),
            "teacher": encode(teacher), "hard_loss": float(hard), "soft_loss": float(soft),
            "loss": float(loss), "grad": encode(student.grad)}


def mean_teacher_case(name, decay, consistency, rampup):
    x = rounded((6, 5))
    before = rounded((5, 4))
    student = rounded((5, 4)).requires_grad_()
    target = torch.tensor([2, -1, 0, -1, -1, 3])
    a = min(1 - 1 / 2, decay)
    teacher = a * before + (1 - a) * student.detach()
    s = x @ student
    t = x @ teacher
    labelled = target >= 0
    hard = F.cross_entropy(s[labelled], target[labelled])
    weight = consistency * math.exp(-5 * (1 - min(1, 1 / rampup)) ** 2) if rampup else consistency
    mse = F.mse_loss(F.softmax(s, dim=1), F.softmax(t, dim=1))
    loss = hard * float(labelled.sum()) / len(target) + weight * mse
    loss.backward()
    return {"name": name,
            "config": f"{{type: mean_teacher, ema_decay: {decay}, consistency: {consistency}, "
                      f"rampup_steps: {rampup}, noise: 0}}",
            "input": encode(x), "target": target.tolist(), "initial": encode(before),
            "student": encode(student), "teacher": encode(teacher), "hard_loss": float(hard),
            "consistency": float(mse), "weight": weight, "loss": float(loss),
            "grad": encode(student.grad)}


def main():
    torch.manual_seed(7)
    cases = [distillation_case("blend", 0.3, 2.0, 1.0),
             distillation_case("soft_only_hot_teacher", 0.0, 4.0, 20.0),
             distillation_case("hard_only", 1.0, 1.0, 1.0)]
    mean_teacher = [mean_teacher_case("ramping", 0.99, 10.0, 4),
                    mean_teacher_case("decay_below_warm_start", 0.3, 100.0, 0)]
    with open(os.path.join(HERE, "loops.json"), "w") as out:
        json.dump({"torch_version": torch.__version__, "distillation": cases,
                   "mean_teacher": mean_teacher}, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
