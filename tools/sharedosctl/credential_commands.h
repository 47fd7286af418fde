// sharedosctl credentials issue|list|revoke|rotate: who may call SharedOS, managed through the
// grant store's control plane with an admin token. A secret is printed once, as "secret: <it>",
// on issue and rotate; nothing else ever prints one.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_CREDENTIAL_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_CREDENTIAL_COMMANDS_H_

#include <ostream>

#include "absl/status/statusor.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

// The IssueCredential request of `credentials issue`. Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<grantstore::v1::IssueCredentialRequest> BuildIssueCredential(const Invocation& inv);

int CredentialsIssue(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                     std::ostream& out, std::ostream& err);
int CredentialsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err);
int CredentialsRevoke(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                      std::ostream& out, std::ostream& err);
int CredentialsRotate(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                      std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_CREDENTIAL_COMMANDS_H_
