// The authorizer's host-supplied ports (semantics §3.1) besides the delegation resolver:
// bounded-use counters, live revocation (ADR 0027) and the optional grant verifier. Each
// implementation must be thread-safe; the authorizer borrows them.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_PORTS_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_PORTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core {

// Bounded-use counters (GrantUsageStore). Any error makes the decision
// usage_store_unavailable.
class UsageCounter {
 public:
  virtual ~UsageCounter() = default;

  // Atomically consumes one use of `grant_id` if fewer than `max_uses` were consumed; returns
  // whether it did.
  virtual absl::StatusOr<bool> TryConsume(absl::string_view namespace_id,
                                          absl::string_view grant_id, int64_t max_uses) = 0;

  // Uses consumed so far.
  virtual absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                           absl::string_view grant_id) = 0;
};

// One atomic read of live revocations.
struct RevocationResult {
  int64_t revision = 0;
  // A subset of the ids asked about.
  std::vector<std::string> revoked_grant_ids;
};

// Live revocation (GrantRevocationSource, ADR 0027): checked for a candidate grant and its
// validated chain after matching, before the ceiling and usage. Any error, or an answer naming
// an id that was not asked about, makes the decision authority_unavailable.
class RevocationSource {
 public:
  virtual ~RevocationSource() = default;

  virtual absl::StatusOr<RevocationResult> Check(absl::string_view namespace_id,
                                                 absl::Span<const std::string> grant_ids) = 0;
};

// Optional verification of grant material (CapabilityGrantVerifier). false or an error
// rejects the grant with reason `verifier`.
class GrantVerifier {
 public:
  virtual ~GrantVerifier() = default;

  virtual absl::StatusOr<bool> Verify(const protocol::v1::CapabilityGrant& grant,
                                      const protocol::v1::AccessContext& context) = 0;
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_PORTS_H_
