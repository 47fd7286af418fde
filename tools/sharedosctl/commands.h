// The sharedosctl commands: RunCommand dispatches a parsed Invocation to its command, one table
// entry per command. The commands live by group — grant_commands.h (grants, policy),
// escalation_commands.h, audit_commands.h, turn_command.h — over command_context.h (clients,
// exit codes, the gRPC context), inputs.h (token and message files), requests.h (request
// builders) and render.h (tables, JSON); this header brings them all in.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_

#include <ostream>

#include "grantstore_svc/client/operator_render.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"
#include "tools/sharedosctl/inputs.h"
#include "tools/sharedosctl/requests.h"
#include "tools/sharedosctl/turn_command.h"

namespace sharedos::sharedosctl {

// Runs one parsed command; prints results to `out`, errors to `err` ("sharedosctl: <CODE>:
// <message>" for gRPC errors). Returns the exit code.
int RunCommand(const Invocation& invocation, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_COMMANDS_H_
