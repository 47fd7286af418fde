// GrantStoreCore::AcceptRestore and the anchor gate (docs/adr/0021).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "grantstore_svc/core/control_plane_events.h"
#include "grantstore_svc/core/credentials.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/core/record_anchor.h"
#include "grantstore_svc/core/request_validation.h"

namespace sharedos::grantstore::core {
namespace {

namespace av1 = ::sharedos::audit::v1;
namespace pb = ::sharedos::protocol::v1;

// The most revocations of each kind one acceptance re-applies (a transaction holds them all).
constexpr int kMaxReapplied = 10000;

std::string StringField(const av1::ControlPlaneEvent& event, const std::string& key) {
  const auto& fields = event.metadata().fields();
  auto it = fields.find(key);
  return it == fields.end() ? "" : it->second.string_value();
}

void MarkReapplied(av1::ControlPlaneEvent& event, int64_t from_revision) {
  (*event.mutable_metadata()->mutable_fields())["reappliedFromRevision"].set_number_value(
      static_cast<double>(from_revision));
}

std::string Notice(int64_t restored, int64_t log_revision, int64_t grants, int64_t credentials) {
  return absl::StrCat(
      "The restored grant store was at revision ", restored,
      "; the audit log held revisions up to ", log_revision, ". Re-applied from the log: ", grants,
      " grant revocation(s) and ", credentials,
      " credential revocation(s) (a credential rotated since the copy is revoked: its new secret "
      "is not in the log; issue it anew). Lost with the restore and not in the log: grants issued "
      "or derived, host policies installed, escalations recorded or resolved and credentials "
      "issued after revision ",
      restored,
      " — the log shows each of them (sharedosctl audit query --type=grant.issued ...); redo "
      "those still wanted. Usage counts are the restored copy's: uses consumed since it was taken "
      "are not given back to the counters, so a grant with max_uses may be used that many times "
      "again; revoke and re-issue those that matter.");
}

bool AdministersAll(const Caller& caller) {
  return caller.role == common::server::Role::kAdmin &&
         absl::c_linear_search(caller.scope.namespaces, "*");
}

}  // namespace

absl::Status GrantStoreCore::Serving() const {
  return options_.anchor == nullptr ? absl::OkStatus() : options_.anchor->Serving();
}

absl::StatusOr<v1::AcceptRestoreResponse> GrantStoreCore::AcceptRestore(
    const Caller& caller, v1::AcceptRestoreRequest request) {
  RETURN_IF_ERROR(ValidateAcceptRestoreRequest(&request));
  if (!AdministersAll(caller)) {
    return absl::PermissionDeniedError(
        "only the operator (an admin of every namespace, \"*\") accepts a restore");
  }
  RecordAnchor* anchor = options_.anchor;
  if (anchor == nullptr) {
    return absl::FailedPreconditionError(
        "this grant store is not compared with an audit log; there is no restore to accept");
  }
  // Compare anew: the log may have moved, or another replica may have accepted already.
  const absl::Status compared = anchor->Check();
  v1::AcceptRestoreResponse response;
  if (anchor->state() == AnchorState::kServing) {
    response.set_restored_revision(anchor->store_revision());
    response.set_notice("The grant store is not behind the audit log; nothing to accept.");
    return response;
  }
  if (anchor->state() != AnchorState::kBehind) return compared;
  const std::optional<LoggedRecord> first = anchor->first_beyond();
  if (!first.has_value()) return compared;
  const int64_t restored = anchor->store_revision();
  const ControlPlaneLog& log = anchor->log();
  ASSIGN_OR_RETURN(const int64_t log_revision, log.HighestRevision(first->revision));
  ASSIGN_OR_RETURN(const std::vector<LoggedRecord> grant_revocations,
                   log.RecordsAfter(av1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED, *first, restored,
                                    kMaxReapplied));
  ASSIGN_OR_RETURN(const std::vector<LoggedRecord> credential_changes,
                   log.RecordsAfter(av1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED, *first,
                                    restored, kMaxReapplied));

  ASSIGN_OR_RETURN(std::unique_ptr<storage::WriteTransaction> txn, store_.BeginWrite());
  if (txn->revision() != restored + 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the store moved from revision ", restored, " to ", txn->revision() - 1,
                     " while the restore was being accepted; run the command again"));
  }
  RETURN_IF_ERROR(txn->AdvanceRevision(log_revision + 1));
  const absl::Time now = clock_.Now();
  ASSIGN_OR_RETURN(const google::protobuf::Timestamp now_proto, common::ToProtoTimestamp(now));
  const MutationContext context{ActorOf(caller), now, txn->revision()};
  std::vector<av1::ControlPlaneEvent> events;

  absl::flat_hash_set<std::string> done;
  for (const LoggedRecord& record : grant_revocations) {
    const std::string& namespace_id = record.event.namespace_id();
    const std::string& grant_id = record.event.grant_id();
    const std::string key = absl::StrCat(namespace_id, "/", grant_id);
    if (grant_id.empty() || !done.insert(key).second) continue;
    ASSIGN_OR_RETURN(std::optional<storage::StoredGrant> stored,
                     txn->GetGrant(namespace_id, grant_id));
    // Not in the restored copy (issued after it) or revoked there already: nothing to revoke.
    if (!stored.has_value() || stored->revoked_revision.has_value()) continue;
    RETURN_IF_ERROR(txn->RevokeGrant(namespace_id, grant_id, now));
    pb::CapabilityGrant revoked = std::move(stored->grant);
    *revoked.mutable_revoked_at() = now_proto;
    av1::ControlPlaneEvent event = GrantRevokedEvent(context, revoked);
    MarkReapplied(event, record.revision);
    events.push_back(std::move(event));
    response.add_reapplied_grant_revocations(key);
  }

  done.clear();
  for (const LoggedRecord& record : credential_changes) {
    const std::string change = StringField(record.event, "change");
    const std::string credential_id = StringField(record.event, "credentialId");
    if ((change != "revoked" && change != "rotated") || credential_id.empty() ||
        !done.insert(credential_id).second) {
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<storage::StoredCredential> stored,
                     txn->GetCredential(credential_id));
    if (!stored.has_value() || stored->credential.has_revoked_at()) continue;
    *stored->credential.mutable_revoked_at() = now_proto;
    stored->credential.set_revision(txn->revision());
    RETURN_IF_ERROR(txn->UpdateCredential(*stored));
    av1::ControlPlaneEvent event = CredentialChangedEvent(context, stored->credential, "revoked");
    MarkReapplied(event, record.revision);
    events.push_back(std::move(event));
    response.add_revoked_credentials(credential_id);
  }

  RestoreAcceptance acceptance;
  acceptance.restored_revision = restored;
  acceptance.log_revision = log_revision;
  acceptance.reason_bytes = static_cast<int64_t>(request.reason().size());
  acceptance.reapplied_grant_revocations = response.reapplied_grant_revocations_size();
  acceptance.revoked_credentials = response.revoked_credentials_size();
  events.push_back(RestoreAcceptedEvent(context, acceptance));

  response.set_accepted(true);
  response.set_restored_revision(restored);
  response.set_log_revision(log_revision);
  response.set_revision(txn->revision());
  response.set_notice(Notice(restored, log_revision, response.reapplied_grant_revocations_size(),
                             response.revoked_credentials_size()));
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), std::move(events)));
  anchor->MarkAccepted();
  return response;
}

}  // namespace sharedos::grantstore::core
