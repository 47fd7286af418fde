// The `escalations` commands of sharedosctl (GrantStore): list and show escalation records, and
// approve or deny one as its reviewer.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_ESCALATION_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_ESCALATION_COMMANDS_H_

#include <ostream>

#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int EscalationsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err);
int EscalationsShow(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err);
int EscalationsApprove(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                       std::ostream& out, std::ostream& err);
int EscalationsDeny(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_ESCALATION_COMMANDS_H_
