// synthetic: small generated datasets for trying models and for tests, reproducible from a seed:
// Gaussian blobs to classify, a noisy curve y = f(x) to regress, periodic 1-D signals to
// reconstruct (an autoencoder's input and target), and signals holding a random subset of
// `classes` frequencies to tag with every frequency present (multi-label classification).

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "kiln/data/dataset.h"

namespace kiln::data {
namespace {

// What synthetic generates, and the function of x its curve task regresses.
enum class SyntheticTask { kBlobs, kCurve, kSignal, kFrequencies };
enum class CurveFunction { kSin, kSquare, kLinear };
EnumNameList<SyntheticTask> enum_names(SyntheticTask) {
  return {{SyntheticTask::kBlobs, "blobs"},
          {SyntheticTask::kCurve, "curve"},
          {SyntheticTask::kSignal, "signal"},
          {SyntheticTask::kFrequencies, "frequencies"}};
}
EnumNameList<CurveFunction> enum_names(CurveFunction) {
  return {{CurveFunction::kSin, "sin"},
          {CurveFunction::kSquare, "square"},
          {CurveFunction::kLinear, "linear"}};
}

struct SyntheticOptions {
  SyntheticTask task = SyntheticTask::kBlobs;
  int64_t size = 1000;
  int64_t seed = 1;
  double noise = 0.1;
  int64_t classes = 3;
  int64_t features = 2;
  double spread = 3.0;
  CurveFunction function = CurveFunction::kSin;
  int64_t length = 64;
  void describe(Schema& s) {
    s.field("task", task,
            "blobs (classes around random centres), curve (y = function(x) + noise), signal "
            "(sums of sinusoids [1, length]; the target is the clean signal), frequencies (a "
            "random subset of `classes` frequencies [1, length]; the target is the multi-hot "
            "vector of those present)");
    s.field("size", size, "Number of examples.").min(1);
    s.field("seed", seed, "Seed of the generator: the same seed gives the same data.");
    s.field("noise", noise, "Standard deviation of the Gaussian noise added to the inputs.").min(0);
    s.field("classes", classes,
            "blobs: number of classes; frequencies: number of frequencies (labels), 1 to "
            "classes cycles per signal.")
        .min(2);
    s.field("features", features, "blobs: dimensions of each point.").min(1);
    s.field("spread", spread, "blobs: standard deviation of the class centres.").min(0);
    s.field("function", function, "curve: the function of x in [-3, 3].");
    s.field("length", length, "signal, frequencies: samples per signal.").min(2);
  }
};

using Pair = std::pair<torch::Tensor, torch::Tensor>;

Pair blobs(const SyntheticOptions& o, at::Generator& gen) {
  torch::Tensor centres = torch::randn({o.classes, o.features}, gen) * o.spread;
  torch::Tensor labels = torch::randint(o.classes, {o.size}, gen, torch::kInt64);
  torch::Tensor points = centres.index_select(0, labels) + torch::randn({o.size, o.features}, gen);
  return {points.to(torch::kFloat32), labels};
}

Pair curve(const SyntheticOptions& o, at::Generator& gen) {
  torch::Tensor x = torch::rand({o.size, 1}, gen) * 6.0 - 3.0;
  torch::Tensor y = o.function == CurveFunction::kSin      ? torch::sin(x)
                    : o.function == CurveFunction::kSquare ? x * x
                                                           : 0.5 * x;
  return {x, y + torch::randn({o.size, 1}, gen) * o.noise};
}

Pair signal(const SyntheticOptions& o, at::Generator& gen) {
  torch::Tensor t = torch::arange(o.length, torch::kFloat32) / double(o.length);
  torch::Tensor clean = torch::zeros({o.size, 1, o.length});
  for (int component = 0; component < 2; ++component) {
    torch::Tensor frequency = torch::randint(1, 6, {o.size, 1, 1}, gen).to(torch::kFloat32);
    torch::Tensor phase = torch::rand({o.size, 1, 1}, gen) * (2 * M_PI);
    clean += torch::sin(2 * M_PI * frequency * t + phase) / double(component + 1);
  }
  return {clean + torch::randn(clean.sizes(), gen) * o.noise, clean};
}

// Each of the frequencies 1..classes (cycles per signal) is present with probability 1/2, at a
// random phase and an amplitude in [0.5, 1]; the target marks those present.
Pair frequencies(const SyntheticOptions& o, at::Generator& gen) {
  KILN_CHECK(2 * o.classes < o.length,
             "synthetic frequencies: {} samples cannot hold {} cycles (length must exceed twice "
             "classes)",
             o.length, o.classes);
  torch::Tensor t = torch::arange(o.length, torch::kFloat32) / double(o.length);
  torch::Tensor present = torch::rand({o.size, o.classes, 1}, gen) < 0.5;
  torch::Tensor cycles = torch::arange(1, o.classes + 1, torch::kFloat32).view({1, -1, 1});
  torch::Tensor phase = torch::rand({o.size, o.classes, 1}, gen) * (2 * M_PI);
  torch::Tensor amplitude = torch::rand({o.size, o.classes, 1}, gen) * 0.5 + 0.5;
  torch::Tensor waves = amplitude * torch::sin(2 * M_PI * cycles * t + phase);
  torch::Tensor clean = (waves * present).sum(1, /*keepdim=*/true);
  return {clean + torch::randn(clean.sizes(), gen) * o.noise,
          present.squeeze(2).to(torch::kFloat32)};
}

Pair generate(const SyntheticOptions& o) {
  at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed));
  switch (o.task) {
    case SyntheticTask::kBlobs:
      return blobs(o, gen);
    case SyntheticTask::kCurve:
      return curve(o, gen);
    case SyntheticTask::kFrequencies:
      return frequencies(o, gen);
    case SyntheticTask::kSignal:
      break;
  }
  return signal(o, gen);
}

class Synthetic : public TensorDataset {
 public:
  explicit Synthetic(const SyntheticOptions& options) : Synthetic(generate(options)) {}

 private:
  explicit Synthetic(Pair data) : TensorDataset(std::move(data.first), std::move(data.second)) {}
};

}  // namespace

KILN_REGISTER(dataset_registry, "synthetic", Synthetic, SyntheticOptions,
              "Generated data, reproducible from a seed: blobs, a noisy curve, periodic signals, "
              "signals of several frequencies to tag.");

}  // namespace kiln::data
