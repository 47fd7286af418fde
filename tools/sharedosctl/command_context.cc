#include "tools/sharedosctl/command_context.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"

namespace sharedos::sharedosctl {

std::unique_ptr<grpc::ClientContext> Context(const Clients& clients, const GlobalOptions& globals,
                                             bool deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + clients.token);
  if (deadline) {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(globals.timeout));
  }
  return context;
}

std::unique_ptr<grpc::ClientContext> HostContext(const Clients& clients,
                                                 const GlobalOptions& globals) {
  Clients host = clients;
  host.token = clients.host_token;
  return Context(host, globals);
}

int UsageError(std::ostream& err, const absl::Status& status) {
  err << "sharedosctl: " << status.message() << "\n(see sharedosctl --help)\n";
  return kExitUsage;
}

int CallError(std::ostream& err, const grpc::Status& status) {
  const absl::Status converted = common::FromGrpcStatus(status);
  err << "sharedosctl: " << absl::StatusCodeToString(converted.code()) << ": "
      << converted.message() << "\n";
  return kExitFailed;
}

}  // namespace sharedos::sharedosctl
