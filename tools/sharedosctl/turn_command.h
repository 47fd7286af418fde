// `sharedosctl turn`: the scripted demo turn of the README quickstart, played as a host over the
// Envelope (host token): open, read the notes, write the summary, then finish — complete when
// the write succeeds, escalate with the denial's required authority when it is denied
// no_matching_grant — and name the escalation the reviewer will see.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_TURN_COMMAND_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_TURN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int RunDemoTurn(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err);

// The demo turn (README "Quickstart") in world-demo — agent:agent-assistant for
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

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_TURN_COMMAND_H_
