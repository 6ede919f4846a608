"""The strong peer of benchmarks/pipeline.sh: the same work as kiln's pipeline (Fashion-MNIST
TFRecord shards of tf.Example -> decode image and label, scale to [0, 1], random_crop 28 with
padding 2, random_flip horizontal, normalize (0.286, 0.353), shuffle, batch 128) written the way
a careful PyTorch user makes a DataLoader fast:
- the serialized records are read into memory before timing, as kiln's `cache: records`;
- tf.Example is parsed by protobuf's C++ implementation (Debian's python3-protobuf), from the
  Example message's public schema built here as a descriptor (no TensorFlow needed);
- each worker task is one whole batch (a BatchSampler as the DataLoader's sampler), so there is
  one inter-process hand-over per batch, not per example;
- the augmentation is vectorised over the batch with torch ops: one gather for every crop, one
  `where` for the flips, one fused scale-and-normalize.
Reads the records and prints one JSON line with benchmarks/peers/pipeline_dataloader.py's code
(the plain per-example peer).
"""
import glob

import torch
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

from pipeline_dataloader import arguments, read_records, report_rate  # the plain peer's

MEAN, STD = 0.286, 0.353
SIZE, PADDING = 28, 2


def example_class():
    """tensorflow.Example from its public schema (example.proto, feature.proto field numbers)."""
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="peer_example.proto", package="tensorflow",
                                              syntax="proto3")

    def message(name, fields, nested=()):
        m = file.message_type.add(name=name)
        for field in fields:
            m.field.add(**field)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        return m

    repeated = F.LABEL_REPEATED
    message("BytesList", [dict(name="value", number=1, label=repeated, type=F.TYPE_BYTES)])
    message("FloatList", [dict(name="value", number=1, label=repeated, type=F.TYPE_FLOAT)])
    message("Int64List", [dict(name="value", number=1, label=repeated, type=F.TYPE_INT64)])
    feature = message("Feature", [
        dict(name="bytes_list", number=1, type=F.TYPE_MESSAGE, type_name=".tensorflow.BytesList",
             oneof_index=0),
        dict(name="float_list", number=2, type=F.TYPE_MESSAGE, type_name=".tensorflow.FloatList",
             oneof_index=0),
        dict(name="int64_list", number=3, type=F.TYPE_MESSAGE, type_name=".tensorflow.Int64List",
             oneof_index=0)])
    feature.oneof_decl.add(name="kind")
    entry = descriptor_pb2.DescriptorProto(name="FeatureEntry")
    entry.field.add(name="key", number=1, type=F.TYPE_STRING)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, type_name=".tensorflow.Feature")
    entry.options.map_entry = True
    message("Features", [dict(name="feature", number=1, label=repeated, type=F.TYPE_MESSAGE,
                              type_name=".tensorflow.Features.FeatureEntry")], [entry])
    message("Example", [dict(name="features", number=1, type=F.TYPE_MESSAGE,
                             type_name=".tensorflow.Features")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.MessageFactory(pool).GetPrototype(
        pool.FindMessageTypeByName("tensorflow.Example"))


class TfRecordBatches(Dataset):
    """Indexed by a list of record indices: the whole augmented batch."""

    def __init__(self, pattern):
        self.records = [r for path in sorted(glob.glob(pattern)) for r in read_records(path)]
        self.example = None  # made in each worker: descriptors do not cross processes
        self.rows = torch.arange(SIZE)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, indices):
        if self.example is None:
            self.example = example_class()
        parse = self.example.FromString
        pixels, labels = [], []
        for i in indices:
            feature = parse(self.records[i]).features.feature
            pixels.append(feature["image"].bytes_list.value[0])
            labels.append(feature["label"].int64_list.value[0])
        count = len(indices)
        images = torch.frombuffer(bytearray(b"".join(pixels)), dtype=torch.uint8).view(
            count, SIZE, SIZE)
        padded = torch.nn.functional.pad(images, (PADDING,) * 4)
        top = torch.randint(0, 2 * PADDING + 1, (count, 1))
        left = torch.randint(0, 2 * PADDING + 1, (count, 1))
        rows = (top + self.rows)[:, :, None]
        cols = (left + self.rows)[:, None, :]
        crops = padded[torch.arange(count)[:, None, None], rows, cols]
        flip = torch.rand(count) < 0.5
        crops = torch.where(flip[:, None, None], crops.flip(2), crops)
        batch = crops.float().mul_(1.0 / (255.0 * STD)).sub_(MEAN / STD).unsqueeze(1)
        return batch, torch.tensor(labels)


def main():
    args = arguments()
    torch.manual_seed(1)
    dataset = TfRecordBatches(args.files)
    batches_of = BatchSampler(RandomSampler(dataset), args.batch, drop_last=False)
    report_rate(lambda: DataLoader(dataset, sampler=batches_of, batch_size=None,
                                   num_workers=args.workers, persistent_workers=args.workers > 0),
                args)


if __name__ == "__main__":
    main()
