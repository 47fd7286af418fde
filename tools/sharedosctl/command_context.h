// What every sharedosctl command shares: its clients and tokens, the exit codes, the gRPC
// context it calls with (bearer token, deadline) and how it reports a usage or call error.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_COMMAND_CONTEXT_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_COMMAND_CONTEXT_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "envelope_svc/client/envelope_client.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tools/sharedosctl/cli.h"

namespace sharedos::sharedosctl {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // a refused or failed call; verify not ok
inline constexpr int kExitUsage = 2;

struct Clients {
  grantstore::v1::GrantStore::StubInterface* grants = nullptr;
  audit::v1::AuditLog::StubInterface* audit = nullptr;
  // The bearer token (never printed).
  std::string token;
  // `turn` only: the Envelope, reached as a host (the client carries the host token, never
  // printed, and the --timeout of each call).
  envelope::client::EnvelopeClient* envelope = nullptr;
};

// One command: reads its flags from `inv`, calls through `clients`, prints results to `out` and
// errors to `err`; returns the exit code.
using CommandHandler = int (*)(const Invocation& inv, const GlobalOptions& globals,
                               const Clients& clients, std::ostream& out, std::ostream& err);

// A call's context: the admin token as bearer, and --timeout as deadline unless `deadline` is
// false (a stream that follows until the operator stops it).
std::unique_ptr<grpc::ClientContext> Context(const Clients& clients, const GlobalOptions& globals,
                                             bool deadline = true);

// "sharedosctl: <message>" and a pointer to --help; kExitUsage. Both print the message through
// common::text::TerminalSafe.
int UsageError(std::ostream& err, const absl::Status& status);
// "sharedosctl: <CODE>: <message>"; kExitFailed.
int CallError(std::ostream& err, const absl::Status& status);
int CallError(std::ostream& err, const grpc::Status& status);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_COMMAND_CONTEXT_H_
