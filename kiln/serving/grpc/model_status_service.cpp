#include "kiln/serving/grpc/model_status_service.h"

#include "kiln/serving/grpc/grpc_messages.h"

namespace kiln::serving {

void ModelStatusService::add_methods(GrpcMethods& methods) const {
  add_method(methods, "/tensorflow.serving.ModelService/GetModelStatus", shared_, "status", this,
             &ModelStatusService::status);
}

void ModelStatusService::status(GrpcCall& call,
                                const tensorflow::serving::GetModelStatusRequest& request,
                                tensorflow::serving::GetModelStatusResponse& response) const {
  Route route =
      route_of(request.has_model_spec() ? &request.model_spec() : nullptr, RouteKind::kStatus);
  call.set_model(route.model);
  call.finish_with([&] { fill_status(shared_.parts.table.status_versions(route), response); });
}

}  // namespace kiln::serving
