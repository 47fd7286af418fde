// Use-time validation of a derived grant's delegation chain (`validateDelegationChain`,
// semantics §3.6, ADR 0008). `parentGrantId` is only a claim: every ancestor is re-resolved
// from the trusted DelegationResolver at every decision that reaches it.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_DELEGATION_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_DELEGATION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capability/eligibility.h"
#include "capability/reason_codes.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core {

// Trusted ancestor lookup (the reference's DelegationChainResolver). Implementations must be
// thread-safe and must fail rather than answer from stale data.
class DelegationResolver {
 public:
  virtual ~DelegationResolver() = default;

  // Returns the grant `grant_id` of `namespace_id`, or nullopt when there is none.
  // Errors: any non-OK status means the lookup could not be made (resolver_failed).
  virtual absl::StatusOr<std::optional<protocol::v1::CapabilityGrant>> Resolve(
      absl::string_view namespace_id, absl::string_view grant_id) = 0;
};

// semantics §3.6 DEFAULT_MAX_DELEGATION_CHAIN_LENGTH: leaf and ancestors together.
inline constexpr int kDefaultMaxDelegationChainLength = 16;

enum class ChainStatus {
  kValid,
  // The chain could not be established (resolver missing, failed, or parent not found).
  kUnverified,
  // The chain was established and broke a rule.
  kInvalid,
};

// The outcome of one chain validation.
struct ChainVerdict {
  ChainStatus status = ChainStatus::kValid;
  // When not valid.
  capability::DelegationCode code = capability::DelegationCode::kResolverUnavailable;
  // When not valid: the child of the failing link, i.e. the grant whose parentGrantId claim
  // could not be honoured.
  std::string grant_id;
  // The ancestors resolved (and accepted as links), nearest first.
  std::vector<std::string> ancestor_ids;

  bool valid() const { return status == ChainStatus::kValid; }
};

// Validates the chain above `leaf` for a decision over `context` at `instants`. A grant with
// no parent is valid (a root). For each link, in order: no resolver → resolver_unavailable;
// chain already `max_chain_length` long → chain_too_long; resolver error, or an answer that
// is not a valid grant with the asked id → resolver_failed; no answer → parent_not_found;
// parent already in the chain → chain_cycle; then namespace_mismatch,
// issuer_not_parent_subject, parent_inactive (eligibility at the same two instants),
// delegation_not_permitted, delegation_depth_exceeded, bounded_parent_not_delegable,
// capability_widened, constraints_widened (an omitted constraint counts as widening).
// `resolver` may be null. Thread-safe if the resolver is.
ChainVerdict ValidateDelegationChain(const protocol::v1::CapabilityGrant& leaf,
                                     const protocol::v1::AccessContext& context,
                                     const capability::DecisionInstants& instants,
                                     DelegationResolver* resolver,
                                     int max_chain_length = kDefaultMaxDelegationChainLength);

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_DELEGATION_H_
