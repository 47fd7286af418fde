// The grant store's storage interface: grants, the store revision, usage counters, host
// policies and escalations. Implementations (SQLite now, PostgreSQL later) hold all
// dialect-specific SQL; the logic above them lives in grantstore_svc/core.
//
// Revisions. The store keeps one monotonic revision (0 when empty). Every committed write
// transaction takes exactly the next revision; every row it writes is stamped with it
// (grants keep issued_revision and revoked_revision, policies and escalations their
// revision), so a read "at revision R" sees exactly what was committed at or before R, at
// any later time, on any replica. Usage counters are not revisioned: a consumed use is
// never refunded and is not part of a snapshot.

#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::storage {

// A grant as the store holds it. `grant.revoked_at` is set iff the grant was revoked at or
// before the revision it was read at (then `revoked_revision` is set too).
struct StoredGrant {
  protocol::v1::CapabilityGrant grant;
  int64_t issued_revision = 0;
  std::optional<int64_t> revoked_revision;
};

// A namespace's host policy and the revision that installed it.
struct StoredHostPolicy {
  grantstore::v1::HostPolicy policy;
  int64_t revision = 0;
};

// An escalation and the opaque fingerprint of the request that resolved it (empty while
// pending); the store compares nothing, the core uses it to answer retries.
struct StoredEscalation {
  grantstore::v1::EscalationRecord record;
  std::string resolution_fingerprint;
};

// What an idempotency key was first used for.
struct IdempotencyEntry {
  std::string namespace_id;
  std::string grant_id;
};

// A credential and the SHA-256 hex of its secret (the secret itself is never stored).
struct StoredCredential {
  grantstore::v1::Credential credential;
  std::string token_sha256;
};

struct CredentialQuery {
  bool include_revoked = false;
  // Only ids strictly greater (byte order) than this one; empty: from the start.
  std::string after_credential_id;
  int limit = 100;
};

// The authority of one (actor, issuer) pair at one revision (LoadAuthority).
struct AuthoritySnapshot {
  int64_t revision = 0;
  // Issued at or before `revision` and not revoked by then, in issue order.
  std::vector<protocol::v1::CapabilityGrant> grants;
  // The namespace's policy as of `revision`; absent when it had none.
  std::optional<grantstore::v1::HostPolicy> host_policy;
};

struct RevocationCheck {
  int64_t revision = 0;
  // The asked ids revoked at `revision` or unknown to the store, in the order asked, once.
  std::vector<std::string> revoked_grant_ids;
};

struct ConsumeResult {
  bool consumed = false;
  int64_t uses = 0;
};

// Filters of ListGrants; an absent address matches any.
struct GrantQuery {
  std::string namespace_id;
  std::optional<protocol::v1::Address> subject;
  std::optional<protocol::v1::Address> issuer;
  bool include_revoked = false;
  // Only ids strictly greater (byte order) than this one; empty: from the start.
  std::string after_grant_id;
  int limit = 100;
};

struct EscalationQuery {
  std::string namespace_id;
  std::optional<grantstore::v1::EscalationRecordStatus> status;
  // Only escalations recorded strictly after this revision; 0: from the start.
  int64_t after_recorded_revision = 0;
  int limit = 100;
};

// One write transaction: everything it writes becomes visible at once, at revision(), when
// Commit() succeeds; destroying it uncommitted rolls everything back. Holds the store's
// write lock for its whole life, so keep it short. Not thread-safe (one owner).
//
// Every method may also fail with UNAVAILABLE (the database cannot be reached or written)
// or INTERNAL (a stored row no longer parses); after any error the transaction must be
// abandoned (destroyed), never committed.
class WriteTransaction {
 public:
  virtual ~WriteTransaction() = default;

  // The revision this transaction commits as: the current revision + 1, or what
  // AdvanceRevision set.
  virtual int64_t revision() const = 0;

  // Makes this transaction commit as `revision` (> revision()) instead, skipping the revisions
  // between (a read at a skipped revision sees the state of the one before). Only before any
  // write. Used once a restored store is accepted (docs/adr/0021): its revisions move past those
  // the audit log already holds, so no revision number names two different states.
  // Errors: INVALID_ARGUMENT (not above revision()).
  virtual absl::Status AdvanceRevision(int64_t revision) = 0;

  // The latest state of a grant (revoked_at set when revoked), or nullopt.
  virtual absl::StatusOr<std::optional<StoredGrant>> GetGrant(absl::string_view namespace_id,
                                                              absl::string_view grant_id) = 0;

  // Inserts a grant issued at revision(). `grant.revoked_at` must be absent.
  // Errors: ALREADY_EXISTS (the id is used in the namespace, by any grant, ever).
  virtual absl::Status InsertGrant(const protocol::v1::CapabilityGrant& grant) = 0;

  // Marks a live grant revoked at revision(), at `revoked_at`.
  // Errors: NOT_FOUND (unknown grant); FAILED_PRECONDITION (already revoked).
  virtual absl::Status RevokeGrant(absl::string_view namespace_id, absl::string_view grant_id,
                                   absl::Time revoked_at) = 0;

  virtual absl::StatusOr<std::optional<IdempotencyEntry>> GetIdempotencyKey(
      absl::string_view key) = 0;
  // Errors: ALREADY_EXISTS (the key is taken).
  virtual absl::Status PutIdempotencyKey(absl::string_view key, const IdempotencyEntry& entry) = 0;

  // The namespace's current policy, or nullopt.
  virtual absl::StatusOr<std::optional<StoredHostPolicy>> GetHostPolicy(
      absl::string_view namespace_id) = 0;
  // Whether `version` was ever installed in the namespace.
  virtual absl::StatusOr<bool> HostPolicyVersionUsed(absl::string_view namespace_id,
                                                     absl::string_view version) = 0;
  // Installs `policy` (its namespace_id names the namespace) at revision().
  virtual absl::Status PutHostPolicy(const grantstore::v1::HostPolicy& policy) = 0;

  virtual absl::StatusOr<std::optional<StoredEscalation>> GetEscalation(
      absl::string_view escalation_id) = 0;
  // Inserts `record` (status PENDING); the store stamps recorded_revision = revision().
  // Errors: ALREADY_EXISTS (the id is taken).
  virtual absl::Status InsertEscalation(const grantstore::v1::EscalationRecord& record) = 0;
  // Replaces a pending escalation with its resolved form (status APPROVED or DENIED).
  // Errors: NOT_FOUND (unknown id); FAILED_PRECONDITION (not pending).
  virtual absl::Status ResolveEscalation(const grantstore::v1::EscalationRecord& record,
                                         absl::string_view resolution_fingerprint) = 0;

  // The credential with that id (live or revoked), or nullopt.
  virtual absl::StatusOr<std::optional<StoredCredential>> GetCredential(
      absl::string_view credential_id) = 0;
  // Inserts a credential; the store stamps credential.revision = revision().
  // Errors: ALREADY_EXISTS (the id, or the digest, is taken).
  virtual absl::Status InsertCredential(const StoredCredential& credential) = 0;
  // Replaces an existing credential (revocation, a rotated digest); stamps revision().
  // Errors: NOT_FOUND (unknown id); ALREADY_EXISTS (the new digest is another's).
  virtual absl::Status UpdateCredential(const StoredCredential& credential) = 0;

  // Makes every write visible at revision() and durable. Call once, only after writing.
  virtual absl::Status Commit() = 0;
};

// The grant store. Implementations are thread-safe: any number of concurrent readers; write
// transactions and usage updates are serialised (also across processes sharing a database).
// Reads never answer stale data: a revision that cannot be served is an error.
//
// Every method may also fail with UNAVAILABLE (the database cannot be reached) or INTERNAL
// (a stored row no longer parses). A thread holding a WriteTransaction reads through it, never
// through the store (a store may serialise reads behind the write lock, e.g. in-memory SQLite).
class GrantStore {
 public:
  virtual ~GrantStore() = default;

  // Opens a write transaction, waiting for the write lock (bounded by the implementation's
  // busy timeout, then UNAVAILABLE).
  virtual absl::StatusOr<std::unique_ptr<WriteTransaction>> BeginWrite() = 0;

  // The latest committed revision (0 for an empty store).
  virtual absl::StatusOr<int64_t> CurrentRevision() = 0;

  // The highest revision a write transaction announced before recording it (docs/adr/0021): a
  // store durably notes the revision it is about to take before its control-plane records are
  // written, so a revision the log holds but the store never committed (a crash between the two)
  // is told apart from a restore. CurrentRevision() once every announced write committed.
  // PostgreSQL never answers an announcement a restored dump carries (postgres_grant_store.h).
  virtual absl::StatusOr<int64_t> AnnouncedRevision() = 0;

  // The live grants with subject `actor` and issuer `authority` in the namespace, plus the
  // namespace's host policy, all at one revision (`at_revision`, or the latest). At most
  // `max_grants` grants are returned; the caller asks for one more than it accepts to detect
  // an overflow. Errors: FAILED_PRECONDITION (at_revision ahead of the store or negative).
  virtual absl::StatusOr<AuthoritySnapshot> LoadAuthority(absl::string_view namespace_id,
                                                          const protocol::v1::Address& actor,
                                                          const protocol::v1::Address& authority,
                                                          std::optional<int64_t> at_revision,
                                                          int max_grants) = 0;

  // A grant as it was at `at_revision` (or latest): nullopt when it was not issued by then.
  // Errors: FAILED_PRECONDITION (at_revision ahead of the store or negative).
  virtual absl::StatusOr<std::optional<StoredGrant>> GetGrant(
      absl::string_view namespace_id, absl::string_view grant_id,
      std::optional<int64_t> at_revision) = 0;

  // Grants of a namespace ordered by id (byte order), at most query.limit.
  virtual absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> ListGrants(
      const GrantQuery& query) = 0;

  // Live revocation at the latest revision (unknown ids count as revoked: fail closed).
  virtual absl::StatusOr<RevocationCheck> CheckRevocations(
      absl::string_view namespace_id, absl::Span<const std::string> grant_ids) = 0;

  // Atomically: if uses < max_uses then uses += 1 (consumed). Never refunded.
  // Errors: NOT_FOUND (no such grant in the namespace).
  virtual absl::StatusOr<ConsumeResult> TryConsume(absl::string_view namespace_id,
                                                   absl::string_view grant_id,
                                                   int64_t max_uses) = 0;
  // Errors: NOT_FOUND (no such grant in the namespace).
  virtual absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                           absl::string_view grant_id) = 0;

  // The namespace's latest policy, or nullopt.
  virtual absl::StatusOr<std::optional<StoredHostPolicy>> GetHostPolicy(
      absl::string_view namespace_id) = 0;

  virtual absl::StatusOr<std::optional<StoredEscalation>> GetEscalation(
      absl::string_view escalation_id) = 0;
  // Escalations of a namespace, oldest (lowest recorded_revision) first, at most query.limit.
  virtual absl::StatusOr<std::vector<grantstore::v1::EscalationRecord>> ListEscalations(
      const EscalationQuery& query) = 0;

  // The credential whose current digest is `token_sha256` (live or revoked), or nullopt. Reads
  // the latest committed state: a revocation is visible to the next call.
  virtual absl::StatusOr<std::optional<StoredCredential>> FindCredentialByDigest(
      absl::string_view token_sha256) = 0;
  // Credentials ordered by id (byte order), at most query.limit.
  virtual absl::StatusOr<std::vector<grantstore::v1::Credential>> ListCredentials(
      const CredentialQuery& query) = 0;
};

}  // namespace sharedos::grantstore::storage

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_H_
