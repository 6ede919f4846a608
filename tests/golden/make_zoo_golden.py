#!/usr/bin/python3
"""Writes zoo.json: kiln's zoo networks against the same networks built with torch.nn and
torchvision (Debian's python3-torch and python3-torchvision, 1.13 / 0.14, as the LibTorch kiln
links). Re-run from the repository root after changing a case:

    /usr/bin/python3 tests/golden/make_zoo_golden.py

Each case holds the kiln config, the parameter and buffer names with their shapes, an input and
the outputs in eval mode. The weights are not stored (resnet50 alone has 25M): both sides fill
every tensor from the same formula (deterministic_fill, and fill_deterministically in
zoo_golden_test.cpp), so they hold equal weights without a file of them. The networks torchvision
has come from torchvision itself; the others are written here the way their papers (or the
TensorFlow tutorial) describe them, with the module names kiln gives.
"""

import math
import os
import zlib

import torch
import torchvision
from torch import nn
from torchvision.models.resnet import BasicBlock

from make_golden import (FloatIndexEmbedding, LastStateLSTM, compact_json, encode, rounded)

HERE = os.path.dirname(os.path.abspath(__file__))


def deterministic_fill(name, tensor):
    """sin(0.7 i + phase(name)), scaled by the tensor's role; float64 then float32 on both sides."""
    phase = (zlib.crc32(name.encode()) % 1000) / 100.0
    index = torch.arange(tensor.numel(), dtype=torch.float64)
    wave = torch.sin(0.7 * index + phase).reshape(tensor.shape)
    if tensor.dim() >= 2:  # weights: variance about 1/fan_in keeps deep stacks finite
        values = wave * math.sqrt(3.0 / (tensor.numel() // tensor.shape[0]))
    elif name.endswith("running_var") or name.endswith("weight"):  # variances, norm scales
        values = 1.0 + 0.2 * wave
    else:  # biases, running means
        values = 0.1 * wave
    return values.to(torch.float32)


def fill(net):
    with torch.no_grad():
        for name, tensor in list(net.named_parameters()) + list(net.named_buffers()):
            if not name.endswith("num_batches_tracked"):
                tensor.copy_(deterministic_fill(name, tensor))


# --- networks written from their descriptions, named as kiln names them ----------------------


def layer_net(*layers):
    net = nn.Module()
    net.layers = nn.Sequential(*layers)
    net.forward = lambda x: {"logits": net.layers(x)}
    return net


class LastStateGRU(nn.GRU):
    def forward(self, x):
        directions = 2 if self.bidirectional else 1
        return super().forward(x)[1][-directions:].transpose(0, 1).reshape(x.shape[0], -1)


class CifarResNet(nn.Module):
    """He et al. (2016) section 4.2: 3x3 stem of 16, three stages of n blocks (16, 32, 64)."""

    def __init__(self, depth, num_classes):
        super().__init__()
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        channels = 16
        for stage in range(3):
            planes, blocks = 16 << stage, []
            for b in range(n):
                stride = 2 if b == 0 and stage > 0 else 1
                down = None
                if stride != 1 or channels != planes:
                    down = nn.Sequential(nn.Conv2d(channels, planes, 1, stride, bias=False),
                                         nn.BatchNorm2d(planes))
                blocks.append(BasicBlock(channels, planes, stride, down))
                channels = planes
            setattr(self, "layer%d" % (stage + 1), nn.Sequential(*blocks))
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return {"logits": self.fc(x.mean((2, 3)))}


class WideBlock(nn.Module):
    def __init__(self, cin, cout, stride, dropout):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        if cin != cout or stride != 1:
            self.shortcut = nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x):
        a = torch.relu(self.bn1(x))
        y = self.conv2(self.dropout(torch.relu(self.bn2(self.conv1(a)))))
        return y + (self.shortcut(a) if hasattr(self, "shortcut") else x)


class WideResNet(nn.Module):
    """Zagoruyko and Komodakis (2016): WRN-depth-k with pre-activation blocks."""

    def __init__(self, depth, widen, dropout, num_classes):
        super().__init__()
        n = (depth - 4) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        channels = 16
        for stage in range(3):
            width, blocks = (16 << stage) * widen, []
            for b in range(n):
                blocks.append(WideBlock(channels, width, 2 if b == 0 and stage > 0 else 1,
                                        dropout))
                channels = width
            setattr(self, "layer%d" % (stage + 1), nn.Sequential(*blocks))
        self.bn = nn.BatchNorm2d(channels)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.conv1(x))))
        return {"logits": self.fc(torch.relu(self.bn(x)).mean((2, 3)))}


class TemporalBlock(nn.Module):
    def __init__(self, cin, cout, kernel, dilation):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv1 = nn.Conv1d(cin, cout, kernel, dilation=dilation)
        self.conv2 = nn.Conv1d(cout, cout, kernel, dilation=dilation)
        if cin != cout:
            self.downsample = nn.Conv1d(cin, cout, 1)

    def forward(self, x):
        causal = lambda conv, v: torch.relu(conv(nn.functional.pad(v, (self.pad, 0))))
        y = causal(self.conv2, causal(self.conv1, x))
        return torch.relu(y + (self.downsample(x) if hasattr(self, "downsample") else x))


class Tcn(nn.Module):
    """Bai, Kolter and Koltun (2018), without weight normalisation."""

    def __init__(self, cin, channels, kernel, outputs, steps_first, last):
        super().__init__()
        self.steps_first, self.last = steps_first, last
        widths = [cin] + channels
        self.blocks = nn.ModuleList(TemporalBlock(widths[i], widths[i + 1], kernel, 2 ** i)
                                    for i in range(len(channels)))
        self.head = nn.Linear(channels[-1], outputs)

    def forward(self, x):
        x = x.transpose(1, 2) if self.steps_first else x
        for block in self.blocks:
            x = block(x)
        if self.last:
            return {"output": self.head(x[:, :, -1])}
        y = self.head(x.transpose(1, 2))
        return {"output": y if self.steps_first else y.transpose(1, 2)}


class Autoencoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = nn.Sequential(*encoder), nn.Sequential(*decoder)

    def forward(self, x):
        code = self.encoder(x)
        return {"reconstruction": self.decoder(code), "embedding": code}


def torchvision_net(net, adapt=None):
    if adapt:
        adapt(net)
    original = net.forward
    net.forward = lambda x: {"logits": original(x)}
    return net


def small_resnet_stem(net):
    net.conv1 = nn.Conv2d(1, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()


def small_mobilenet(net):
    net.features[0][0] = nn.Conv2d(1, 32, 3, 1, 1, bias=False)
    net.features[2].conv[1][0].stride = (1, 1)


def small_vgg_classifier(hidden, pool, num_classes):
    def adapt(net):
        net.avgpool = nn.AdaptiveAvgPool2d(pool)
        net.classifier = nn.Sequential(
            nn.Linear(512 * pool * pool, hidden), nn.ReLU(True), nn.Dropout(),
            nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(), nn.Linear(hidden, num_classes))
    return adapt


def conv_autoencoder_1d():
    return Autoencoder(
        [nn.Conv1d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
         nn.Conv1d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2), nn.Flatten(), nn.Linear(64, 5)],
        [nn.Linear(5, 64), nn.ReLU(), nn.Unflatten(1, (8, 8)),
         nn.Upsample(scale_factor=2), nn.Conv1d(8, 8, 3, padding=1), nn.ReLU(),
         nn.Upsample(scale_factor=2), nn.Conv1d(8, 4, 3, padding=1), nn.ReLU(),
         nn.Conv1d(4, 1, 3, padding=1)])


class TwoHeads(nn.Module):
    """multi_head: a shared backbone, a classifier head and a head that redraws the input."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU())
        self.heads = nn.ModuleDict({"label": nn.Sequential(nn.Linear(8, 3)),
                                    "echo": nn.Sequential(nn.Linear(8, 12),
                                                          nn.Unflatten(1, (1, 3, 4)))})

    def forward(self, x):
        features = self.backbone(x)
        return {name: head(features) for name, head in self.heads.items()}


MULTI_HEAD_TEXT = ("{type: multi_head, backbone: [flatten, {type: linear, out: 8}, relu], heads: ["
                   "{name: label, layers: [{type: linear, out: 3}], loss: cross_entropy}, "
                   "{name: echo, layers: [{type: linear, out: 12}, {type: reshape, shape: "
                   "[1, 3, 4]}], loss: mse, weight: 0.5, target: input}]}")


def cases():
    """(name, kiln config, input shape, network, make_input)."""
    tokens = lambda shape: torch.randint(0, 20, shape).to(torch.float32)
    return [
        ("mlp", "{type: mlp, num_classes: 3, hidden: [16, 8], batchnorm: true, dropout: 0.2}",
         (2, 4, 4),
         layer_net(nn.Flatten(), nn.Linear(32, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2),
                   nn.Linear(16, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.2),
                   nn.Linear(8, 3)), None),
        ("tfdoc_cnn", "tfdoc_cnn", (1, 28, 28),
         layer_net(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                   nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                   nn.Linear(3136, 1024), nn.ReLU(), nn.Dropout(0.4), nn.Linear(1024, 10)), None),
        ("lenet5", "lenet5", (1, 28, 28),
         layer_net(nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.AvgPool2d(2), nn.Conv2d(6, 16, 5),
                   nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.Tanh(),
                   nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, 10)), None),
        ("lenet5_relu_maxpool", "{type: lenet5, activation: relu, pool: maxpool, padding: 0}",
         (1, 32, 32),
         layer_net(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                   nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(),
                   nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10)), None),
        ("vgg11_bn", "{type: vgg, depth: 11, batchnorm: true, hidden: 32, pool: 1}", (3, 32, 32),
         torchvision_net(torchvision.models.vgg11_bn(), small_vgg_classifier(32, 1, 10)), None),
        ("vgg16", "{type: vgg, depth: 16, hidden: 64, pool: 2, num_classes: 5}", (3, 32, 32),
         torchvision_net(torchvision.models.vgg16(), small_vgg_classifier(64, 2, 5)), None),
        ("resnet18", "{type: resnet, depth: 18}", (3, 32, 32),
         torchvision_net(torchvision.models.resnet18(num_classes=10)), None),
        ("resnet18_small_input", "{type: resnet, depth: 18, small_input: true}", (1, 28, 28),
         torchvision_net(torchvision.models.resnet18(num_classes=10), small_resnet_stem), None),
        ("resnet50", "{type: resnet, depth: 50, num_classes: 7}", (3, 32, 32),
         torchvision_net(torchvision.models.resnet50(num_classes=7)), None),
        ("resnet20", "{type: resnet, depth: 20}", (3, 32, 32), CifarResNet(20, 10), None),
        ("wide_resnet", "{type: wide_resnet, depth: 16, widen: 2, dropout: 0.3}", (3, 32, 32),
         WideResNet(16, 2, 0.3, 10), None),
        ("mobilenet_v2", "{type: mobilenet_v2, width: 0.5}", (3, 32, 32),
         torchvision_net(torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.5)), None),
        ("mobilenet_v2_small_input", "{type: mobilenet_v2, small_input: true}", (1, 28, 28),
         torchvision_net(torchvision.models.mobilenet_v2(num_classes=10), small_mobilenet), None),
        ("rnn_classifier_lstm",
         "{type: rnn_classifier, num_classes: 4, hidden: 6, layers: 2, bidirectional: true}",
         (10, 3), layer_net(LastStateLSTM(3, 6, 2, batch_first=True, bidirectional=True),
                            nn.Linear(12, 4)), None),
        ("rnn_classifier_gru_tokens",
         "{type: rnn_classifier, num_classes: 3, cell: gru, hidden: 5, vocabulary: 20, "
         "embedding_dim: 4, dropout: 0.1}", (7,),
         layer_net(FloatIndexEmbedding(20, 4), LastStateGRU(4, 5, batch_first=True),
                   nn.Dropout(0.1), nn.Linear(5, 3)), tokens),
        ("tcn_steps_first_last",
         "{type: tcn, num_classes: 2, channels: [6, 6, 8], layout: steps_first}", (16, 3),
         Tcn(3, [6, 6, 8], 3, 2, steps_first=True, last=True), None),
        ("tcn_sequence", "{type: tcn, num_classes: 3, channels: [4, 4], kernel: 2, "
         "output: sequence}", (2, 12), Tcn(2, [4, 4], 2, 3, steps_first=False, last=False), None),
        ("autoencoder_conv_1d", "{type: autoencoder, kind: conv, channels: [4, 8], code: 5}",
         (1, 32), conv_autoencoder_1d(), None),
        ("autoencoder_conv_2d", "{type: autoencoder, kind: conv, channels: [4], code: 3, "
         "activation: tanh, output_activation: sigmoid}", (2, 8, 8),
         Autoencoder([nn.Conv2d(2, 4, 3, padding=1), nn.Tanh(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(64, 3)],
                     [nn.Linear(3, 64), nn.Tanh(), nn.Unflatten(1, (4, 4, 4)),
                      nn.Upsample(scale_factor=2), nn.Conv2d(4, 4, 3, padding=1), nn.Tanh(),
                      nn.Conv2d(4, 2, 3, padding=1), nn.Sigmoid()]), None),
        ("multi_head", MULTI_HEAD_TEXT, (1, 3, 4), TwoHeads(), None),
        ("autoencoder_mlp", "{type: autoencoder, hidden: [8], code: 3}", (1, 3, 4),
         Autoencoder([nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3)],
                     [nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 12), nn.Unflatten(1, (1, 3, 4))]),
         None),
    ]


def case(name, config, shape, net, make_input):
    torch.manual_seed(zlib.crc32(name.encode()))
    fill(net)
    net.eval()
    x = make_input((2,) + shape) if make_input else rounded((2,) + shape)
    with torch.no_grad():
        outputs = net(x)
    return {"name": name, "config": config, "input_shape": list(shape),
            "parameters": {k: list(v.shape) for k, v in net.named_parameters()},
            "buffers": {k: list(v.shape) for k, v in net.named_buffers()},
            "input": encode(x), "outputs": {k: encode(v) for k, v in outputs.items()}}


def main():
    torch.set_num_threads(1)
    content = {"torch_version": torch.__version__, "torchvision_version": torchvision.__version__,
               "cases": [case(*c) for c in cases()]}
    with open(os.path.join(HERE, "zoo.json"), "w") as out:
        out.write(compact_json(content) + "\n")


if __name__ == "__main__":
    main()
