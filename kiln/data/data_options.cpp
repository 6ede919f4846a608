#include "kiln/data/data_options.h"

namespace kiln::data {

void TransformLists::describe(Schema& s) {
  s.field("train", train, "Applied to training batches (augmentation, then preprocessing).");
  s.field("eval", eval, "Applied for validation, testing, export and serving.");
}

void DataOptions::describe(Schema& s) {
  s.field("train", train, "The training dataset.").require();
  s.field("val", val, "Dataset for validation during training (optional).");
  s.field("test", test, "Dataset for `kiln eval --split test` (optional).");
  s.field("columns", columns,
          "Feature columns by name: how the names a dataset's `input: [...]` lists become "
          "numbers, fitted on the training split (docs/tabular.md).");
  s.field("derived", derived,
          "Features computed from each tf.Example's others before columns and targets read "
          "them, e.g. {big_tipper: \"tips > 0.2 * fare\", log_fare: \"log1p(fare)\"}; each "
          "may read the ones above it (docs/tabular.md).");
  s.field("val_fraction", val_fraction,
          "Carve this fraction of data.train out, by a seeded draw, as the validation split "
          "(for datasets that have none; data.val must then be unset).")
      .check([](double f) { return f >= 0 && f < 1; }, "in [0, 1)");
  s.field("batch_size", batch_size, "Examples per training step.").min(1);
  s.field("eval_batch_size", eval_batch_size, "Examples per evaluation batch; 0 = batch_size.")
      .min(0);
  s.field("shuffle", shuffle, "Visit training examples in a new seeded order every epoch.");
  s.field("drop_last", drop_last, "Skip the last, smaller training batch of each epoch.");
  s.field("batch_per_rank", batch_per_rank,
          "In a distributed job, batch_size is each rank's batch; by default it is the job's, "
          "split among the ranks.");
  s.field("workers", workers,
          "Threads that make batches (gather, decode, transforms) ahead of the trainer; 0 makes "
          "them on the training thread.")
      .min(0);
  s.field("prefetch", prefetch, "Batches made ahead of the trainer (at least `workers`).").min(1);
  s.field("cache", cache,
          "device: hold every split's examples, decoded, in the training device's memory (the "
          "GPU's on CUDA, host memory on the CPU) and gather and transform each batch there; "
          "none: read them through the dataset every epoch.");
  s.field("skip", skip, "Leave out the first N training examples.").min(0);
  s.field("take", take, "Train on at most N examples (after skip); 0 = all.").min(0);
  s.field("labels_per_class", labels_per_class,
          "Keep the labels of N training examples of each class (drawn by the seed); the rest "
          "train unlabelled (loop: mean_teacher). 0 = all labelled.")
      .min(0);
  s.field("labelled_share", labelled_share,
          "With labels_per_class: the labelled examples are repeated to about this share of an "
          "epoch's examples; 1 trains on them alone.")
      .check([](double share) { return share > 0 && share <= 1; }, "in (0, 1]");
  s.field("transforms", transforms, "Batch transforms for training and for evaluation.");
}

}  // namespace kiln::data
