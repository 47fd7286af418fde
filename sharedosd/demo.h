#ifndef SHAREDOS_SHAREDOSD_DEMO_H_
#define SHAREDOS_SHAREDOSD_DEMO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::sharedosd {

// The demo world `world-demo` that `sharedosd --demo` seeds (README "Quickstart"): the agent
// agent:agent-assistant, acting for its owner human:user-alice, may run, read the owner's
// `Workspace` and everything under it, create files only under `Scratch`, and request an
// escalation. A write to Workspace/summary.txt is therefore refused `no_matching_grant` until an
// operator approves the escalation that names it.
inline constexpr char kDemoNamespace[] = "world-demo";
inline constexpr char kDemoGrantId[] = "grant-demo-assistant";

// The grant, deterministic (a fixed issued_at) so reissuing it is a no-op.
protocol::v1::CapabilityGrant DemoGrant();

// Seeds the demo world idempotently: issues DemoGrant() through `grantstore` (as caller
// "sharedosd-demo") unless a grant with its id exists, and writes
// <files_root>/human/user-alice/workspace/Workspace/notes.txt unless it exists. Returns one
// human-readable line per item ("issued …" or "… already present"). Errors: those of the grant
// store; FAILED_PRECONDITION (the workspace cannot be created or written).
absl::StatusOr<std::vector<std::string>> SeedDemo(grantstore::core::GrantStoreCore& grantstore,
                                                  const std::string& files_root);

// The quickstart commands sharedosd prints at the end of a --demo start-up.
std::string DemoNextSteps();

}  // namespace sharedos::sharedosd

#endif  // SHAREDOS_SHAREDOSD_DEMO_H_
