#include "tools/sharedosctl/command_context.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "common/text/terminal_safe.h"

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

int UsageError(std::ostream& err, const absl::Status& status) {
  err << "sharedosctl: " << common::text::TerminalSafe(status.message())
      << "\n(see sharedosctl --help)\n";
  return kExitUsage;
}

int CallError(std::ostream& err, const absl::Status& status) {
  // A service's message may quote what the request carried.
  err << "sharedosctl: " << absl::StatusCodeToString(status.code()) << ": "
      << common::text::TerminalSafe(status.message()) << "\n";
  return kExitFailed;
}

int CallError(std::ostream& err, const grpc::Status& status) {
  return CallError(err, common::FromGrpcStatus(status));
}

}  // namespace sharedos::sharedosctl
