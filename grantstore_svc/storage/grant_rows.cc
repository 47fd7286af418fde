#include "grantstore_svc/storage/grant_rows.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/errors.h"

namespace sharedos::grantstore::storage {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;

template <typename Message>
bool Parse(absl::string_view bytes, Message& message) {
  return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

absl::StatusOr<StoredGrant> GrantFromRow(const RowReader& row, int64_t at_revision) {
  StoredGrant stored;
  if (!Parse(row.Bytes(0), stored.grant)) return capability::errors::CorruptRow("grants", "body");
  stored.issued_revision = row.Int64(1);
  if (!row.IsNull(2)) {
    const int64_t revoked_revision = row.Int64(2);
    if (revoked_revision <= at_revision) {
      stored.revoked_revision = revoked_revision;
      stored.grant.mutable_revoked_at()->set_seconds(row.Int64(3));
      stored.grant.mutable_revoked_at()->set_nanos(static_cast<int32_t>(row.Int64(4)));
    }
  }
  return stored;
}

absl::Status ParseGrantBody(const RowReader& row, pb::CapabilityGrant& grant) {
  if (!Parse(row.Bytes(0), grant)) return capability::errors::CorruptRow("grants", "body");
  return absl::OkStatus();
}

absl::StatusOr<StoredHostPolicy> HostPolicyFromRow(const RowReader& row,
                                                   absl::string_view namespace_id) {
  StoredHostPolicy stored;
  stored.revision = row.Int64(0);
  if (!Parse(row.Bytes(1), stored.policy)) {
    return capability::errors::CorruptRow("host_policies", namespace_id);
  }
  return stored;
}

absl::StatusOr<StoredEscalation> EscalationFromRow(const RowReader& row,
                                                   absl::string_view escalation_id) {
  StoredEscalation stored;
  if (!Parse(row.Bytes(0), stored.record)) {
    return capability::errors::CorruptRow("escalations", escalation_id);
  }
  if (!row.IsNull(1)) stored.resolution_fingerprint = std::string(row.Bytes(1));
  return stored;
}

absl::Status ParseListedEscalation(const RowReader& row, gs::EscalationRecord& record) {
  if (!Parse(row.Bytes(1), record))
    return capability::errors::CorruptRow("escalations", row.Bytes(0));
  return absl::OkStatus();
}

absl::StatusOr<StoredCredential> CredentialFromRow(const RowReader& row, absl::string_view key) {
  StoredCredential stored;
  if (!Parse(row.Bytes(0), stored.credential)) {
    return capability::errors::CorruptRow("credentials", key);
  }
  stored.token_sha256 = std::string(row.Bytes(1));
  return stored;
}

absl::Status ParseListedCredential(const RowReader& row, gs::Credential& credential) {
  if (!Parse(row.Bytes(1), credential)) {
    return capability::errors::CorruptRow("credentials", row.Bytes(0));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ServableRevision(int64_t current, std::optional<int64_t> at_revision) {
  if (!at_revision.has_value()) return current;
  if (*at_revision < 0 || *at_revision > current) {
    return capability::errors::RevisionNotServable(*at_revision, current);
  }
  return *at_revision;
}

absl::StatusOr<GrantRow> EncodeGrant(const pb::CapabilityGrant& grant, int64_t revision) {
  if (grant.has_revoked_at()) {
    return absl::InvalidArgumentError("InsertGrant: revoked_at must be absent");
  }
  return GrantRow{grant.namespace_id(),
                  grant.id(),
                  capability::AddressKey(grant.subject()),
                  capability::AddressKey(grant.issuer()),
                  revision,
                  grant.SerializeAsString()};
}

RevokedAtColumns EncodeRevokedAt(absl::Time revoked_at) {
  const absl::Duration since_epoch = revoked_at - absl::UnixEpoch();
  const int64_t seconds = absl::ToInt64Seconds(since_epoch);
  const int64_t nanos = absl::ToInt64Nanoseconds(since_epoch - absl::Seconds(seconds));
  // Timestamps keep non-negative nanos (floor the seconds for pre-epoch times).
  if (nanos < 0) return RevokedAtColumns{seconds - 1, nanos + 1000000000};
  return RevokedAtColumns{seconds, nanos};
}

absl::Status CheckRevocable(const std::optional<StoredGrant>& existing,
                            absl::string_view namespace_id, absl::string_view grant_id) {
  if (!existing.has_value()) return capability::errors::GrantNotFound(namespace_id, grant_id);
  if (existing->revoked_revision.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("grant \"", grant_id, "\" is already revoked"));
  }
  return absl::OkStatus();
}

EscalationRow EncodeEscalation(const gs::EscalationRecord& record, int64_t revision) {
  gs::EscalationRecord stamped = record;
  stamped.set_recorded_revision(revision);
  return EscalationRow{stamped.escalation_id(), stamped.namespace_id(), stamped.status(), revision,
                       stamped.SerializeAsString()};
}

absl::Status CheckResolvable(const std::optional<StoredEscalation>& existing,
                             absl::string_view escalation_id) {
  if (!existing.has_value()) return capability::errors::EscalationNotFound(escalation_id);
  if (existing->record.status() != gs::ESCALATION_RECORD_STATUS_PENDING) {
    return capability::errors::EscalationAlreadyResolved(
        escalation_id, gs::EscalationRecordStatus_Name(existing->record.status()));
  }
  return absl::OkStatus();
}

CredentialRow EncodeCredential(const StoredCredential& credential, int64_t revision) {
  gs::Credential stamped = credential.credential;
  stamped.set_revision(revision);
  return CredentialRow{stamped.credential_id(), credential.token_sha256, stamped.has_revoked_at(),
                       revision, stamped.SerializeAsString()};
}

absl::Status CheckAdvance(int64_t revision, int64_t current) {
  if (revision <= current) {
    return absl::InvalidArgumentError(
        absl::StrCat("AdvanceRevision: ", revision, " is not above ", current));
  }
  return absl::OkStatus();
}

absl::Status GrantIdTaken(absl::string_view grant_id) {
  return absl::AlreadyExistsError(
      absl::StrCat("grant id \"", grant_id, "\" is taken in its namespace"));
}

absl::Status EscalationIdTaken(absl::string_view escalation_id) {
  return absl::AlreadyExistsError(absl::StrCat("escalation id \"", escalation_id, "\" is taken"));
}

absl::Status CredentialTaken(absl::string_view credential_id) {
  return absl::AlreadyExistsError(
      absl::StrCat("credential id \"", credential_id, "\" or its digest is taken"));
}

absl::Status CredentialToUpdateNotFound(absl::string_view credential_id) {
  return absl::NotFoundError(absl::StrCat("credential \"", credential_id, "\" not found"));
}

}  // namespace sharedos::grantstore::storage
