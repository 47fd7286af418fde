// The sharedosctl commands: building requests from an Invocation, calling GrantStore and
// AuditLog with the admin token, and rendering answers as tables (or the response protos as JSON).
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "envelope_svc/client/envelope_client.h"
#include "google/protobuf/message.h"
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

// Runs one parsed command; prints results to `out`, errors to `err` ("sharedosctl: <CODE>:
// <message>" for gRPC errors). Returns the exit code.
int RunCommand(const Invocation& invocation, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);

// The first line of the token file, whitespace trimmed. Errors: FAILED_PRECONDITION (unreadable
// or empty; the message names the path, never the content).
absl::StatusOr<std::string> ReadToken(const std::string& path);

// Parses a message from text: JSON when `path` ends in ".json" or the text starts with '{',
// protobuf text format otherwise. Unknown fields are refused. Errors: INVALID_ARGUMENT.
absl::Status ParseMessageText(const std::string& path, const std::string& text,
                              google::protobuf::Message* message);

// Request builders (flag values checked here: addresses, names, integers, times).
absl::StatusOr<grantstore::v1::ListGrantsRequest> BuildListGrants(const Invocation& invocation);
absl::StatusOr<audit::v1::AuditFilter> BuildAuditFilter(const Invocation& invocation);
absl::StatusOr<grantstore::v1::ResolveEscalationRequest> BuildResolveEscalation(
    const Invocation& invocation, grantstore::v1::EscalationDecision decision);
absl::StatusOr<audit::v1::VerifyRequest> BuildVerify(const Invocation& invocation);

// `turn`: the scripted demo turn (README "Quickstart") in world-demo — agent:agent-assistant for
// human:user-alice, tools files.read, files.create and sharedos.escalate — with `execution_id`.
envelope::v1::OpenTurnRequest BuildDemoTurn(const std::string& execution_id,
                                            const google::protobuf::Timestamp& now);
// A denial's `error.details.requiredAuthority` as a CapabilityRequest. Errors: NOT_FOUND (the
// result carries none); INVALID_ARGUMENT (it is not a CapabilityRequest).
absl::StatusOr<protocol::v1::CapabilityRequest> RequiredAuthority(
    const protocol::v1::ToolResult& denial);
// The id of the escalation of `execution_id` whose requested authority is
// `requested_authority_id`; "" when none is listed.
std::string FindEscalationId(const std::vector<grantstore::v1::EscalationRecord>& escalations,
                             const std::string& execution_id,
                             const std::string& requested_authority_id);

// Renderers.
std::string FormatCapability(const protocol::v1::Capability& capability);
std::string RenderGrants(const std::vector<protocol::v1::CapabilityGrant>& grants);
std::string RenderGrant(const protocol::v1::CapabilityGrant& grant);
std::string RenderAuditRecords(const std::vector<audit::v1::AuditRecord>& records);
std::string RenderEscalations(const std::vector<grantstore::v1::EscalationRecord>& escalations);
std::string RenderPolicy(const grantstore::v1::HostPolicy& policy);
std::string RenderVerify(const audit::v1::VerifyResponse& verify);
// Indented JSON (lowerCamelCase names), or one line when `compact`.
std::string ToJson(const google::protobuf::Message& message, bool compact = false);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_
