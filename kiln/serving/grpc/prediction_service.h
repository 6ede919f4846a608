#pragma once
// TensorFlow Serving's PredictionService over kiln's model table:
// Predict (named TensorProtos in and out, output_filter), Classify and Regress (tf.Examples, for
// models trained on feature columns) and GetModelMetadata, answering what the REST API answers
// for the same request. A predict is answered when its servable has run it (on the batcher's
// thread), so no thread waits for a model; one whose tensors expand to 64 KiB or more is read on
// a worker (off_loop_workers.h), so that the event loop goes on with other calls meanwhile.
// MultiInference is answered UNIMPLEMENTED.
// Thread-safety: its handlers run on the event loops' threads, several at once.

#include <cstdint>

#include "kiln/serving/grpc/grpc_call.h"
#include "kiln/serving/grpc/grpc_messages.h"
#include "kiln/serving/grpc/method_call.h"
#include "kiln/serving/off_loop_workers.h"
#include "tensorflow_serving/apis/classification.pb.h"
#include "tensorflow_serving/apis/get_model_metadata.pb.h"
#include "tensorflow_serving/apis/inference.pb.h"
#include "tensorflow_serving/apis/predict.pb.h"
#include "tensorflow_serving/apis/regression.pb.h"

namespace kiln::serving {

class PredictionService {
 public:
  /// `max_rows`: examples in one request, at most (--max-request-rows); `preparing`: the workers
  /// that read big requests (none: every request is read on the loop).
  PredictionService(CallContext shared, int64_t max_rows, OffLoopWorkers* preparing = nullptr)
      : shared_(shared), max_rows_(max_rows), preparing_(preparing) {}

  /// Adds the service's methods, by path, to what the server serves.
  void add_methods(GrpcMethods& methods) const;

  void predict(GrpcCall& call, const tfs::PredictRequest& request,
               tfs::PredictResponse& response) const;
  void classify(GrpcCall& call, const tfs::ClassificationRequest& request,
                tfs::ClassificationResponse& response) const;
  void regress(GrpcCall& call, const tfs::RegressionRequest& request,
               tfs::RegressionResponse& response) const;
  void metadata(GrpcCall& call, const tfs::GetModelMetadataRequest& request,
                tfs::GetModelMetadataResponse& response) const;
  void multi_inference(GrpcCall& call, const tfs::MultiInferenceRequest& request,
                       tfs::MultiInferenceResponse& response) const;

 private:
  // The version a call's spec names, with its metrics under the model.
  FoundVersion find(GrpcCall& call, const tfs::ModelSpec* spec, RouteKind kind) const;
  // Reads a Predict's inputs and hands them to the model.
  void prepare_predict(GrpcCall& call, const tfs::PredictRequest& request,
                       tfs::PredictResponse& response, FoundVersion found,
                       const std::string& name) const;
  // Runs `prepare` on a worker, which drops a call whose client has gone before preparing it,
  // when the request claims 64 KiB or more, or 4 KiB of examples read `through_columns` (row by
  // row); less is read on the loop, sooner than a worker would start on it.
  void off_loop(GrpcCall& call, size_t claimed, bool through_columns,
                std::function<void()> prepare) const;
  // Runs `inputs` on `found` and answers with what `fill` writes of the outputs.
  static void submit(GrpcCall& call, FoundVersion found, const std::string& signature,
                     HostTensors inputs, std::function<void(const HostTensors&)> fill);

  CallContext shared_;
  int64_t max_rows_;
  OffLoopWorkers* preparing_;
};

}  // namespace kiln::serving
