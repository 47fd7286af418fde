// `sharedosctl explain --id=<sequence | event id | escalation id>` (explain.h), as text or
// --json.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_EXPLAIN_COMMAND_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_EXPLAIN_COMMAND_H_

#include <ostream>

#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int ExplainCommand(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                   std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_EXPLAIN_COMMAND_H_
