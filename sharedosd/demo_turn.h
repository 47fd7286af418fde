// The demo world's agent turn, as a host opens it (README "Quickstart"): agent:agent-assistant
// acting for its owner human:user-alice in `world-demo`, purpose "keep notes", offered
// files.read, files.create and sharedos.escalate. One definition for sharedosctl's scripted
// turn, the MCP client tests and the MCP bench. Stateless; thread-safe.

#ifndef SHAREDOS_SHAREDOSD_DEMO_TURN_H_
#define SHAREDOS_SHAREDOSD_DEMO_TURN_H_

#include <string>

#include "google/protobuf/timestamp.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"

namespace sharedos::sharedosd {

// The OpenTurnRequest of one demo turn with `runtime`, its execution id and trace id (context
// and message), and `now` as the context's instant and the message's creation time. Callers
// adjust tools and options on the result when they need others.
envelope::v1::OpenTurnRequest DemoTurnRequest(envelope::v1::Runtime runtime,
                                              const std::string& execution_id,
                                              const std::string& trace_id,
                                              const google::protobuf::Timestamp& now);

}  // namespace sharedos::sharedosd

#endif  // SHAREDOS_SHAREDOSD_DEMO_TURN_H_
