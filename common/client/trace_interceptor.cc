#include "common/client/trace_interceptor.h"

#include <utility>

#include "common/logging/trace_context.h"
#include "grpcpp/create_channel.h"

namespace sharedos::common::client {
namespace {

class TraceInterceptor : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      // Interceptors of a blocking call run on the calling thread: its context is the caller's.
      if (const logging::TraceContext* trace = logging::CurrentTrace()) {
        methods->GetSendInitialMetadata()->emplace(logging::kTraceparentKey,
                                                   logging::ChildOf(*trace).ToTraceparent());
      }
    }
    methods->Proceed();
  }
};

}  // namespace

grpc::experimental::Interceptor* TraceInterceptorFactory::CreateClientInterceptor(
    grpc::experimental::ClientRpcInfo* info) {
  return new TraceInterceptor();
}

std::shared_ptr<grpc::Channel> CreateTracedChannel(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& arguments) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<TraceInterceptorFactory>());
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, arguments,
                                                                 std::move(factories));
}

}  // namespace sharedos::common::client
