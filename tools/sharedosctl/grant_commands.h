// The `grants` and `policy` commands of sharedosctl (GrantStore): issue, derive, revoke, list and
// show grants; put and get a namespace's host policy.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_GRANT_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_GRANT_COMMANDS_H_

#include <ostream>

#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int GrantsIssue(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err);
int GrantsDerive(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 std::ostream& out, std::ostream& err);
int GrantsRevoke(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 std::ostream& out, std::ostream& err);
// AcceptRestore (docs/adr/0021): prints what was re-applied and the notice of what was lost.
int GrantsAcceptRestore(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                        std::ostream& out, std::ostream& err);
int GrantsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);
int GrantsShow(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);
int PolicyPut(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err);
int PolicyGet(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_GRANT_COMMANDS_H_
