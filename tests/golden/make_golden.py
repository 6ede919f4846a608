#!/usr/bin/python3
"""Writes the golden values kiln's tests/golden/*_test.cpp compare against, computed by PyTorch
(and, for metrics, by scikit-learn).

Re-run from the repository root after changing a case (the output is deterministic, so an
unchanged script reproduces the checked-in files byte for byte):

    /usr/bin/python3 tests/golden/make_golden.py

It needs Debian's python3-torch (torch 1.13, as the LibTorch kiln links) and python3-sklearn, and
writes beside itself: losses_metrics.json (every loss's value and gradient, accuracy over two
update() calls, every metric's value over two batches by scikit-learn, every regularizer's
penalty and gradient over named parameters), optimizers.json (the
parameter after each of five steps of sgd, adam, adamw, rmsprop, adagrad), schedulers.json (the
learning-rate factor of every step of each schedule; for reduce_on_plateau, given the value of
each validation) and layers.json (names, shapes and forward outputs of small sequential models,
batchnorm running statistics).

Every case carries the kiln config text that builds the component. Optimizer configs are written
from the very options torch.optim gets; each layer case pairs the config text with the torch.nn
module a user would write for it. Tensors are {"shape": [...], "data": [flat floats]}, each value
the shortest decimal that reads back as the same float32; inputs are rounded to 4 decimals so the
files stay small.
"""

import json
import os
import zlib

import numpy
import torch
from sklearn import metrics as skm
from torch import nn
from torch.optim import lr_scheduler

HERE = os.path.dirname(os.path.abspath(__file__))


def rounded(shape, scale=1.0, shift=0.0):
    """A float32 tensor of normal values rounded to 4 decimals."""
    values = torch.randn(shape, dtype=torch.float64) * scale + shift
    return torch.tensor([round(v, 4) for v in values.flatten().tolist()],
                        dtype=torch.float32).reshape(shape)


def shortest(value):
    """The shortest decimal that reads back as the same float32."""
    return float(str(numpy.float32(value)))


def encode(tensor):
    values = tensor.detach().to(torch.float32).flatten().tolist()
    return {"shape": list(tensor.shape), "data": [shortest(v) for v in values]}


def yaml_flow(value):
    """A Python option value written as kiln's YAML config would spell it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    return repr(value)


def component_text(name, options):
    return "{" + ", ".join(["type: " + name] +
                           ["%s: %s" % (k, yaml_flow(v)) for k, v in options.items()]) + "}"


# --- losses and metrics -------------------------------------------------------------------------


def cross_entropy_case():
    torch.manual_seed(1)
    logits = rounded((4, 5), scale=2.0)
    logits[3] *= 60  # a row far outside exp()'s float32 range: a naive softmax overflows
    logits = logits.requires_grad_()
    targets = torch.tensor([0, 3, 4, 1])
    loss = nn.functional.cross_entropy(logits, targets)
    loss.backward()
    return {"config": "cross_entropy", "logits": encode(logits), "targets": targets.tolist(),
            "loss": shortest(loss.item()), "grad": encode(logits.grad)}


def mse_case():
    torch.manual_seed(2)
    output = rounded((4, 3), scale=2.0).requires_grad_()
    target = rounded((4, 3))
    loss = nn.functional.mse_loss(output, target)
    loss.backward()
    return {"config": "mse", "output": encode(output), "target": encode(target),
            "loss": shortest(loss.item()), "grad": encode(output.grad)}


def loss_case(name, config, output, target, loss_fn):
    """A loss's value and gradient for `output` against `target` (indices or a tensor)."""
    output = output.requires_grad_()
    loss = loss_fn(output, target)
    loss.backward()
    encoded = target.tolist() if target.dtype == torch.int64 else encode(target)
    return {"name": name, "config": config, "output": encode(output), "target": encoded,
            "loss": shortest(loss.item()), "grad": encode(output.grad)}


def loss_cases():
    F = nn.functional
    torch.manual_seed(5)
    logits = rounded((6, 4), scale=2.0)
    classes = torch.tensor([0, 3, 3, 1, 2, 0])
    weights = [0.5, 2.0, 1.0, 3.0]
    multi_hot = (torch.rand(5, 3) < 0.4).to(torch.float32)
    regression = rounded((5, 3), scale=2.0)
    # targets within delta of some outputs and far from others: both branches of huber
    target = regression + rounded((5, 3), scale=1.0)
    return [
        loss_case("cross_entropy_label_smoothing", "{type: cross_entropy, label_smoothing: 0.2}",
                  logits.clone(), classes, lambda o, t: F.cross_entropy(o, t, label_smoothing=0.2)),
        loss_case("cross_entropy_class_weights",
                  "{type: cross_entropy, class_weights: [0.5, 2.0, 1.0, 3.0]}", logits.clone(),
                  classes, lambda o, t: F.cross_entropy(o, t, weight=torch.tensor(weights))),
        loss_case("cross_entropy_smoothing_and_weights",
                  "{type: cross_entropy, label_smoothing: 0.1, "
                  "class_weights: [0.5, 2.0, 1.0, 3.0]}", logits.clone(), classes,
                  lambda o, t: F.cross_entropy(o, t, weight=torch.tensor(weights),
                                               label_smoothing=0.1)),
        loss_case("binary_cross_entropy_plain", "binary_cross_entropy",
                  rounded((5, 3), scale=3.0), multi_hot,
                  F.binary_cross_entropy_with_logits),
        loss_case("binary_cross_entropy_pos_weight",
                  "{type: binary_cross_entropy, pos_weight: [1.0, 3.0, 0.5]}",
                  rounded((5, 3), scale=3.0), multi_hot,
                  lambda o, t: F.binary_cross_entropy_with_logits(
                      o, t, pos_weight=torch.tensor([1.0, 3.0, 0.5]))),
        loss_case("binary_cross_entropy_one_pos_weight",
                  "{type: binary_cross_entropy, pos_weight: 2.5}", rounded((5, 3), scale=3.0),
                  multi_hot, lambda o, t: F.binary_cross_entropy_with_logits(
                      o, t, pos_weight=torch.tensor([2.5]))),
        loss_case("mae", "mae", regression.clone(), target, F.l1_loss),
        loss_case("huber_default", "huber", regression.clone(), target, F.huber_loss),
        loss_case("huber_delta", "{type: huber, delta: 0.5}", regression.clone(), target,
                  lambda o, t: F.huber_loss(o, t, delta=0.5)),
    ]


def regularization_case(name, entries, parameters, penalty_fn):
    """The penalty of `regularization: entries` over named parameters and its gradient, with
    penalty_fn(tensors) written in torch for the parameters the entries select."""
    tensors = {k: v.clone().requires_grad_() for k, v in parameters.items()}
    penalty = penalty_fn(tensors)
    penalty.backward()
    return {"name": name, "entries": entries,
            "parameters": {k: encode(v) for k, v in parameters.items()},
            "penalty": shortest(penalty.item()),
            "grads": {k: encode(t.grad if t.grad is not None else torch.zeros_like(t))
                      for k, t in tensors.items()}}


def regularization_cases():
    torch.manual_seed(9)
    parameters = {"hidden.weight": rounded((3, 4)), "hidden.bias": rounded((3,)),
                  "out.weight": rounded((2, 3)), "out.bias": rounded((2,))}
    parameters["hidden.weight"][0, 1] = 0.0  # l1's gradient at zero: torch.sign gives 0
    return [
        regularization_case("l2_matrices", ["{type: l2, weight: 0.01}"], parameters,
                            lambda t: 0.01 * (t["hidden.weight"].square().sum() +
                                              t["out.weight"].square().sum())),
        regularization_case("l1_one_layer_with_vectors",
                            ["{type: l1, weight: 0.1, params: [out.*], vectors: true}"],
                            parameters,
                            lambda t: 0.1 * (t["out.weight"].abs().sum() +
                                             t["out.bias"].abs().sum())),
        regularization_case("l2_and_l1",
                            ["{type: l2, weight: 0.01}",
                             "{type: l1, weight: 0.001, params: [hidden.*, '*.weight']}"],
                            parameters,
                            lambda t: 0.01 * (t["hidden.weight"].square().sum() +
                                              t["out.weight"].square().sum()) +
                            0.001 * (t["hidden.weight"].abs().sum() +
                                     t["out.weight"].abs().sum())),
    ]


def accuracy_case(name, batches):
    correct = sum(int((b[0].argmax(1) == torch.tensor(b[1])).sum()) for b in batches)
    total = sum(len(b[1]) for b in batches)
    return {"name": name, "config": "accuracy",
            "batches": [{"logits": encode(b[0]), "targets": b[1]} for b in batches],
            "correct": correct, "total": total, "value": correct / total}


def accuracy_cases():
    torch.manual_seed(2)
    tie_free = [(rounded((3, 4)), [0, 1, 2]), (rounded((5, 4)), [3, 3, 0, 1, 2])]
    # Rows with equal maxima: torch's argmax picks the first, so row 0 counts for class 1 only.
    ties = torch.tensor([[0.0, 2.0, 2.0], [1.0, 1.0, 1.0], [0.5, -1.0, 0.5]])
    with_ties = [(ties, [1, 0, 2]), (rounded((2, 3)), [0, 1])]
    return [accuracy_case("tie_free", tie_free), accuracy_case("with_ties", with_ties)]


def metric_case(name, config, tag, batches, value=None, values=None):
    """A metric over `batches` (each (output, target)), with scikit-learn's value(s) over all."""
    def target_json(t):
        return t.tolist() if t.dtype == torch.int64 else encode(t)
    case = {"name": name, "config": config, "tag": tag,
            "batches": [{"output": encode(o), "target": target_json(t)} for o, t in batches]}
    if value is not None:
        case["value"] = float(value)
    if values is not None:
        case["values"] = values
    return case


def joined(batches):
    return torch.cat([o for o, _ in batches]), torch.cat([t for _, t in batches])


def ties(shape, shift=0.0):
    """Scores rounded to one decimal: many equal scores, so tie rules matter."""
    return torch.round(torch.randn(shape) * 10 + shift * 10) / 10


def multiclass_cases():
    torch.manual_seed(6)
    batches = []
    for size in (17, 23):
        logits = ties((size, 5), shift=0.0)
        logits[:, 4] -= 10.0  # class 4 is never predicted, though it is a target
        # class 3 is never a target, though it is predicted
        targets = torch.tensor([[0, 1, 2, 4][i] for i in torch.randint(0, 4, (size,))])
        batches.append((logits, targets))
    scores, y = joined(batches)
    pred = scores.argmax(1).numpy()
    cases = []
    for metric in ("precision", "recall", "f1"):
        for average in ("macro", "micro"):
            config = metric if average == "macro" else "{type: %s, average: micro}" % metric
            tag = metric if average == "macro" else metric + "_micro"
            value = skm.precision_recall_fscore_support(
                y.numpy(), pred, average=average, zero_division=0)[
                ("precision", "recall", "f1").index(metric)]
            cases.append(metric_case("%s_%s_multiclass" % (metric, average), config, tag,
                                     batches, value))
    for k in (2, 3):
        value = skm.top_k_accuracy_score(y.numpy(), scores.numpy(), k=k, labels=range(5))
        cases.append(metric_case("top_k_accuracy_%d_with_ties" % k,
                                 "{type: top_k_accuracy, k: %d}" % k, "top_%d_accuracy" % k,
                                 batches, value))
    matrix = skm.confusion_matrix(y.numpy(), pred, labels=range(5))
    cells = {"true_%d/pred_%d" % (t, p): int(matrix[t, p]) for t in range(5) for p in range(5)}
    cases.append(metric_case("confusion_matrix_five_classes", "confusion_matrix",
                             "confusion_matrix", batches, values=cells))
    return cases


def multilabel_cases():
    torch.manual_seed(7)
    batches = []
    for size in (9, 14):
        logits = rounded((size, 4), scale=2.0)
        logits[:, 3] -= 20.0  # label 3 is never predicted
        targets = (torch.rand(size, 4) < 0.45).to(torch.float32)
        batches.append((logits, targets))
    logits, y = joined(batches)
    cases = []
    for threshold in (0.5, 0.3):
        pred = (torch.sigmoid(logits) > threshold).numpy()
        for metric in ("precision", "recall", "f1"):
            for average in ("macro", "micro"):
                options = [] if average == "macro" else ["average: micro"]
                if threshold != 0.5:
                    options.append("threshold: %s" % threshold)
                config = "{type: %s%s}" % (metric, "".join(", " + o for o in options))
                tag = metric + ("_micro" if average == "micro" else "") + (
                    "_threshold_%s" % threshold if threshold != 0.5 else "")
                value = skm.precision_recall_fscore_support(
                    y.numpy(), pred, average=average, zero_division=0)[
                    ("precision", "recall", "f1").index(metric)]
                cases.append(metric_case("%s_%s_multilabel_threshold_%s" % (
                    metric, average, str(threshold).replace(".", "")), config, tag, batches,
                    value))
    return cases


def binary_cases():
    torch.manual_seed(8)
    one_logit = [(ties((n, 1)), torch.randint(0, 2, (n,))) for n in (15, 20)]
    scores, y = joined(one_logit)
    cases = [metric_case("roc_auc_one_logit_with_ties", "roc_auc", "roc_auc", one_logit,
                         skm.roc_auc_score(y.numpy(), scores[:, 0].numpy()))]
    # two classes' logits: the difference orders examples as softmax's p1 does
    two = [(ties((n, 2)), torch.randint(0, 2, (n,))) for n in (12, 18)]
    scores, y = joined(two)
    cases.append(metric_case("roc_auc_two_classes", "roc_auc", "roc_auc", two,
                             skm.roc_auc_score(y.numpy(), (scores[:, 1] - scores[:, 0]).numpy())))
    return cases


def regression_cases():
    torch.manual_seed(9)
    batches = [(rounded((n, 3), scale=2.0), rounded((n, 3), scale=1.5, shift=0.5))
               for n in (7, 11)]
    out, y = joined(batches)
    y_np, out_np = y.double().numpy(), out.double().numpy()
    return [
        metric_case("mse_three_outputs", "mse", "mse", batches,
                    skm.mean_squared_error(y_np, out_np)),
        metric_case("mae_three_outputs", "mae", "mae", batches,
                    skm.mean_absolute_error(y_np, out_np)),
        metric_case("rmse_three_outputs", "rmse", "rmse", batches,
                    skm.mean_squared_error(y_np, out_np, squared=False)),
        metric_case("r2_three_outputs", "r2", "r2", batches, skm.r2_score(y_np, out_np)),
        far_from_zero_r2_case(),
    ]


def far_from_zero_r2_case():
    """Targets near 1000 with a spread of 0.01: SS_tot from the sums of y and y^2 would lose
    about ten of its digits to cancellation."""
    torch.manual_seed(10)
    batches = []
    for n in (9, 13):
        y = rounded((n, 1), scale=0.01, shift=1000.0)
        batches.append((y + rounded((n, 1), scale=0.004), y))
    out, y = joined(batches)
    return metric_case("r2_far_from_zero", "r2", "r2", batches,
                       skm.r2_score(y.double().numpy(), out.double().numpy()))


def metric_cases():
    return multiclass_cases() + multilabel_cases() + binary_cases() + regression_cases()


# --- optimizers ---------------------------------------------------------------------------------

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
              "rmsprop": torch.optim.RMSprop, "adagrad": torch.optim.Adagrad}

# (case name, registry name, options); options not given keep both sides' defaults, so a default
# that differs from PyTorch's fails too.
OPTIMIZER_CASES = [
    ("sgd_plain", "sgd", {"lr": 0.1}),
    ("sgd_momentum_dampening_decay", "sgd",
     {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("sgd_nesterov", "sgd", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.02}),
    ("adam_defaults", "adam", {"lr": 0.01}),
    ("adam_weight_decay", "adam", {"lr": 0.01, "betas": [0.8, 0.95], "eps": 1e-6,
                                   "weight_decay": 0.1}),
    ("adam_amsgrad", "adam", {"lr": 0.02, "betas": [0.9, 0.6], "amsgrad": True}),
    ("adamw_defaults", "adamw", {"lr": 0.01}),
    ("adamw_weight_decay_amsgrad", "adamw",
     {"lr": 0.02, "betas": [0.85, 0.7], "weight_decay": 0.1, "amsgrad": True}),
    ("rmsprop_defaults", "rmsprop", {"lr": 0.01}),
    ("rmsprop_momentum_centered_decay", "rmsprop",
     {"lr": 0.01, "alpha": 0.9, "eps": 1e-6, "momentum": 0.8, "centered": True,
      "weight_decay": 0.05}),
    ("adagrad_defaults", "adagrad", {"lr": 0.1}),
    ("adagrad_lr_decay_accumulator", "adagrad",
     {"lr": 0.1, "lr_decay": 0.05, "eps": 1e-6, "weight_decay": 0.02,
      "initial_accumulator_value": 0.5}),
]

# Shrinking gradients: with a low beta2 the second moment falls, so amsgrad's maximum matters.
GRADIENT_SCALES = [3.0, 1.0, 0.2, 0.5, 0.1]


def run_optimizer(name, options, initial, gradients):
    param = initial.clone().requires_grad_()
    optimizer, after = OPTIMIZERS[name]([param], **options), []
    for grad in gradients:
        param.grad = grad.clone()
        optimizer.step()
        after.append(param.detach().clone())
    return after


def optimizer_cases():
    torch.manual_seed(3)
    initial = rounded((2, 3))
    gradients = [rounded((2, 3), scale=s) for s in GRADIENT_SCALES]
    cases = []
    for case, name, options in OPTIMIZER_CASES:
        after = run_optimizer(name, options, initial, gradients)
        if options.get("amsgrad"):
            plain = run_optimizer(name, dict(options, amsgrad=False), initial, gradients)
            assert not torch.allclose(plain[-1], after[-1], atol=1e-3), case + " tests nothing"
        cases.append({"name": case, "config": component_text(name, options),
                      "initial": encode(initial), "gradients": [encode(g) for g in gradients],
                      "after_step": [encode(p) for p in after]})
    return cases


# --- layers of a sequential model ---------------------------------------------------------------


class SeparableConv2d(nn.Module):
    """A depthwise then a pointwise convolution, with the names kiln gives them."""

    def __init__(self, channels, out, multiplier):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels * multiplier, 3, padding=1,
                                   groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels * multiplier, out, 1)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


class Residual(nn.Module):
    """body(x) + shortcut(x), then an activation, with the names kiln gives them."""

    def __init__(self, body, shortcut=None, activation=None):
        super().__init__()
        self.body = nn.Sequential(*body)
        if shortcut:
            self.shortcut = nn.Sequential(*shortcut)
        if activation:
            self.activation = activation

    def forward(self, x):
        y = self.body(x) + (self.shortcut(x) if hasattr(self, "shortcut") else x)
        return self.activation(y) if hasattr(self, "activation") else y


class TwoBranchGraph(nn.Module):
    """kiln's graph {a: conv(input), b: conv(input), joined: concat(a, b) -> conv, out: add}."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(2, 2, 1))
        self.joined = nn.Sequential(nn.Conv2d(5, 3, 1))
        self.out = nn.Sequential(nn.Tanh())

    def forward(self, x):
        a = self.a(x)
        joined = self.joined(torch.cat([a, self.b(x)], 1))
        return self.out(joined + a)


GRAPH_TEXT = ("{type: graph, nodes: ["
              "{name: a, layers: [{type: conv2d, out: 3, kernel: 3, padding: same}, relu]}, "
              "{name: b, inputs: [input], layers: [{type: conv2d, out: 2, kernel: 1}]}, "
              "{name: joined, inputs: [a, b], merge: concat, layers: [{type: conv2d, out: 3, kernel: 1}]}, "
              "{name: out, inputs: [joined, a], merge: add, layers: [tanh]}]}")


class FloatIndexEmbedding(nn.Embedding):
    """nn.Embedding taking indices held as floats."""

    def forward(self, x):
        return super().forward(x.long())


class LastStateLSTM(nn.LSTM):
    """nn.LSTM over batch-first sequences giving the top layer's final states, both directions."""

    def forward(self, x):
        directions = 2 if self.bidirectional else 1
        _, (h, _) = super().forward(x)
        return h[-directions:].transpose(0, 1).reshape(x.shape[0], -1)


class SequenceGRU(nn.GRU):
    """nn.GRU over batch-first sequences giving the output at every step."""

    def forward(self, x):
        return super().forward(x)[0]


class SelfAttention(nn.MultiheadAttention):
    """nn.MultiheadAttention with query, key and value all the input."""

    def __init__(self, dim, heads, causal=False, **kwargs):
        super().__init__(dim, heads, batch_first=True, **kwargs)
        self.causal = causal

    def forward(self, x):
        steps = x.shape[1]
        mask = torch.ones(steps, steps, dtype=torch.bool).triu(1) if self.causal else None
        return super().forward(x, x, x, need_weights=False, attn_mask=mask)[0]


class CausalEncoder(nn.TransformerEncoder):
    """nn.TransformerEncoder where each step attends only to itself and earlier steps."""

    def forward(self, x):
        steps = x.shape[1]
        return super().forward(x, mask=torch.ones(steps, steps, dtype=torch.bool).triu(1))


def encoder(dim, heads, layers, final_norm=False, causal=False, **kwargs):
    layer = nn.TransformerEncoderLayer(dim, heads, batch_first=True, **kwargs)
    kind = CausalEncoder if causal else nn.TransformerEncoder
    return kind(layer, layers, norm=nn.LayerNorm(dim) if final_norm else None)


def indices(entries):
    """Inputs of integer indices below `entries`, held as floats as kiln's batches hold them."""
    return lambda shape: torch.randint(0, entries, shape).to(torch.float32)


def layer_cases():
    """(name, example shape, mode, [(kiln layer text, the PyTorch module a user would write)])."""
    stack_eval = [("{type: conv2d, out: 2, kernel: 3, padding: same}",
                   nn.Conv2d(1, 2, 3, padding=1)),
                  ("batchnorm", nn.BatchNorm2d(2)), ("relu", nn.ReLU()),
                  ("{type: maxpool, kernel: 2}", nn.MaxPool2d(2)), ("flatten", nn.Flatten()),
                  ("{type: linear, out: 3}", nn.Linear(18, 3)),
                  ("{type: dropout, p: 0.5}", nn.Dropout(0.5))]
    stack_train = [("{type: conv2d, out: 2, kernel: 3, padding: valid}", nn.Conv2d(1, 2, 3)),
                   ("batchnorm", nn.BatchNorm2d(2)), ("relu", nn.ReLU()),
                   ("flatten", nn.Flatten()), ("{type: linear, out: 2}", nn.Linear(32, 2))]
    return [
        ("linear", (4,), "eval", [("{type: linear, out: 3}", nn.Linear(4, 3))]),
        ("linear_no_bias", (5,), "eval",
         [("{type: linear, out: 2, bias: false}", nn.Linear(5, 2, bias=False))]),
        ("conv2d_same", (2, 5, 5), "eval",
         [("{type: conv2d, out: 3, kernel: 3, padding: same}",
           nn.Conv2d(2, 3, 3, padding="same"))]),
        ("conv2d_same_dilated", (1, 6, 6), "eval",
         [("{type: conv2d, out: 2, kernel: 3, dilation: 2, padding: same}",
           nn.Conv2d(1, 2, 3, dilation=2, padding="same"))]),
        ("conv2d_valid", (2, 5, 5), "eval",
         [("{type: conv2d, out: 2, kernel: 3, padding: valid}", nn.Conv2d(2, 2, 3))]),
        ("conv2d_stride2_valid", (1, 7, 6), "eval",
         [("{type: conv2d, out: 2, kernel: 3, stride: 2, padding: valid}",
           nn.Conv2d(1, 2, 3, stride=2))]),
        ("conv2d_stride2_padded", (1, 6, 6), "eval",
         [("{type: conv2d, out: 2, kernel: 3, stride: 2, padding: 1}",
           nn.Conv2d(1, 2, 3, stride=2, padding=1))]),
        ("batchnorm2d_train", (3, 3, 3), "train",
         [("{type: batchnorm, momentum: 0.3, eps: 0.001}",
           nn.BatchNorm2d(3, eps=1e-3, momentum=0.3))]),
        ("batchnorm2d_eval", (3, 3, 3), "eval", [("batchnorm", nn.BatchNorm2d(3))]),
        ("batchnorm1d_train", (4,), "train", [("batchnorm", nn.BatchNorm1d(4))]),
        ("maxpool2d", (2, 4, 4), "eval", [("maxpool", nn.MaxPool2d(2))]),
        ("maxpool2d_stride_padding", (1, 5, 5), "eval",
         [("{type: maxpool, kernel: 3, stride: 2, padding: 1}", nn.MaxPool2d(3, 2, 1))]),
        ("maxpool1d", (2, 7), "eval", [("{type: maxpool, kernel: 2}", nn.MaxPool1d(2))]),
        ("stack_eval", (1, 6, 6), "eval", stack_eval),
        ("stack_train", (1, 6, 6), "train", stack_train),
        ("leaky_relu", (6,), "eval",
         [("{type: leaky_relu, negative_slope: 0.2}", nn.LeakyReLU(0.2))]),
        ("elu", (6,), "eval", [("{type: elu, alpha: 0.5}", nn.ELU(0.5))]),
        ("gelu", (6,), "eval", [("gelu", nn.GELU())]),
        ("gelu_tanh", (6,), "eval",
         [("{type: gelu, approximate: tanh}", nn.GELU(approximate="tanh"))]),
        ("silu", (6,), "eval", [("silu", nn.SiLU())]),
        ("tanh", (6,), "eval", [("tanh", nn.Tanh())]),
        ("sigmoid", (6,), "eval", [("sigmoid", nn.Sigmoid())]),
        ("softmax_last", (2, 5), "eval", [("softmax", nn.Softmax(dim=-1))]),
        ("softmax_dim0", (3, 4), "eval", [("{type: softmax, dim: 0}", nn.Softmax(dim=1))]),
        ("identity", (4,), "eval", [("identity", nn.Identity())]),
        ("avgpool2d", (2, 5, 5), "eval",
         [("{type: avgpool, kernel: 3, stride: 2, padding: 1}", nn.AvgPool2d(3, 2, 1))]),
        ("avgpool1d", (2, 7), "eval", [("avgpool", nn.AvgPool1d(2))]),
        ("global_avgpool", (3, 4, 5), "eval",
         [("global_avgpool", nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()))]),
        ("layernorm_two_dims", (3, 4), "eval",
         [("{type: layernorm, dims: 2}", nn.LayerNorm([3, 4]))]),
        ("layernorm_last", (3, 4), "train", [("layernorm", nn.LayerNorm(4))]),
        ("groupnorm", (4, 3, 3), "train", [("{type: groupnorm, groups: 2}", nn.GroupNorm(2, 4))]),
        ("reshape", (12,), "eval", [("{type: reshape, shape: [3, -1]}", nn.Unflatten(1, (3, 4)))]),
        ("conv1d_same", (2, 9), "eval",
         [("{type: conv1d, out: 3, kernel: 5, padding: same}", nn.Conv1d(2, 3, 5, padding=2))]),
        ("conv1d_dilated_stride", (2, 11), "eval",
         [("{type: conv1d, out: 2, kernel: 3, stride: 2, dilation: 2, padding: valid}",
           nn.Conv1d(2, 2, 3, stride=2, dilation=2))]),
        ("upsample_nearest", (2, 3, 3), "eval", [("upsample", nn.Upsample(scale_factor=2))]),
        ("upsample_bilinear", (1, 3, 4), "eval",
         [("{type: upsample, scale: 3, mode: linear}",
           nn.Upsample(scale_factor=3, mode="bilinear", align_corners=False))]),
        ("upsample_linear_1d", (2, 5), "eval",
         [("{type: upsample, mode: linear}",
           nn.Upsample(scale_factor=2, mode="linear", align_corners=False))]),
        ("conv_transpose2d", (3, 4, 4), "eval",
         [("{type: conv_transpose2d, out: 2, kernel: 3, stride: 2, padding: 1, output_padding: 1}",
           nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1))]),
        ("depthwise_separable_conv2d", (3, 5, 5), "eval",
         [("{type: depthwise_separable_conv2d, out: 4, multiplier: 2}",
           SeparableConv2d(3, 4, 2))]),
        ("residual_identity", (2, 4, 4), "train",
         [("{type: residual, body: [{type: conv2d, out: 2, kernel: 3, padding: same}, batchnorm], "
           "activation: relu}",
           Residual([nn.Conv2d(2, 2, 3, padding=1), nn.BatchNorm2d(2)], activation=nn.ReLU()))]),
        ("residual_projection", (2, 5, 5), "eval",
         [("{type: residual, body: [{type: conv2d, out: 4, kernel: 3, stride: 2, padding: 1}]}",
           Residual([nn.Conv2d(2, 4, 3, stride=2, padding=1)],
                    shortcut=[nn.Conv2d(2, 4, 1, stride=2, bias=False), nn.BatchNorm2d(4)]))]),
        ("residual_linear_projection", (3,), "eval",
         [("{type: residual, body: [{type: linear, out: 5}, tanh]}",
           Residual([nn.Linear(3, 5), nn.Tanh()], shortcut=[nn.Linear(3, 5)]))]),
        ("graph_branches", (2, 4, 4), "eval", [(GRAPH_TEXT, TwoBranchGraph())]),
        # Copies of a named block, each with its own weights: layers.0.<copy>.<index>.weight
        ("block_repeated", (3,), "eval",
         [("{type: block, name: dense, repeat: 2}",
           nn.Sequential(nn.Sequential(nn.Linear(3, 4), nn.Tanh()),
                         nn.Sequential(nn.Linear(4, 4), nn.Tanh()))),
          ("{type: linear, out: 2}", nn.Linear(4, 2))],
         None, "{dense: [{type: linear, out: 4}, tanh]}"),
        ("embedding", (5,), "eval",
         [("{type: embedding, entries: 7, dim: 4, padding_index: 0}",
           FloatIndexEmbedding(7, 4, padding_idx=0))], indices(7)),
        ("lstm_last", (6, 3), "eval",
         [("{type: lstm, hidden: 4}", LastStateLSTM(3, 4, batch_first=True))]),
        ("lstm_bidirectional_two_layers", (5, 3), "eval",
         [("{type: lstm, hidden: 3, layers: 2, bidirectional: true, dropout: 0.3}",
           LastStateLSTM(3, 3, 2, batch_first=True, bidirectional=True, dropout=0.3))]),
        ("gru_sequence", (4, 2), "eval",
         [("{type: gru, hidden: 3, output: sequence}", SequenceGRU(2, 3, batch_first=True))]),
        ("gru_bidirectional_sequence_then_linear", (5, 2), "eval",
         [("{type: gru, hidden: 3, bidirectional: true, output: sequence}",
           SequenceGRU(2, 3, batch_first=True, bidirectional=True)),
          ("{type: linear, out: 2}", nn.Linear(6, 2))]),
        ("multihead_attention", (5, 6), "eval",
         [("{type: multihead_attention, heads: 2}", SelfAttention(6, 2))]),
        ("multihead_attention_causal_no_bias", (4, 4), "eval",
         [("{type: multihead_attention, heads: 1, causal: true, bias: false}",
           SelfAttention(4, 1, causal=True, bias=False))]),
        ("transformer_encoder", (5, 4), "eval",
         [("{type: transformer_encoder, layers: 2, heads: 2, ff: 8}",
           encoder(4, 2, 2, dim_feedforward=8))]),
        ("transformer_encoder_pre_norm_gelu", (3, 6), "eval",
         [("{type: transformer_encoder, heads: 3, norm_first: true, activation: gelu, "
           "final_norm: true}",
           encoder(6, 3, 1, final_norm=True, dim_feedforward=24, norm_first=True,
                   activation="gelu"))]),
        ("token_classifier", (6,), "eval",
         [("{type: embedding, entries: 9, dim: 4}", FloatIndexEmbedding(9, 4)),
          ("{type: transformer_encoder, heads: 2, ff: 8, causal: true}",
           encoder(4, 2, 1, causal=True, dim_feedforward=8)),
          ("{type: linear, out: 3}", nn.Linear(4, 3))], indices(9)),
    ]


def randomize_state(net):
    """Non-default values everywhere, so a weight or statistic kiln ignores changes the output."""
    with torch.no_grad():
        for name, tensor in list(net.named_parameters()) + list(net.named_buffers()):
            if name.endswith("num_batches_tracked"):
                tensor.fill_(2)
            elif name.endswith("running_var") or (name.endswith("weight") and tensor.dim() == 1):
                tensor.copy_(rounded(tensor.shape, scale=0.2, shift=1.0).abs())
            else:
                tensor.copy_(rounded(tensor.shape, scale=0.5))


def layer_case(name, shape, mode, layers, make_input=None, blocks=None):
    # Seeded by its name, so that adding a case leaves the values of the others as they were.
    torch.manual_seed(zlib.crc32(name.encode()))
    net = nn.Module()  # holds the layers as kiln's sequential does: names are "layers.0.weight"
    net.layers = nn.Sequential(*[module for _, module in layers])
    randomize_state(net)
    config = "{type: sequential, layers: [" + ", ".join(text for text, _ in layers) + "]"
    config += (", blocks: " + blocks + "}") if blocks else "}"
    case = {"name": name, "config": config, "input_shape": list(shape), "mode": mode,
            "parameters": {k: encode(v) for k, v in net.named_parameters()},
            "buffers": {k: encode(v) for k, v in net.named_buffers()}}
    x = make_input((3,) + shape) if make_input else rounded((3,) + shape)
    net.train(mode == "train")
    with torch.no_grad():
        output = net.layers(x)
    case.update(input=encode(x), output=encode(output))
    if mode == "train":
        case["buffers_after"] = {k: encode(v) for k, v in net.named_buffers()}
    return case


def compact_json(value, indent=0):
    """Indented JSON with each list of numbers on one line: small, and diffs stay readable."""
    pad = " " * (indent + 1)
    if isinstance(value, dict) and value:
        items = ",\n".join(pad + json.dumps(k) + ": " + compact_json(v, indent + 1)
                           for k, v in value.items())
        return "{\n" + items + "\n" + " " * indent + "}"
    if isinstance(value, list) and value and not all(isinstance(v, (int, float)) for v in value):
        items = ",\n".join(pad + compact_json(v, indent + 1) for v in value)
        return "[\n" + items + "\n" + " " * indent + "]"
    return json.dumps(value)


# --- schedulers ---------------------------------------------------------------------------------

BASE_LR = 0.1

# name, kiln config, span (total steps, steps per epoch, batch size), the torch.optim.lr_scheduler
# for it; kiln's warm-up is LinearLR's shape and its floor is a factor of the base rate. A
# scheduler is stepped after every optimizer step, or at the end of each epoch when wrapped in
# per_epoch(); a list of schedulers all act on the rate (their factors multiply).
SCHEDULE_CASES = [
    ("constant_plain", "constant", (6, 3, 8), lambda opt: None),
    ("constant_warmup", "{type: constant, warmup: 4 steps, warmup_start: 0.25}", (9, 3, 8),
     lambda opt: lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4)),
    ("cosine_plain", "cosine", (20, 5, 8),
     lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=20)),
    ("cosine_warmup_floor", "{type: cosine, warmup: 5 steps, warmup_start: 0.1, floor: 0.05}",
     (25, 5, 8), lambda opt: warmup_then_cosine(opt, 0.1, 5, 20, 0.05)),
    # 1 epoch of 4 steps, and 20 samples in batches of 8 round up to 3 steps
    ("cosine_warmup_in_epochs", "{type: cosine, warmup: 1 epoch, warmup_start: 0.5}", (16, 4, 8),
     lambda opt: warmup_then_cosine(opt, 0.5, 4, 12, 0.0)),
    ("cosine_warmup_in_samples", "{type: cosine, warmup: 20 samples}", (10, 4, 8),
     lambda opt: warmup_then_cosine(opt, 0.1, 3, 7, 0.0)),
    # StepLR stepped per epoch: a step_size of 2 epochs is 6 steps of 3 per epoch
    ("step_in_epochs", "{type: step, step_size: 2 epochs, gamma: 0.5}", (14, 3, 8),
     lambda opt: per_epoch(lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))),
    # absolute positions: the warm-up multiplies the decay, which counts from step 0
    ("step_in_steps_warmup", "{type: step, step_size: 4 steps, gamma: 0.7, warmup: 3 steps, "
     "warmup_start: 0.2}", (12, 3, 8),
     lambda opt: [lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=3),
                  lr_scheduler.StepLR(opt, step_size=4, gamma=0.7)]),
    # 3 steps, 2 epochs of 4 steps = 8, 40 samples in batches of 8 = 5: milestones in any order
    ("multistep_mixed_units", "{type: multistep, milestones: [3 steps, 2 epochs, 40 samples], "
     "gamma: 0.5}", (12, 4, 8),
     lambda opt: lr_scheduler.MultiStepLR(opt, milestones=[3, 8, 5], gamma=0.5)),
    ("multistep_warmup", "{type: multistep, milestones: [1 epoch], warmup: 2 steps}", (10, 4, 8),
     lambda opt: [lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2),
                  lr_scheduler.MultiStepLR(opt, milestones=[4], gamma=0.1)]),
    ("exponential_per_step", "{type: exponential, gamma: 0.9}", (10, 3, 8),
     lambda opt: lr_scheduler.ExponentialLR(opt, gamma=0.9)),
    ("exponential_staircase_warmup", "{type: exponential, gamma: 0.5, staircase: true, "
     "warmup: 3 steps, warmup_start: 0.4}", (13, 4, 8),
     lambda opt: [lr_scheduler.LinearLR(opt, start_factor=0.4, total_iters=3),
                  per_epoch(lr_scheduler.ExponentialLR(opt, gamma=0.5))]),
    # Hugging Face's get_linear_schedule_with_warmup, a LambdaLR of this formula
    ("linear_warmup_like_hugging_face", "{type: linear_warmup, warmup: 3 steps}", (10, 2, 8),
     lambda opt: lr_scheduler.LambdaLR(opt, lambda s: s / 3 if s < 3 else max(0.0, (10 - s) / 7))),
    ("linear_warmup_floor_in_epochs", "{type: linear_warmup, warmup: 1 epoch, floor: 0.1}",
     (12, 4, 8),
     lambda opt: lr_scheduler.LambdaLR(
         opt, lambda s: s / 4 if s < 4 else 0.1 + 0.9 * max(0.0, (12 - s) / 8))),
    ("one_cycle_defaults", "one_cycle", (20, 5, 8),
     lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=BASE_LR, total_steps=20,
                                         cycle_momentum=False)),
    # the peak at pct_start x 17 - 1 = 3.25: between steps, as OneCycleLR computes it
    ("one_cycle_linear", "{type: one_cycle, pct_start: 0.25, div_factor: 10, "
     "final_div_factor: 100, anneal: linear}", (17, 5, 8),
     lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=BASE_LR, total_steps=17, pct_start=0.25,
                                         div_factor=10, final_div_factor=100,
                                         anneal_strategy="linear", cycle_momentum=False)),
    ("polynomial_power", "{type: polynomial, power: 2}", (10, 3, 8),
     lambda opt: lr_scheduler.PolynomialLR(opt, total_iters=10, power=2.0)),
    # TensorFlow's PolynomialDecay end rate as the floor, after a warm-up
    ("polynomial_warmup_floor", "{type: polynomial, power: 0.5, floor: 0.2, warmup: 2 steps, "
     "warmup_start: 0.5}", (12, 3, 8),
     lambda opt: lr_scheduler.SequentialLR(opt, [
         lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2),
         lr_scheduler.LambdaLR(opt, lambda s: 0.2 + 0.8 * (1 - min(s, 10) / 10) ** 0.5)],
         milestones=[2])),
]


class per_epoch:
    """A torch scheduler stepped at the end of each epoch instead of after every step."""

    def __init__(self, scheduler):
        self.scheduler = scheduler


def warmup_then_cosine(opt, start, warmup, decay, floor):
    return lr_scheduler.SequentialLR(opt, [
        lr_scheduler.LinearLR(opt, start_factor=start, total_iters=warmup),
        lr_scheduler.CosineAnnealingLR(opt, T_max=decay, eta_min=floor * BASE_LR)],
        milestones=[warmup])


def schedule_cases():
    cases = []
    for name, config, (total, per_epoch_steps, batch), make in SCHEDULE_CASES:
        optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE_LR)
        made = make(optimizer)
        schedulers = made if isinstance(made, list) else [made] if made else []
        factors = []
        for step in range(total):  # the rate each optimizer step uses, read before the step
            factors.append(shortest(optimizer.param_groups[0]["lr"] / BASE_LR))
            optimizer.step()
            for scheduler in schedulers:
                if not isinstance(scheduler, per_epoch):
                    scheduler.step()
                elif (step + 1) % per_epoch_steps == 0:
                    scheduler.scheduler.step()
        cases.append({"name": name, "config": config, "total_steps": total,
                      "steps_per_epoch": per_epoch_steps, "batch_size": batch,
                      "factors": factors})
    return cases


# reduce_on_plateau reacts to validation: name, kiln config, the watched tag, the torch
# ReduceLROnPlateau options, and the value of each validation (one after every step here). The
# factor of each step is read before it; the value is observed after it.
PLATEAU_CASES = [
    ("reduce_on_plateau_defaults", "reduce_on_plateau", "val/loss", {},
     [1.0, 0.9, 0.8, 0.79995] + [0.8] * 12 + [0.5] + [0.6] * 14),
    ("reduce_on_plateau_threshold_cooldown_floor",
     "{type: reduce_on_plateau, factor: 0.5, patience: 1, threshold: 0.1, cooldown: 2, floor: 0.2}",
     "val/loss", dict(factor=0.5, patience=1, threshold=0.1, cooldown=2, min_lr=0.2 * BASE_LR),
     [2.0, 1.9, 1.85, 1.5, 1.45, 1.4, 1.39, 1.2, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3,
      1.3, 1.3]),
    ("reduce_on_plateau_max_abs",
     "{type: reduce_on_plateau, monitor: val/accuracy, mode: max, threshold_mode: abs, "
     "threshold: 0.01, patience: 0, factor: 0.3}",
     "val/accuracy", dict(mode="max", threshold_mode="abs", threshold=0.01, patience=0, factor=0.3),
     [0.5, 0.6, 0.605, 0.62, 0.62, 0.7, 0.69, 0.71, 0.8, 0.805, 0.75, 0.9]),
]


def plateau_cases():
    cases = []
    for name, config, monitor, options, values in PLATEAU_CASES:
        optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE_LR)
        scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, **options)
        factors = []
        for value in values:
            factors.append(shortest(optimizer.param_groups[0]["lr"] / BASE_LR))
            optimizer.step()
            scheduler.step(value)
        cases.append({"name": name, "config": config, "total_steps": len(values),
                      "steps_per_epoch": 1, "batch_size": 8, "monitor": monitor,
                      "values": values, "factors": factors})
    return cases


def write(file_name, **content):
    with open(os.path.join(HERE, file_name), "w") as out:
        out.write(compact_json(dict(torch_version=torch.__version__, **content)) + "\n")


def main():
    torch.set_num_threads(1)  # one summation order, run after run
    write("losses_metrics.json", cross_entropy=cross_entropy_case(), mse=mse_case(),
          accuracy=accuracy_cases(), losses=loss_cases(), metrics=metric_cases(),
          regularization=regularization_cases())
    write("schedulers.json", cases=schedule_cases() + plateau_cases())
    write("optimizers.json", cases=optimizer_cases())
    write("layers.json", cases=[layer_case(*case) for case in layer_cases()])


if __name__ == "__main__":
    main()
