// The authorizer service's logic behind authorizer.proto (no gRPC here; server/ adapts it):
// turn authority leases over grantstore_svc, decisions by the authorization core, and the
// pre-effect audit every decision needs before it is answered.
//
// Leases. OpenTurnAuthority loads grants and host policy once (LoadAuthority), resolves them
// (AuthorityResolution), records authority.resolved pre-effect and returns a lease id
// (lease_id.h) carrying (lease key, revision), the admission instant and the expiry under a
// deployment MAC. This replica holds the resolved authority in memory; a replica that does not
// know a lease id verifies it and rebuilds the identical authority with
// LoadAuthority(at_revision) — no second authority.resolved: it is the same snapshot, and the
// hash is checked against the one the lease was opened with. A store outage at open is an
// UNAVAILABLE lease (authority_unavailable); an audit outage at open is an UNAVAILABLE lease
// with code audit_unavailable. Either keeps the whole turn fail closed. A second open of the
// same lease key while this replica holds a live lease answers that lease (a retry, not a new
// load). Leases expire after their timeout by the injected clock; expired or known-closed leases
// are NOT_FOUND.
//
// Decisions and the order of effects (consume vs. audit). A decision that may spend a bounded
// use is taken in three steps, so that an audit outage never costs a use and no use is ever
// spent by a decision the audit log does not hold:
//   1. decide without consuming: the core's invocation procedure with the usage counter read
//      (GetUsage < maxUses), so the exact reason order of §3.3 is kept;
//   2. record authorization.checked pre-effect. A consuming allow on a bounded grant is
//      recorded as a reservation (consumed false, metadata usageState "reserved", ADR 0029). If
//      audit cannot take the record: the answer is audit_unavailable (fail closed) and nothing
//      was consumed;
//   3. only then TryConsume. Consumed → allowed, consumed. The counter fails →
//      usage_store_unavailable (fail closed), recorded with releasedGrantId. A concurrent
//      caller spent the last use between 1 and 3 → decide again (the grant now reads
//      exhausted); each round is recorded, the later one naming the released grant.
// Unbounded grants and non-consuming calls are simply decide → record → answer.
//
// Thread-safe: leases live in a mutex-guarded table; resolved authorities are immutable.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_AUTHORIZER_CORE_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_AUTHORIZER_CORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/core/audit_records.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "authorizer_svc/core/grantstore_ports.h"
#include "authorizer_svc/core/lease_id.h"
#include "authorizer_svc/core/resolved_authority.h"
#include "common/metrics/sinks.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grant_store_client.h"
#include "sharedos/authorizer/v1/authorizer.pb.h"

namespace sharedos::authorizer::core {

class AuthorizerCore {
 public:
  struct Options {
    // A lease opened without a timeout lives this long (the default turn timeout + grace).
    absl::Duration default_lease_timeout = absl::Seconds(150);
    // The largest timeout accepted: the turn timeout bound (600 s) plus the grace.
    absl::Duration max_lease_timeout = absl::Seconds(630);
    // Per-call deadlines towards grantstore_svc. A store slower than this is an outage: the
    // decision fails closed rather than wait.
    absl::Duration load_deadline = absl::Seconds(2);
    absl::Duration usage_deadline = absl::Seconds(1);
    absl::Duration resolve_deadline = absl::Seconds(1);
    absl::Duration escalation_deadline = absl::Seconds(2);
    // Live revocation (ADR 0027) through CheckRevocations at every decision that matches a
    // grant. Off by default: revocation is snapshot-bound (observed by the next turn), and a
    // live check costs a store round trip per decision.
    bool live_revocation = false;
    int max_delegation_chain_length = kDefaultMaxDelegationChainLength;
    // Decisions and escalations counted here (common/metrics/sinks.h); null: none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
  };

  // Borrows every dependency; each must outlive this object. `lease_secret` keys the lease id
  // MAC and must be the same on every replica of the deployment.
  AuthorizerCore(grantstore::client::GrantStoreClient& grantstore,
                 audit::client::AuditWriter& audit, const common::Clock& clock,
                 std::string lease_secret, Options options);
  AuthorizerCore(const AuthorizerCore&) = delete;
  AuthorizerCore& operator=(const AuthorizerCore&) = delete;

  // Opens (or, for a key this replica already holds, answers again) a turn's lease.
  // Errors: INVALID_ARGUMENT (unknown fields; context failing protocol "1" validation, naming
  // the field; turn_id not an Identifier; timeout not positive or above the maximum).
  absl::StatusOr<v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const v1::OpenTurnAuthorityRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Idempotent: a closed or expired lease closes again successfully.
  // Errors: INVALID_ARGUMENT (a lease_id that is malformed or fails its integrity check).
  absl::StatusOr<v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const v1::CloseTurnAuthorityRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // One decision, recorded before it is answered (see the class comment for consume order).
  // With a context instead of a lease: a turn of one operation (load, resolve, authority.resolved,
  // decide). required_authority only on an invocation no_matching_grant denial. With a
  // declared_ceiling: Discover on it first (as Discover would answer it); not discoverable →
  // the response carries only `discovery`, nothing is decided, consumed or recorded.
  // Errors: INVALID_ARGUMENT (unknown fields; neither subject; malformed lease_id, context,
  // requirement, declared_ceiling, operation_id, tool or operation_instant); NOT_FOUND (lease
  // expired or closed).
  absl::StatusOr<v1::AuthorizeResponse> Authorize(const v1::AuthorizeRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);

  // canDiscover for a whole catalogue (never consumes, ceiling consulted, nothing recorded:
  // the envelope records the listing as tool.catalog.listed).
  // Errors: INVALID_ARGUMENT (malformed lease_id; no tools, more than 4096, a bad or duplicate
  // name, a malformed requirement); NOT_FOUND (lease expired or closed).
  absl::StatusOr<v1::DiscoverResponse> Discover(const v1::DiscoverRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);

  // sharedos.execution / addressPath(agent) / invoke, consuming; recorded like Authorize.
  // Errors: INVALID_ARGUMENT (malformed lease_id, agent missing or malformed);
  // NOT_FOUND (lease expired or closed).
  absl::StatusOr<v1::AdmitTurnResponse> AdmitTurn(const v1::AdmitTurnRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Errors: INVALID_ARGUMENT (malformed lease_id); NOT_FOUND (lease expired or closed).
  absl::StatusOr<v1::ReachResponse> Reach(const v1::ReachRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Mints the escalation from the lease's trusted context (the ask's identity is minted again:
  // id, namespace, requester, owner, requested_at), stores it PENDING at grantstore_svc under a
  // deterministic id, then records escalation.requested post-effect (its failure never changes
  // the answer). Works under an unavailable lease too: it needs the context, not the authority.
  // Errors: INVALID_ARGUMENT (malformed lease_id; execution_id not an Identifier; reason empty or
  // over 512 after trimming; an ask that fails validation); NOT_FOUND (lease expired or closed);
  // UNAVAILABLE (grantstore_svc did not store it).
  absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const v1::RecordEscalationRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Leases held by this replica (open, not yet swept), for tests and metrics.
  int held_leases() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Lease;

  // The lease `lease_id` names: held here, or verified and rebuilt from the store. A rebuild
  // that cannot load answers a transient unavailable lease (not held, so the next call retries).
  absl::StatusOr<std::shared_ptr<const Lease>> FindLease(const std::string& lease_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Loads and resolves the authority of `context` (the latest revision, or `at_revision`).
  std::shared_ptr<Lease> Load(const protocol::v1::AccessContext& context,
                              std::optional<int64_t> at_revision, ResolutionFacts* facts);
  // Holds `lease` under its id until its expiry; returns the lease held under that id.
  std::shared_ptr<const Lease> Hold(std::shared_ptr<Lease> lease) ABSL_LOCKS_EXCLUDED(mu_);
  void Sweep(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The recorded decision of `requirement` under `lease` (see the class comment).
  Verdict Decide(const Lease& lease, const protocol::v1::CapabilityRequirement& requirement,
                 bool consume, std::optional<absl::Time> now, absl::string_view operation_id,
                 absl::string_view tool);
  // Records `verdict` pre-effect; the audit_unavailable verdict when it cannot.
  Verdict Record(const CheckFacts& facts, Verdict verdict);

  // The core over the lease's ports; `usage` counts bounded uses.
  CapabilityAuthorizer AuthorizerFor(const Lease& lease, UsageCounter* usage);

  grantstore::client::GrantStoreClient& grantstore_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const LeaseIdCodec codec_;
  const Options options_;
  common::metrics::DecisionMetrics metrics_;
  GrantStoreUsageCounter usage_;
  GrantStoreRevocationSource revocations_;

  mutable absl::Mutex mu_;
  // lease id → lease.
  absl::flat_hash_map<std::string, std::shared_ptr<const Lease>> leases_ ABSL_GUARDED_BY(mu_);
  // lease key → lease id, for the leases opened here.
  absl::flat_hash_map<std::string, std::string> by_key_ ABSL_GUARDED_BY(mu_);
  // Closed lease ids, remembered until their expiry.
  absl::flat_hash_map<std::string, absl::Time> closed_ ABSL_GUARDED_BY(mu_);
  // expiry → lease id, over both maps above.
  std::multimap<absl::Time, std::string> expiries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_AUTHORIZER_CORE_H_
