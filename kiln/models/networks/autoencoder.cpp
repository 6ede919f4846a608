// autoencoder: an encoder down to a small code and a decoder back to the input's shape. The main
// output is the `reconstruction` (train it with mse against the input); the code is exposed as
// the `embedding` output. `kind: mlp` works on any input shape through flat layers; `kind: conv`
// on [channels, length] signals and [channels, height, width] images: each stage is a 3x3
// convolution, relu and 2x2 pooling down, and upsampling, convolution and relu up.

#include "kiln/models/activation.h"
#include "kiln/models/networks/layer_network.h"

namespace kiln::models {
namespace {

// Flat layers or convolutions; what bounds the reconstruction (each bound is a layer type).
enum class AutoencoderKind { kMlp, kConv };
enum class ReconstructionActivation { kNone, kSigmoid, kTanh };
EnumNameList<AutoencoderKind> enum_names(AutoencoderKind) {
  return {{AutoencoderKind::kMlp, "mlp"}, {AutoencoderKind::kConv, "conv"}};
}
EnumNameList<ReconstructionActivation> enum_names(ReconstructionActivation) {
  return {{ReconstructionActivation::kNone, "none"},
          {ReconstructionActivation::kSigmoid, "sigmoid"},
          {ReconstructionActivation::kTanh, "tanh"}};
}

struct AutoencoderOptions {
  AutoencoderKind kind = AutoencoderKind::kMlp;
  std::vector<int64_t> hidden{128};
  std::vector<int64_t> channels{16, 32};
  int64_t code = 16;
  Activation activation = Activation::kRelu;
  ReconstructionActivation output_activation = ReconstructionActivation::kNone;
  void describe(Schema& s) {
    s.field("kind", kind, "mlp (flat layers, any input) or conv (1-D or 2-D convolutions).");
    s.field("hidden", hidden,
            "mlp: widths of the encoder's hidden layers (mirrored on the way up).")
        .each_min(1);
    s.field("channels", channels,
            "conv: channels of each stage; each halves the length (and height, width).")
        .each_min(1)
        .check([](const auto& list) { return !list.empty(); }, "with at least one stage");
    s.field("code", code, "Size of the code, the `embedding` output.").min(1);
    s.field("activation", activation, "After every hidden layer.")
        .only({Activation::kRelu, Activation::kGelu, Activation::kSilu, Activation::kTanh,
               Activation::kElu, Activation::kLeakyRelu});
    s.field("output_activation", output_activation,
            "On the reconstruction: sigmoid for inputs in [0, 1], none for any value.");
  }
};

struct Halves {
  std::vector<Json> encoder, decoder;
};

Halves mlp_halves(const AutoencoderOptions& o, const Shape& input) {
  Json activation = enum_name(o.activation);
  Halves h;
  h.encoder.push_back("flatten");
  for (int64_t width : o.hidden)
    h.encoder.insert(h.encoder.end(), {layer("linear", {{"out", width}}), activation});
  h.encoder.push_back(layer("linear", {{"out", o.code}}));
  for (auto width = o.hidden.rbegin(); width != o.hidden.rend(); ++width)
    h.decoder.insert(h.decoder.end(), {layer("linear", {{"out", *width}}), activation});
  h.decoder.push_back(layer("linear", {{"out", element_count(input)}}));
  h.decoder.push_back(layer("reshape", {{"shape", input}}));
  return h;
}

Halves conv_halves(const AutoencoderOptions& o, const Shape& input) {
  KILN_CHECK(input.size() == 2 || input.size() == 3,
             "autoencoder kind conv expects [channels, length] or [channels, height, width], "
             "got {}; kind mlp takes any shape",
             shape_text(input));
  int64_t scale = int64_t(1) << o.channels.size();
  Shape bottom{o.channels.back()};
  for (size_t d = 1; d < input.size(); ++d) {
    KILN_CHECK(input[d] % scale == 0,
               "autoencoder: {} stages halve the size {} times, so {} must be a multiple of {}",
               o.channels.size(), o.channels.size(), shape_text(input), scale);
    bottom.push_back(input[d] / scale);
  }
  Json activation = enum_name(o.activation);
  Halves h;
  Json conv = layer("conv2d", {{"kernel", 3}, {"padding", "same"}});
  if (input.size() == 2) conv["type"] = "conv1d";
  auto conv_to = [&](int64_t out) {
    Json c = conv;
    c["out"] = out;
    return c;
  };
  for (int64_t width : o.channels)
    h.encoder.insert(h.encoder.end(),
                     {conv_to(width), activation, layer("maxpool", {{"kernel", 2}})});
  h.encoder.insert(h.encoder.end(), {"flatten", layer("linear", {{"out", o.code}})});
  h.decoder.insert(h.decoder.end(), {layer("linear", {{"out", element_count(bottom)}}), activation,
                                     layer("reshape", {{"shape", bottom}})});
  for (auto width = o.channels.rbegin(); width != o.channels.rend(); ++width)
    h.decoder.insert(h.decoder.end(), {"upsample", conv_to(*width), activation});
  h.decoder.push_back(conv_to(input[0]));
  return h;
}

class Autoencoder : public Model {
 public:
  Autoencoder(const AutoencoderOptions& o, const Shape& input) {
    Halves halves = o.kind == AutoencoderKind::kMlp ? mlp_halves(o, input) : conv_halves(o, input);
    if (o.output_activation != ReconstructionActivation::kNone)
      halves.decoder.push_back(enum_name(o.output_activation));
    BuiltStack encoder = build_stack(make_layer_list(halves.encoder, "model"), input, {});
    BuiltStack decoder = build_stack(make_layer_list(halves.decoder, "model"), encoder.output, {});
    encoder_ = register_module("encoder", encoder.modules);
    decoder_ = register_module("decoder", decoder.modules);
    output_ = decoder.output;
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    return call(decoder_, call(encoder_, input));
  }

  NamedOutputs forward_named(const torch::Tensor& input) override {
    torch::Tensor code = call(encoder_, input);
    NamedOutputs outputs;
    outputs.insert("reconstruction", call(decoder_, code));
    outputs.insert("embedding", code);
    return outputs;
  }

  Shape output_shape() const override { return output_; }
  std::string output_name() const override { return "reconstruction"; }

 private:
  LayerStack encoder_{nullptr}, decoder_{nullptr};
  Shape output_;
};

}  // namespace

KILN_REGISTER(model_registry, "autoencoder", Autoencoder, AutoencoderOptions,
              "Encoder to a code and decoder back (mlp or conv); outputs reconstruction and "
              "embedding.");

}  // namespace kiln::models
