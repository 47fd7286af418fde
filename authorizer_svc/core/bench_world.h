// Deterministic authorities and catalogues for the authorizer core's benchmark and allocation
// test: `grants` grants × 10 capabilities over 8 namespaces, 48 path segments and 12 actions,
// where only the last grant serves TargetRequirement().

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_BENCH_WORLD_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_BENCH_WORLD_H_

#include <string>
#include <vector>

#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core::testing {

inline constexpr int kCapabilitiesPerGrant = 10;

// Grant ids are "g<index>" unless `id_prefix` is given (long ids defeat the small-string
// optimisation, which the allocation test uses).
std::vector<protocol::v1::CapabilityGrant> BenchGrants(int grants,
                                                       const std::string& id_prefix = "g");

// files/projects/target-project/notes.md read: served by the last grant only.
protocol::v1::CapabilityRequirement TargetRequirement();

// A request no grant serves.
protocol::v1::CapabilityRequirement UnservedRequirement();

// `tools` declared ceilings spread over the namespaces and actions of BenchGrants.
std::vector<protocol::v1::CapabilityRequirement> BenchCeilings(int tools);

}  // namespace sharedos::authorizer::core::testing

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_BENCH_WORLD_H_
