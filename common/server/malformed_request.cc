#include "common/server/malformed_request.h"

#include <string>

#include "grpcpp/support/interceptor.h"
#include "grpcpp/support/status.h"

namespace sharedos::common::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

class MalformedRequestInterceptor : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // gRPC hands the interceptor no message when it could not deserialize the request.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      malformed_ = true;
    }
    if (malformed_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      methods->ModifySendStatus(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(kMalformedRequestMessage)));
    }
    methods->Proceed();
  }

 private:
  bool malformed_ = false;
};

}  // namespace

grpc::experimental::Interceptor* MalformedRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* /*info*/) {
  return new MalformedRequestInterceptor();
}

}  // namespace sharedos::common::server
