#include "kiln/serving/grpc/model_status_service.h"

#include "kiln/serving/grpc/grpc_messages.h"

namespace kiln::serving {

grpc::ServerUnaryReactor* ModelStatusService::GetModelStatus(
    grpc::CallbackServerContext* context, const tensorflow::serving::GetModelStatusRequest* request,
    tensorflow::serving::GetModelStatusResponse* response) {
  auto* call = new GrpcCall(context, shared_, "status");
  call->start([&] {
    Route route =
        route_of(request->has_model_spec() ? &request->model_spec() : nullptr, RouteKind::kStatus);
    call->set_model(route.model);
    call->finish_with([&] { fill_status(shared_.parts.table.status_versions(route), *response); });
  });
  return call;
}

}  // namespace kiln::serving
