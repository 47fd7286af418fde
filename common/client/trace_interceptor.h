// Propagates the calling thread's W3C trace context (common/logging/trace_context.h) on every
// call a SharedOS channel makes (common/client/channel.h): the same trace id, a fresh parent id,
// as "traceparent" metadata. A thread that holds no context sends none.

#ifndef SHAREDOS_COMMON_CLIENT_TRACE_INTERCEPTOR_H_
#define SHAREDOS_COMMON_CLIENT_TRACE_INTERCEPTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/client_interceptor.h"

namespace sharedos::common::client {

class TraceInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override;
};

// grpc::CreateCustomChannel with the trace interceptor.
std::shared_ptr<grpc::Channel> CreateTracedChannel(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& arguments);

}  // namespace sharedos::common::client

#endif  // SHAREDOS_COMMON_CLIENT_TRACE_INTERCEPTOR_H_
