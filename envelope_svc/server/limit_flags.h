// The envelope's capacity limits as flags (issue 34; docs/reliability.md lists each, its default
// and what a caller sees), defined once for envelope_svc and sharedosd: open turns per namespace
// and per host credential, turns retained, refusals past a turn's budget, tool result caps,
// per-owner file quotas, the deadline of a call to the authorizer, and the MCP front door's
// connections and timeouts. A main links this library and calls ApplyLimitFlags once its options
// exist (the MCP door's included).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_LIMIT_FLAGS_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_LIMIT_FLAGS_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "envelope_svc/server/envelope_server.h"

namespace sharedos::envelope::server {

// Copies the limit flags into `options` (options.mcp's server when set), --drain_grace included,
// and checks the turn options with them (CheckTurnOptions).
// Errors: INVALID_ARGUMENT naming the flag (a zero or negative bound, a grace beyond 600s).
absl::Status ApplyLimitFlags(EnvelopeServerOptions& options);

// --drain_grace as given (for a main's configuration log line).
absl::Duration DrainGraceFlag();

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_LIMIT_FLAGS_H_
