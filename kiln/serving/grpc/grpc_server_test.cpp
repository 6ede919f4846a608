// kiln's gRPC services on a real port, asked through the stubs gRPC generates from TensorFlow
// Serving's .proto files, over fake servables: every method's answer, TensorFlow Serving's error
// codes and messages, the token, and the drain that answers UNAVAILABLE.

#include "kiln/serving/grpc/grpc_server.h"
#include "kiln/net/grpc_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "tensorflow_serving/apis/model_service.grpc.pb.h"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"
#include "tests/support/fake_servable.h"
#include "tests/support/raw_connection.h"

namespace kiln::serving {
namespace grpc_server_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// half_plus_two that keeps each call until the test lets it go, as a model still running.
class HeldHalf : public testing::HalfPlusTwo {
 public:
  void predict_async(const std::string& signature, HostTensors inputs, PredictDone done,
                     net::Abandoned) override {
    std::lock_guard<std::mutex> lock(mutex_);
    held_.push_back([this, signature, inputs, done] { done(predict(signature, inputs), nullptr); });
    if (held_.size() == 1) first_.set_value();
  }
  /// Waits for the first call to come.
  void await_call() { first_.get_future().wait(); }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& answer : held_) answer();
    held_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> held_;
  std::promise<void> first_;
};

// FeatureScorer whose columns hold their first encoding until the test lets it go, as columns
// over a thousand examples take their time.
class HeldColumns : public testing::FeatureScorer {
 public:
  class Encoder : public testing::FeatureScorer::Encoder {
   public:
    explicit Encoder(HeldColumns& owner) : owner_(owner) {}
    HostTensors encode(const std::vector<io::Features>& examples) const override {
      std::call_once(owner_.once_, [this] {
        owner_.entered_.set_value();
        owner_.released_.wait();
      });
      return testing::FeatureScorer::Encoder::encode(examples);
    }

   private:
    HeldColumns& owner_;
  };
  const ExampleEncoder* examples() const override { return &held_encoder_; }
  /// Waits for the first encoding to begin.
  void await_encoding() { entered_.get_future().wait(); }
  void release() { release_.set_value(); }

 private:
  std::once_flag once_;
  std::promise<void> entered_, release_;
  std::shared_future<void> released_ = release_.get_future().share();
  Encoder held_encoder_{*this};
};

// A model whose example is 10,000 numbers (80 KB once read, past what is read on the loop): it
// answers each example's sum.
class WideSum : public Servable {
 public:
  static constexpr int64_t kWidth = 10000;
  WideSum() {
    Signature signature;
    signature.inputs["x"] = {DType::kFloat32, {-1, kWidth}};
    signature.outputs["sum"] = {{DType::kFloat32, {-1}}, "", OutputOp::kIdentity, ""};
    signatures_["serving_default"] = signature;
  }
  const Signatures& signatures() const override { return signatures_; }
  HostTensors predict(const std::string&, const HostTensors& inputs) override {
    const HostTensor& x = inputs.at("x");
    HostTensor sum{DType::kFloat32, {x.shape[0]}, {}, {}};
    for (int64_t row = 0; row < x.shape[0]; ++row) {
      auto first = x.numbers.begin() + row * kWidth;
      sum.numbers.push_back(std::accumulate(first, first + kWidth, 0.0));
    }
    return {{"sum", sum}};
  }

 private:
  Signatures signatures_;
};

class GrpcServerTest : public ::testing::Test {
 protected:
  GrpcServerTest() {
    table_.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()},
                        {2, std::make_shared<testing::HalfPlusTwo>()}});
    table_.set("scorer", {{1, std::make_shared<testing::FeatureScorer>()}});
    table_.set("held", {{1, held_}});
    table_.set("wide", {{1, std::make_shared<WideSum>()}});
    table_.set("columns", {{1, held_columns_}});
  }
  void start(const std::string& token = "", int threads = 1) {
    GrpcOptions options;
    options.port = 0;
    options.token = token;
    options.threads = threads;
    options.max_rows = 4;
    options.read_timeout_seconds = read_timeout_seconds_;
    options.request_timeout_seconds = request_timeout_seconds_;
    options.max_connections = max_connections_;
    server_ = std::make_unique<GrpcServer>(
        ServingParts{table_, gate_, metrics_, held_bytes_, nullptr}, options);
    serving_ = std::thread([this] { server_->serve(); });
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                       grpc::InsecureChannelCredentials());
    predictions_ = tfs::PredictionService::NewStub(channel);
    models_ = tfs::ModelService::NewStub(channel);
  }
  ~GrpcServerTest() override {
    if (!server_) return;
    server_->stop();
    serving_.join();
  }
  int read_timeout_seconds_ = 10, request_timeout_seconds_ = 30, max_connections_ = 4096;
  const HeldBytes* held_bytes_ = nullptr;
  HeldBytes budget_{16};  // for a test that spends it; outlives the server
  std::shared_ptr<HeldColumns> held_columns_ = std::make_shared<HeldColumns>();

  static tfs::PredictRequest half_request(std::vector<float> values) {
    tfs::PredictRequest request;
    request.mutable_model_spec()->set_name("half");
    tensorflow::TensorProto& x = (*request.mutable_inputs())["x"];
    x.set_dtype(tensorflow::DT_FLOAT);
    x.mutable_tensor_shape()->add_dim()->set_size(int64_t(values.size()));
    x.mutable_tensor_shape()->add_dim()->set_size(1);
    for (float value : values) x.add_float_val(value);
    return request;
  }
  static tfs::Input examples(std::vector<float> sizes) {
    tfs::Input input;
    for (float size : sizes) {
      auto& features = *input.mutable_example_list()->add_examples()->mutable_features();
      (*features.mutable_feature())["size"].mutable_float_list()->add_value(size);
    }
    return input;
  }

  std::shared_ptr<HeldHalf> held_ = std::make_shared<HeldHalf>();
  ModelTable table_;
  ServingMetrics metrics_;
  RequestGate gate_;
  std::unique_ptr<GrpcServer> server_;
  std::thread serving_;
  std::unique_ptr<tfs::PredictionService::Stub> predictions_;
  std::unique_ptr<tfs::ModelService::Stub> models_;
};

TEST_F(GrpcServerTest, PredictAnswersTheLatestVersionOrTheOneNamed) {
  start();
  tfs::PredictRequest request = half_request({2, 4});
  tfs::PredictResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(predictions_->Predict(&context, request, &response).ok());
  const tensorflow::TensorProto& y = response.outputs().at("y");
  EXPECT_THAT(y.float_val(), ElementsAre(3, 4));
  EXPECT_EQ(y.tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(response.model_spec().version().value(), 2);
  EXPECT_EQ(response.model_spec().signature_name(), "serving_default");
  request.mutable_model_spec()->mutable_version()->set_value(1);
  grpc::ClientContext again;
  ASSERT_TRUE(predictions_->Predict(&again, request, &response).ok());
  EXPECT_EQ(response.model_spec().version().value(), 1);
  EXPECT_THAT(metrics_.text({}), HasSubstr("model=\"half\",api=\"predict\",code=\"200\"} 2"));
}

TEST_F(GrpcServerTest, ErrorsCarryTensorFlowServingsCodesAndMessages) {
  start();
  auto predict = [this](const tfs::PredictRequest& request) {
    tfs::PredictResponse response;
    grpc::ClientContext context;
    return predictions_->Predict(&context, request, &response);
  };
  tfs::PredictRequest request = half_request({1});
  request.mutable_model_spec()->set_name("nope");
  grpc::Status status = predict(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "Servable not found for request: Latest(nope)");
  status = predict(tfs::PredictRequest());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "Missing ModelSpec");
  request = half_request({1});
  (*request.mutable_inputs())["z"] = request.inputs().at("x");
  status = predict(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("Sent extra: {z}. Missing but required: {}."));
  request = half_request({1, 2, 3, 4, 5});
  status = predict(request);
  EXPECT_THAT(status.error_message(), HasSubstr("at most 4"));
  request = half_request({1});
  request.add_output_filter("q");
  status = predict(request);
  EXPECT_EQ(status.error_message(),
            "output tensor alias not found in signature: q Outputs expected to be in the set {y}.");
  request = half_request({1});
  request.mutable_model_spec()->set_name(std::string(3000, 'n'));
  status = predict(request);
  EXPECT_EQ(status.error_message().size(), 1024u + std::string("...TRUNCATED").size());
}

TEST_F(GrpcServerTest, ClassifyAndRegressTakeExamplesWithTheirContext) {
  start();
  tfs::ClassificationRequest classify;
  classify.mutable_model_spec()->set_name("scorer");
  *classify.mutable_input() = examples({2, 5});
  tfs::ClassificationResponse classified;
  grpc::ClientContext context;
  ASSERT_TRUE(predictions_->Classify(&context, classify, &classified).ok());
  ASSERT_EQ(classified.result().classifications_size(), 2);
  const auto& classes = classified.result().classifications(1).classes();
  EXPECT_EQ(classes[0].label(), "small");
  EXPECT_FLOAT_EQ(classes[1].score(), 0.5f);

  tfs::RegressionRequest regress;
  regress.mutable_model_spec()->set_name("scorer");
  regress.mutable_model_spec()->set_signature_name("price");
  auto& with_context = *regress.mutable_input()->mutable_example_list_with_context();
  (*with_context.add_examples()->mutable_features()->mutable_feature())["size"]
      .mutable_float_list()
      ->add_value(3);
  (*with_context.mutable_context()->mutable_features()->mutable_feature())["color"]
      .mutable_bytes_list()
      ->add_value("red");
  tfs::RegressionResponse regressed;
  grpc::ClientContext again;
  ASSERT_TRUE(predictions_->Regress(&again, regress, &regressed).ok());
  ASSERT_EQ(regressed.result().regressions_size(), 1);
  EXPECT_FLOAT_EQ(regressed.result().regressions(0).value(), 7);  // 2 * 3 + red

  regress.mutable_model_spec()->set_signature_name("other");
  grpc::ClientContext unknown;
  grpc::Status status = predictions_->Regress(&unknown, regress, &regressed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "No signature was found with the name: other");
  classify.mutable_model_spec()->set_name("half");
  grpc::ClientContext tensors;
  status = predictions_->Classify(&tensors, classify, &classified);
  EXPECT_THAT(status.error_message(), HasSubstr("reads tensors, not examples"));
  classify.mutable_model_spec()->set_name("scorer");
  classify.clear_input();
  grpc::ClientContext empty;
  EXPECT_EQ(predictions_->Classify(&empty, classify, &classified).error_message(),
            "Input is empty.");
}

TEST_F(GrpcServerTest, AModelOfRawFeaturesListsThemAndPredictTakesThemByName) {
  start();
  tfs::GetModelMetadataRequest asked;
  asked.mutable_model_spec()->set_name("scorer");
  asked.add_metadata_field("signature_def");
  tfs::GetModelMetadataResponse metadata;
  grpc::ClientContext context;
  ASSERT_TRUE(predictions_->GetModelMetadata(&context, asked, &metadata).ok());
  tfs::SignatureDefMap defs;
  ASSERT_TRUE(metadata.metadata().at("signature_def").UnpackTo(&defs));
  const auto& inputs = defs.signature_def().at("serving_default").inputs();
  ASSERT_EQ(inputs.size(), 2u);  // the features, not the row the columns write
  EXPECT_EQ(inputs.at("color").dtype(), tensorflow::DT_STRING);
  EXPECT_EQ(inputs.at("size").dtype(), tensorflow::DT_FLOAT);
  EXPECT_EQ(inputs.at("size").tensor_shape().dim_size(), 1);
  // Classify and Regress were answered on signatures the metadata called predict ones: each names
  // the method it answers besides Predict.
  EXPECT_EQ(defs.signature_def().at("serving_default").method_name(),
            "tensorflow/serving/classify");
  EXPECT_EQ(defs.signature_def().at("price").method_name(), "tensorflow/serving/regress");
  asked.mutable_model_spec()->set_name("half");
  grpc::ClientContext tensors;
  ASSERT_TRUE(predictions_->GetModelMetadata(&tensors, asked, &metadata).ok());
  ASSERT_TRUE(metadata.metadata().at("signature_def").UnpackTo(&defs));
  EXPECT_EQ(defs.signature_def().at("serving_default").method_name(), "tensorflow/serving/predict");

  tfs::PredictRequest request;
  request.mutable_model_spec()->set_name("scorer");
  tensorflow::TensorProto& size = (*request.mutable_inputs())["size"];
  size.set_dtype(tensorflow::DT_FLOAT);
  size.mutable_tensor_shape()->add_dim()->set_size(2);
  size.add_float_val(2);
  size.add_float_val(5);
  tensorflow::TensorProto& color = (*request.mutable_inputs())["color"];
  color.set_dtype(tensorflow::DT_STRING);
  color.mutable_tensor_shape()->add_dim()->set_size(2);
  color.add_string_val("red");
  color.add_string_val("blue");
  tfs::PredictResponse response;
  grpc::ClientContext raw;
  ASSERT_TRUE(predictions_->Predict(&raw, request, &response).ok());
  EXPECT_THAT(response.outputs().at("probabilities").float_val(),
              ElementsAre(0.8f, 0.2f, 0.5f, 0.5f));

  auto refused = [&](const tfs::PredictRequest& bad) {
    grpc::ClientContext again;
    tfs::PredictResponse ignored;
    grpc::Status status = predictions_->Predict(&again, bad, &ignored);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  tfs::PredictRequest bad = request;
  (*bad.mutable_inputs())["colour"] = color;
  EXPECT_EQ(refused(bad), "input 'colour' is no feature the model reads; it reads color, size");
  bad = request;
  (*bad.mutable_inputs())["color"].mutable_tensor_shape()->mutable_dim(0)->set_size(1);
  EXPECT_THAT(refused(bad), HasSubstr("different numbers of examples"));
  bad = request;
  (*bad.mutable_inputs())["size"].clear_tensor_shape();
  EXPECT_THAT(refused(bad), HasSubstr("input 'size' is a scalar"));
  bad = request;
  (*bad.mutable_inputs())["size"].mutable_tensor_shape()->mutable_dim(0)->set_size(5);
  bad.mutable_inputs()->erase("color");
  EXPECT_THAT(refused(bad), HasSubstr("at most 4"));
  bad.mutable_inputs()->erase("size");  // no input at all: the signature's own words
  EXPECT_THAT(refused(bad), HasSubstr("input size does not match signature"));
}

TEST_F(GrpcServerTest, StatusAndMetadataAsTensorFlowServingGivesThem) {
  start();
  tfs::GetModelStatusRequest status_request;
  status_request.mutable_model_spec()->set_name("half");
  tfs::GetModelStatusResponse status;
  grpc::ClientContext context;
  ASSERT_TRUE(models_->GetModelStatus(&context, status_request, &status).ok());
  ASSERT_EQ(status.model_version_status_size(), 2);
  EXPECT_EQ(status.model_version_status(0).version(), 2);  // newest first
  EXPECT_EQ(status.model_version_status(0).state(), tfs::ModelVersionStatus::AVAILABLE);
  status_request.mutable_model_spec()->mutable_version()->set_value(7);
  grpc::ClientContext seven;
  EXPECT_EQ(models_->GetModelStatus(&seven, status_request, &status).error_message(),
            "Could not find version 7 of model half");
  // As TF Serving: a label is not looked at by GetModelStatus; an empty name is looked up.
  status_request.mutable_model_spec()->set_version_label("no-such-label");
  grpc::ClientContext labelled;
  ASSERT_TRUE(models_->GetModelStatus(&labelled, status_request, &status).ok());
  EXPECT_EQ(status.model_version_status_size(), 2);
  status_request.mutable_model_spec()->clear_name();
  grpc::ClientContext nameless;
  grpc::Status no_name = models_->GetModelStatus(&nameless, status_request, &status);
  EXPECT_EQ(no_name.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(no_name.error_message(), "Could not find any versions of model ");

  tfs::GetModelMetadataRequest request;
  request.mutable_model_spec();
  request.add_metadata_field("signature_def");
  tfs::GetModelMetadataResponse metadata;
  grpc::ClientContext unnamed;
  grpc::Status no_spec_name = predictions_->GetModelMetadata(&unnamed, request, &metadata);
  EXPECT_EQ(no_spec_name.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(no_spec_name.error_message(), "ModelSpec has no name specified.");
  request.clear_metadata_field();
  grpc::ClientContext unnamed_and_unasked;  // TensorFlow Serving asks for the fields first
  EXPECT_EQ(
      predictions_->GetModelMetadata(&unnamed_and_unasked, request, &metadata).error_message(),
      "GetModelMetadataRequest must specify at least one metadata_field");
  request.add_metadata_field("graph");
  request.mutable_model_spec()->set_name("no-such-model");
  grpc::ClientContext unknown_and_unsupported;
  EXPECT_EQ(
      predictions_->GetModelMetadata(&unknown_and_unsupported, request, &metadata).error_message(),
      "Metadata field graph is not supported");
  request.clear_metadata_field();
  request.mutable_model_spec()->set_name("half");
  grpc::ClientContext none;
  EXPECT_EQ(predictions_->GetModelMetadata(&none, request, &metadata).error_message(),
            "GetModelMetadataRequest must specify at least one metadata_field");
  request.add_metadata_field("signature_def");
  grpc::ClientContext asked;
  ASSERT_TRUE(predictions_->GetModelMetadata(&asked, request, &metadata).ok());
  tfs::SignatureDefMap defs;
  ASSERT_TRUE(metadata.metadata().at("signature_def").UnpackTo(&defs));
  const tensorflow::TensorInfo& x = defs.signature_def().at("serving_default").inputs().at("x");
  EXPECT_EQ(x.dtype(), tensorflow::DT_FLOAT);
  EXPECT_EQ(x.tensor_shape().dim(0).size(), -1);
  EXPECT_EQ(metadata.model_spec().version().value(), 2);
  request.add_metadata_field("graph");
  grpc::ClientContext graph;
  EXPECT_EQ(predictions_->GetModelMetadata(&graph, request, &metadata).error_message(),
            "Metadata field graph is not supported");
}

TEST_F(GrpcServerTest, ATokenIsAskedForAndADrainingServerIsUnavailable) {
  start("s3cret");
  tfs::PredictResponse response;
  grpc::ClientContext bare;
  EXPECT_EQ(predictions_->Predict(&bare, half_request({1}), &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::ClientContext bearing;
  bearing.AddMetadata("authorization", "Bearer s3cret");
  EXPECT_TRUE(predictions_->Predict(&bearing, half_request({1}), &response).ok());
  // Sent twice, a wrong one first: refused as the REST API refuses two headers.
  grpc::ClientContext twice;
  twice.AddMetadata("authorization", "Bearer wrong");
  twice.AddMetadata("authorization", "Bearer s3cret");
  grpc::Status refused = predictions_->Predict(&twice, half_request({1}), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(refused.error_message(), HasSubstr("needs one metadata entry `authorization"));
  gate_.drain(std::chrono::milliseconds(0));
  grpc::ClientContext late;
  late.AddMetadata("authorization", "Bearer s3cret");
  grpc::Status status = predictions_->Predict(&late, half_request({1}), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

// Protobuf's wire format: a length-delimited field.
std::string field(int number, const std::string& bytes) {
  std::string out(1, char(number << 3 | 2));
  for (size_t size = bytes.size();; size >>= 7) {
    out += char((size & 0x7f) | (size >= 0x80 ? 0x80 : 0));
    if (size < 0x80) break;
  }
  return out + bytes;
}

// Raw bytes sent as a call of `method` (Predict by default), as a client that does not go through
// the generated code can.
grpc::Status send_raw(const std::string& address, const std::string& bytes,
                      const std::string& method = "/tensorflow.serving.PredictionService/Predict") {
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext context;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

TEST_F(GrpcServerTest, AMessageNestedThirtyThousandDeepOrOfGarbageIsRefusedAndTheServerGoesOn) {
  start();
  // PredictRequest.inputs["x"] = a TensorProto whose variant_val (15) holds a tensor (3) whose
  // variant_val holds a tensor ... 30,000 levels down: 60 KB, far past protobuf's limit of 100.
  std::string tensor;
  for (int level = 0; level < 30000; ++level) tensor = field(15, field(3, tensor));
  std::string address = "127.0.0.1:" + std::to_string(server_->port());
  grpc::Status status = send_raw(address, field(2, field(1, "x") + field(2, tensor)));
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE);  // answered, not dead
  status = send_raw(address, std::string("\xff\xff\xff\xff garbage", 12));
  EXPECT_FALSE(status.ok());
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

// Without room in the models' budget for requests' inputs, Predict is refused from what its
// tensors claim, before they are decoded (a call of 230 bytes once claimed 3 MB); Classify and
// Regress, which claim nothing before they are read, once the budget is spent. Status is still
// answered.
TEST_F(GrpcServerTest, PredictionsWithoutRoomInTheModelsBudgetAreRefusedUndecoded) {
  ASSERT_TRUE(budget_.take(8));
  held_bytes_ = &budget_;
  start();
  tfs::PredictResponse predicted;
  grpc::ClientContext two_values;
  grpc::Status refused = predictions_->Predict(&two_values, half_request({2, 3}), &predicted);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("hold 8 bytes, and this one's 16 would pass its budget "
                        "(--max-queued-bytes 16)"));
  grpc::ClientContext one_value;
  EXPECT_TRUE(predictions_->Predict(&one_value, half_request({2}), &predicted).ok());

  ASSERT_TRUE(budget_.take(8));  // spent
  tfs::RegressionRequest regress;
  regress.mutable_model_spec()->set_name("scorer");
  *regress.mutable_input() = examples({1});
  tfs::RegressionResponse regressed;
  grpc::ClientContext regress_context;
  EXPECT_EQ(predictions_->Regress(&regress_context, regress, &regressed).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  tfs::GetModelStatusRequest status;
  status.mutable_model_spec()->set_name("half");
  tfs::GetModelStatusResponse answered;
  grpc::ClientContext status_context;
  EXPECT_TRUE(models_->GetModelStatus(&status_context, status, &answered).ok());
  budget_.give_back(16);
  grpc::ClientContext again;
  EXPECT_TRUE(predictions_->Predict(&again, half_request({2, 3}), &predicted).ok());
}

// A Predict whose tensors expand to 64 KiB or more is read on a worker, not on the loop (5,000
// calls of 230 bytes, each filled out to 3 MB, held the port's loop for 35 s): answered as any
// other, its errors too.
TEST_F(GrpcServerTest, ABigPredictReadOffTheLoopIsAnsweredAndItsErrorsToo) {
  start();
  tfs::PredictRequest request;
  request.mutable_model_spec()->set_name("wide");
  tensorflow::TensorProto& x = (*request.mutable_inputs())["x"];
  x.set_dtype(tensorflow::DT_FLOAT);
  x.mutable_tensor_shape()->add_dim()->set_size(2);
  x.mutable_tensor_shape()->add_dim()->set_size(WideSum::kWidth);
  for (int64_t i = 0; i < 2 * WideSum::kWidth; ++i) x.add_float_val(i < WideSum::kWidth ? 1 : 2);
  tfs::PredictResponse predicted;
  grpc::ClientContext whole;
  ASSERT_TRUE(predictions_->Predict(&whole, request, &predicted).ok());
  EXPECT_THAT(predicted.outputs().at("sum").float_val(), ElementsAre(10000, 20000));

  x.add_float_val(3);  // 20,001 values for 20,000 elements
  grpc::ClientContext short_of_values;
  grpc::Status refused = predictions_->Predict(&short_of_values, request, &predicted);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("x"));
}

// A model's columns encode examples row by row: 3,000 Predicts of 1,000 penguins, 32 KB each,
// held the port's loop 5.7 s, and 300 Classify calls of 1,000 taxi trips 10.7 s; a status call
// waited behind them. Examples are encoded on a worker: while one is, the loop answers others.
TEST_F(GrpcServerTest, ExamplesAreEncodedOffTheLoopWhileItAnswersOthers) {
  start();
  tfs::ClassificationRequest classify;
  classify.mutable_model_spec()->set_name("columns");
  // 4 KiB of examples are read off the loop: two, and a context of 2 KB copied into both.
  auto& with_context = *classify.mutable_input()->mutable_example_list_with_context();
  *with_context.mutable_examples() = examples({2, 5}).example_list().examples();
  (*with_context.mutable_context()->mutable_features()->mutable_feature())["note"]
      .mutable_bytes_list()
      ->add_value(std::string(2048, 'n'));
  tfs::ClassificationResponse classified;
  grpc::Status classify_status;
  std::thread caller([&] {
    grpc::ClientContext context;
    classify_status = predictions_->Classify(&context, classify, &classified);
  });
  held_columns_->await_encoding();
  tfs::GetModelStatusRequest status;
  status.mutable_model_spec()->set_name("half");
  tfs::GetModelStatusResponse answered;
  grpc::ClientContext status_context;  // on the loop's thread, the encoding would hold it here
  status_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status_answer = models_->GetModelStatus(&status_context, status, &answered);
  held_columns_->release();
  caller.join();
  EXPECT_TRUE(status_answer.ok()) << status_answer.error_message();
  ASSERT_TRUE(classify_status.ok()) << classify_status.error_message();
  EXPECT_EQ(classified.result().classifications_size(), 2);
}

TEST_F(GrpcServerTest, MethodsKilnDoesNotServeAreUnimplemented) {
  start();
  std::string address = "127.0.0.1:" + std::to_string(server_->port());
  EXPECT_EQ(
      send_raw(address, "", "/tensorflow.serving.PredictionService/MultiInference").error_code(),
      grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(send_raw(address, "", "/tensorflow.serving.ModelService/HandleReloadConfigRequest")
                .error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  // A 60 KB path was echoed whole: every status message is cut at 1,024 bytes.
  grpc::Status long_path = send_raw(address, "", "/x/" + std::string(60000, 'a'));
  EXPECT_EQ(long_path.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(long_path.error_message().size(), 1024u + std::string("...TRUNCATED").size());
  EXPECT_THAT(long_path.error_message(), HasSubstr("kiln does not serve the method /x/aaa"));
}

// A client that connected and sent nothing was never dropped (4,100 of them locked every other
// client out): after the read timeout it is, as on the REST port, and others are served meanwhile.
TEST_F(GrpcServerTest, ASilentClientIsDroppedAfterTheReadTimeout) {
  read_timeout_seconds_ = 1;
  start();
  testing::RawConnection silent(server_->port());
  ASSERT_TRUE(silent.connected());
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.closed_by_server());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// HTTP/2 frames written by hand (RFC 9113): a client that does only what it wants.
std::string h2_frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string frame;
  for (int shift : {16, 8, 0}) frame += char((payload.size() >> shift) & 0xff);
  frame += char(type);
  frame += char(flags);
  uint32_t id = stream & 0x7fffffffu;  // the top bit is reserved
  for (int shift : {24, 16, 8, 0}) frame += char((id >> shift) & 0xff);
  return frame + payload;
}
const std::string kH2Start =
    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, "");  // the preface, SETTINGS
// One header field as HPACK's literal without indexing, of a new name (short strings only).
std::string hpack_literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + char(name.size()) + name + char(value.size()) + value;
}

// The header block of a Predict call, HPACK literals, with `timeout` as grpc-timeout when given.
std::string predict_headers(const std::string& timeout = "") {
  std::string headers = hpack_literal(":method", "POST") + hpack_literal(":scheme", "http") +
                        hpack_literal(":path", "/tensorflow.serving.PredictionService/Predict") +
                        hpack_literal(":authority", "kiln") +
                        hpack_literal("content-type", "application/grpc");
  return timeout.empty() ? headers : headers + hpack_literal("grpc-timeout", timeout);
}

// A raw socket to the server; -1 when it cannot connect.
int raw_socket(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Pings, each as soon as the last was answered, until the server closes the connection; false
// when it was still open after `most`.
bool pings_until_closed(int fd, std::chrono::seconds most) {
  auto until = std::chrono::steady_clock::now() + most;
  std::string ping = h2_frame(6, 0, 0, std::string(8, 'k'));
  char buffer[4096];
  while (std::chrono::steady_clock::now() < until) {
    if (::send(fd, ping.data(), ping.size(), MSG_NOSIGNAL) < 0) return true;
    ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return true;
  }
  return false;
}

// Reads until the server closes; false when it was still open after `most` (the socket's
// receive timeout).
bool closed_within(int fd, std::chrono::seconds most) {
  timeval limit{time_t(most.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  char buffer[4096];
  while (true) {
    ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) return true;
    if (got < 0) return false;
  }
}

// Pings kept a connection that began no call forever (4,200 of them locked every other client
// out): it goes after the read timeout all the same, and the server goes on.
TEST_F(GrpcServerTest, AClientThatOnlyPingsIsDroppedAfterTheReadTimeout) {
  read_timeout_seconds_ = 1;
  start();
  int fd = raw_socket(server_->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::send(fd, kH2Start.data(), kH2Start.size(), MSG_NOSIGNAL), ssize_t(kH2Start.size()));
  auto began = std::chrono::steady_clock::now();
  EXPECT_TRUE(pings_until_closed(fd, std::chrono::seconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(900));
  ::close(fd);
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

// A call whose request never ends, its client never silent for the read timeout, held its
// connection forever: it is answered DEADLINE_EXCEEDED at the request timeout.
TEST_F(GrpcServerTest, ARequestNotWholeWithinTheRequestTimeoutIsCutOff) {
  read_timeout_seconds_ = 60;  // only the request timeout can end it
  request_timeout_seconds_ = 1;
  start();
  int fd = raw_socket(server_->port());
  ASSERT_GE(fd, 0);
  std::string headers = predict_headers();
  std::string start_of_call = kH2Start + h2_frame(1, 0x4, 1, headers);  // END_HEADERS, no end
  ASSERT_EQ(::send(fd, start_of_call.data(), start_of_call.size(), MSG_NOSIGNAL),
            ssize_t(start_of_call.size()));
  auto began = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_within(fd, std::chrono::seconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(900));
  ::close(fd);
}

// Whether a HEADERS frame that ends `stream` (its trailers, or a trailers-only answer) comes on
// `fd` within `most`.
bool stream_ended_within(int fd, uint32_t stream, std::chrono::seconds most) {
  timeval limit{time_t(most.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string bytes;
  char buffer[4096];
  while (true) {
    for (size_t at = 0; at + 9 <= bytes.size();) {
      auto byte = [&](size_t i) { return uint32_t(static_cast<unsigned char>(bytes[at + i])); };
      uint32_t length = byte(0) << 16 | byte(1) << 8 | byte(2);
      uint32_t id = (byte(5) << 24 | byte(6) << 16 | byte(7) << 8 | byte(8)) & 0x7fffffffu;
      if (at + 9 + length > bytes.size()) break;
      if (byte(3) == 0x1 && (byte(4) & 0x1) && id == stream) return true;
      at += 9 + length;
    }
    ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    bytes.append(buffer, size_t(got));
  }
}

// `grpc-timeout` was ignored: a call past its client's deadline stayed with the server until the
// model answered. It is answered DEADLINE_EXCEEDED at its deadline while the model still holds
// it; the model's late answer is dropped, and the server goes on.
TEST_F(GrpcServerTest, ACallPastItsClientsDeadlineIsAnsweredWhileTheModelHoldsIt) {
  start();
  int fd = raw_socket(server_->port());
  ASSERT_GE(fd, 0);
  tfs::PredictRequest request = half_request({6});
  request.mutable_model_spec()->set_name("held");
  std::string headers = predict_headers("200m");
  std::string call = kH2Start + h2_frame(1, 0x4, 1, headers) +
                     h2_frame(0, 0x1, 1, net::frame_message(request.SerializeAsString()));
  ASSERT_EQ(::send(fd, call.data(), call.size(), MSG_NOSIGNAL), ssize_t(call.size()));
  held_->await_call();
  EXPECT_TRUE(stream_ended_within(fd, 1, std::chrono::seconds(20)));
  held_->release();
  ::close(fd);
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

// A call whose request was still arriving was held to the server's read and request timeouts
// (10 s, 30 s), whatever its client's deadline: it is answered DEADLINE_EXCEEDED at its own,
// counted from its headers, and the connection serves the next call.
TEST_F(GrpcServerTest, ACallStillArrivingIsAnsweredAtItsClientsDeadline) {
  read_timeout_seconds_ = 60;
  request_timeout_seconds_ = 60;
  start();
  int fd = raw_socket(server_->port());
  ASSERT_GE(fd, 0);
  std::string headers = predict_headers("300m");
  std::string start_of_call = kH2Start + h2_frame(1, 0x4, 1, headers) +  // END_HEADERS only
                              h2_frame(0, 0, 1, std::string(3, '\0'));   // a piece of its body
  ASSERT_EQ(::send(fd, start_of_call.data(), start_of_call.size(), MSG_NOSIGNAL),
            ssize_t(start_of_call.size()));
  auto began = std::chrono::steady_clock::now();
  EXPECT_TRUE(stream_ended_within(fd, 1, std::chrono::seconds(20)));
  auto waited = std::chrono::steady_clock::now() - began;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(5)) << "not the read or request timeout";
  ::close(fd);
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

// The cap counts every loop's connections together; one over it is closed at once rather than
// left waiting to be accepted, and a place that frees is taken by the next client.
TEST_F(GrpcServerTest, ConnectionsOverTheServersCapAreClosedAtOnce) {
  max_connections_ = 2;
  start("", 2);
  auto first = std::make_unique<testing::RawConnection>(server_->port());
  testing::RawConnection second(server_->port());
  testing::RawConnection third(server_->port());
  ASSERT_TRUE(third.connected());
  EXPECT_TRUE(third.closed_by_server());
  first.reset();  // a place frees
  tfs::PredictResponse response;
  grpc::ClientContext context;
  context.set_wait_for_ready(true);  // retried until the server has seen the close
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

TEST_F(GrpcServerTest, AStopAnswersTheCallInFlightThenRefusesConnections) {
  start();
  tfs::PredictRequest request = half_request({6});
  request.mutable_model_spec()->set_name("held");
  tfs::PredictResponse response;
  grpc::ClientContext context;
  std::future<grpc::Status> answered = std::async(
      std::launch::async, [&] { return predictions_->Predict(&context, request, &response); });
  held_->await_call();
  std::thread stopping([this] { server_->stop(); });
  held_->release();  // the model finishes while the server stops
  stopping.join();
  grpc::Status status = answered.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(response.outputs().at("y").float_val(), ElementsAre(5));
  // The port is closed once stopped: a new client is refused at once, not left waiting.
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::ClientContext late;
  late.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  tfs::PredictResponse none;
  EXPECT_EQ(tfs::PredictionService::NewStub(channel)
                ->Predict(&late, half_request({1}), &none)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcServerTest, SeveralLoopsShareThePortAndAGzipCallIsRead) {
  start("", 2);
  for (int client = 0; client < 4; ++client) {
    grpc::ChannelArguments arguments;
    arguments.SetInt("kiln.test.client", client);  // a connection of its own
    auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                             grpc::InsecureChannelCredentials(), arguments);
    grpc::ClientContext context;
    context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    tfs::PredictResponse response;
    grpc::Status status = tfs::PredictionService::NewStub(channel)->Predict(
        &context, half_request({float(2 * client)}), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_THAT(response.outputs().at("y").float_val(), ElementsAre(client + 2));
  }
}

// What a plain TCP client gets back for `bytes`; `closed` says whether the server then closed the
// connection (rather than leaving the client waiting).
std::string raw_exchange(int port, const std::string& bytes, bool& closed) {
  closed = false;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return "";
  timeval limit{30, 0};  // a server that never closes fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string got;
  char buffer[4096];
  ssize_t size = 0;
  while ((size = recv(fd, buffer, sizeof buffer, 0)) > 0) got.append(buffer, size_t(size));
  closed = size == 0;
  close(fd);
  return got;
}

TEST_F(GrpcServerTest, AnHttp1RequestOnTheGrpcPortIsToldGoawayAndClosedAndTheServerGoesOn) {
  start();
  bool closed = false;
  std::string answer = raw_exchange(server_->port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n", closed);
  EXPECT_TRUE(closed);
  // The server's SETTINGS, then a GOAWAY (frame type 7) saying PROTOCOL_ERROR (1), then the close.
  ASSERT_GE(answer.size(), 9u + 17u);
  std::string goaway = answer.substr(answer.size() - 17);
  EXPECT_EQ(goaway[3], '\x07');
  EXPECT_EQ(goaway.substr(13, 4), std::string("\0\0\0\x01", 4));
  tfs::PredictResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(predictions_->Predict(&context, half_request({2}), &response).ok());
}

}  // namespace grpc_server_test
}  // namespace kiln::serving
