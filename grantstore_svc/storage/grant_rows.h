// The grant store's row code, one for both backends: what the columns of a row of `grants`,
// `host_policies`, `escalations` and `credentials` mean when read (a stored grant as of a
// revision, a parsed body, a corrupt row reported as such), what a write puts into them (the
// stamped body, the address keys, the revocation time's columns), and the rules a write checks
// against the row it replaces. The SQLite and PostgreSQL stores keep only their SQL and their
// driver calls: each reads a row through a RowReader over its own result type and binds the
// fields of the *Row structs below in its own dialect. Stateless; thread-safe.
#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_ROWS_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grantstore_svc/storage/grant_store.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::storage {

// One row of a result, column by column (0-based), as a backend's driver returns it. Views stay
// valid while the row is the current one. Implemented by each backend over its result type.
class RowReader {
 public:
  virtual ~RowReader() = default;
  virtual bool IsNull(int column) const = 0;
  virtual int64_t Int64(int column) const = 0;
  // The bytes of a text or binary column.
  virtual absl::string_view Bytes(int column) const = 0;
};

// ---- Reading rows. Each names the columns it reads, in the order the SELECT lists them. ----

// The columns GrantFromRow reads.
inline constexpr char kGrantColumns[] =
    "body, issued_revision, revoked_revision, revoked_at_seconds, revoked_at_nanos";

// A grant row (kGrantColumns) as it was at `at_revision`: a revocation after it is not visible.
// Errors: INTERNAL (the body does not parse).
absl::StatusOr<StoredGrant> GrantFromRow(const RowReader& row, int64_t at_revision);

// Column 0: a grant's body. Errors: INTERNAL (it does not parse).
absl::Status ParseGrantBody(const RowReader& row, protocol::v1::CapabilityGrant& grant);

// Columns: revision, body (of `namespace_id`'s policy). Errors: INTERNAL.
absl::StatusOr<StoredHostPolicy> HostPolicyFromRow(const RowReader& row,
                                                   absl::string_view namespace_id);

// Columns: body, resolution_fingerprint (of `escalation_id`). Errors: INTERNAL.
absl::StatusOr<StoredEscalation> EscalationFromRow(const RowReader& row,
                                                   absl::string_view escalation_id);

// Columns: escalation_id, body (a listing). Errors: INTERNAL.
absl::Status ParseListedEscalation(const RowReader& row, v1::EscalationRecord& record);

// Columns: body, token_sha256; `key` names the row in an error (the id, or "by digest": a
// digest is never echoed). Errors: INTERNAL.
absl::StatusOr<StoredCredential> CredentialFromRow(const RowReader& row, absl::string_view key);

// Columns: credential_id, body (a listing). Errors: INTERNAL.
absl::Status ParseListedCredential(const RowReader& row, v1::Credential& credential);

// The revision a read serves: `at_revision` when it is within [0, current], else the latest.
// Errors: FAILED_PRECONDITION (at_revision ahead of the store or negative).
absl::StatusOr<int64_t> ServableRevision(int64_t current, std::optional<int64_t> at_revision);

// ---- Writing rows: the values a write binds, in the order the INSERT lists its columns. ----

// INSERT INTO grants (namespace_id, grant_id, subject_key, issuer_key, issued_revision, body).
struct GrantRow {
  std::string namespace_id;
  std::string grant_id;
  std::string subject_key;
  std::string issuer_key;
  int64_t issued_revision = 0;
  std::string body;
};
// Errors: INVALID_ARGUMENT (the grant carries revoked_at: revocation lives in columns).
absl::StatusOr<GrantRow> EncodeGrant(const protocol::v1::CapabilityGrant& grant, int64_t revision);

// revoked_at_seconds, revoked_at_nanos: a Timestamp's (nanos never negative).
struct RevokedAtColumns {
  int64_t seconds = 0;
  int64_t nanos = 0;
};
RevokedAtColumns EncodeRevokedAt(absl::Time revoked_at);

// Whether the grant a revocation reads (the latest state) may be revoked.
// Errors: NOT_FOUND (none); FAILED_PRECONDITION (already revoked).
absl::Status CheckRevocable(const std::optional<StoredGrant>& existing,
                            absl::string_view namespace_id, absl::string_view grant_id);

// INSERT INTO escalations (escalation_id, namespace_id, status, recorded_revision, body): the
// record stamped with recorded_revision = `revision`.
struct EscalationRow {
  std::string escalation_id;
  std::string namespace_id;
  int64_t status = 0;
  int64_t recorded_revision = 0;
  std::string body;
};
EscalationRow EncodeEscalation(const v1::EscalationRecord& record, int64_t revision);

// Whether the escalation a resolution reads may be resolved.
// Errors: NOT_FOUND (none); FAILED_PRECONDITION (not pending).
absl::Status CheckResolvable(const std::optional<StoredEscalation>& existing,
                             absl::string_view escalation_id);

// credentials (credential_id, token_sha256, revoked, revision, body): the credential stamped
// with revision = `revision`.
struct CredentialRow {
  std::string credential_id;
  std::string token_sha256;
  bool revoked = false;
  int64_t revision = 0;
  std::string body;
};
CredentialRow EncodeCredential(const StoredCredential& credential, int64_t revision);

// Whether a write transaction at `current` may move to `revision` (AdvanceRevision).
// Errors: INVALID_ARGUMENT (not above `current`).
absl::Status CheckAdvance(int64_t revision, int64_t current);

// ---- What a write answers when its key is taken (ALREADY_EXISTS). ----
absl::Status GrantIdTaken(absl::string_view grant_id);
absl::Status EscalationIdTaken(absl::string_view escalation_id);
absl::Status CredentialTaken(absl::string_view credential_id);
// NOT_FOUND: UpdateCredential of an unknown id.
absl::Status CredentialToUpdateNotFound(absl::string_view credential_id);

}  // namespace sharedos::grantstore::storage

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_ROWS_H_
