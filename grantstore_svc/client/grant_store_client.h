// The stub other SharedOS services use to reach grantstore_svc's data plane (the authorizer's
// GrantSource, DelegationChainResolver, GrantUsageStore, GrantRevocationSource and escalation
// queue, semantics §3.1): an interface, a gRPC implementation (grpc_grant_store_client.h) and
// an in-memory fake for tests (fake_grant_store_client.h).

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANT_STORE_CLIENT_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANT_STORE_CLIENT_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::grantstore::client {

// Per-call options. Every call is bounded: a call that has no answer within `deadline` fails
// with DEADLINE_EXCEEDED (the caller fails closed, it never waits for a store that is away).
struct CallOptions {
  absl::Duration deadline = absl::Seconds(2);
};

// grantstore_svc's data-plane methods (grantstore.proto documents each). Every method may
// also answer UNAVAILABLE (the store cannot be reached), DEADLINE_EXCEEDED (no answer within
// the call's deadline) and UNAUTHENTICATED (the service credential was refused); each
// method's other errors are listed below. Implementations are thread-safe.
class GrantStoreClient {
 public:
  virtual ~GrantStoreClient() = default;

  // The grants issued to `actor` by `authority` in the namespace and the namespace's host
  // policy, read at one revision (the latest, or `at_revision`).
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (at_revision not servable);
  // RESOURCE_EXHAUSTED (more than 256 grants: grant_limit_exceeded).
  virtual absl::StatusOr<v1::LoadAuthorityResponse> LoadAuthority(
      const v1::LoadAuthorityRequest& request, const CallOptions& options) = 0;

  // A trusted ancestor lookup, never stale.
  // Errors: INVALID_ARGUMENT; NOT_FOUND (no such grant: parent_not_found);
  // FAILED_PRECONDITION (at_revision not servable).
  virtual absl::StatusOr<v1::ResolveGrantResponse> ResolveGrant(
      const v1::ResolveGrantRequest& request, const CallOptions& options) = 0;

  // Atomically spends one use iff uses < max_uses; exhaustion is consumed = false.
  // Errors: INVALID_ARGUMENT; NOT_FOUND (unknown grant).
  virtual absl::StatusOr<v1::TryConsumeResponse> TryConsume(const v1::TryConsumeRequest& request,
                                                            const CallOptions& options) = 0;

  // Errors: INVALID_ARGUMENT; NOT_FOUND (unknown grant).
  virtual absl::StatusOr<v1::GetUsageResponse> GetUsage(const v1::GetUsageRequest& request,
                                                        const CallOptions& options) = 0;

  // Live revocation (ADR 0027).
  // Errors: INVALID_ARGUMENT (no ids, more than 256).
  virtual absl::StatusOr<v1::CheckRevocationsResponse> CheckRevocations(
      const v1::CheckRevocationsRequest& request, const CallOptions& options) = 0;

  // Stores an escalation PENDING; idempotent on escalation_id with the same content.
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (escalation_id recorded with other content).
  virtual absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const v1::RecordEscalationRequest& request, const CallOptions& options) = 0;
};

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANT_STORE_CLIENT_H_
