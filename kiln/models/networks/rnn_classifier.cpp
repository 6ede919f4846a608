// rnn_classifier: a recurrent network over sequences: [steps, features] values, or [steps]
// token indices through an embedding; the top layer's final state feeds the output layer.

#include "kiln/models/layers/recurrent.h"
#include "kiln/models/networks/layer_network.h"

namespace kiln::models {
namespace {

struct RnnClassifierOptions {
  int64_t num_classes = 1;
  RecurrentCell cell = RecurrentCell::kLstm;
  int64_t hidden = 128;
  int64_t layers = 1;
  bool bidirectional = false;
  double dropout = 0.0;
  int64_t vocabulary = 0;
  int64_t embedding_dim = 64;
  void describe(Schema& s) {
    s.field("num_classes", num_classes, "Classes to predict (or regression targets).")
        .min(1)
        .require();
    s.field("cell", cell, "The recurrent layer.");
    s.field("hidden", hidden, "Size of the hidden state.").min(1);
    s.field("layers", layers, "Recurrent layers stacked.").min(1);
    s.field("bidirectional", bidirectional, "Also read each sequence backwards.");
    s.field("dropout", dropout, "Dropout between recurrent layers and before the output layer.")
        .in_range(0, 1);
    s.field("vocabulary", vocabulary,
            "0: inputs are [steps, features] values. N: inputs are [steps] token indices below "
            "N, embedded first.")
        .min(0);
    s.field("embedding_dim", embedding_dim, "With a vocabulary: length of each token's vector.")
        .min(1);
  }
};

std::vector<Json> rnn_layers(const RnnClassifierOptions& o) {
  std::vector<Json> layers;
  if (o.vocabulary > 0)
    layers.push_back(layer("embedding", {{"entries", o.vocabulary}, {"dim", o.embedding_dim}}));
  layers.push_back(layer(enum_name(o.cell), {{"hidden", o.hidden},
                                             {"layers", o.layers},
                                             {"bidirectional", o.bidirectional},
                                             {"dropout", o.layers > 1 ? o.dropout : 0.0}}));
  if (o.dropout > 0) layers.push_back(layer("dropout", {{"p", o.dropout}}));
  layers.push_back(layer("linear", {{"out", o.num_classes}}));
  return layers;
}

class RnnClassifier : public LayerNetwork {
 public:
  RnnClassifier(const RnnClassifierOptions& options, const Shape& input)
      : LayerNetwork(rnn_layers(options), input) {}
};

}  // namespace

KILN_REGISTER(model_registry, "rnn_classifier", RnnClassifier, RnnClassifierOptions,
              "LSTM or GRU over sequences (or embedded tokens), then an output layer.");

}  // namespace kiln::models
