// GrantStoreCore's credential methods (grant_store_core.h): the control plane of who may call.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "common/crypto/sha256.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "grantstore_svc/core/control_plane_events.h"
#include "grantstore_svc/core/credentials.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/core/page_token.h"
#include "grantstore_svc/core/request_validation.h"

namespace sharedos::grantstore::core {
namespace {

using storage::StoredCredential;
using storage::WriteTransaction;

bool AdministersAll(const Caller& caller) {
  return caller.role == common::server::Role::kAdmin &&
         absl::c_linear_search(caller.scope.namespaces, "*");
}

// Whether `caller` may issue a credential of this role and scope. Errors: PERMISSION_DENIED.
absl::Status CheckMayIssue(const Caller& caller, const v1::IssueCredentialRequest& request) {
  if (AdministersAll(caller)) return absl::OkStatus();
  if (request.role() != v1::CREDENTIAL_ROLE_HOST &&
      request.role() != v1::CREDENTIAL_ROLE_REVIEWER) {
    return absl::PermissionDeniedError(
        "role: only an admin of every namespace issues admin or service credentials");
  }
  for (const std::string& namespace_id : request.scope().namespaces()) {
    if (namespace_id == "*" || !caller.Administers(namespace_id)) {
      return capability::errors::NamespaceNotAdministered(namespace_id);
    }
  }
  return absl::OkStatus();
}

// The caller's credential `id` for a change, or NOT_FOUND (also for one it may not manage, so
// that an admin learns nothing of other namespaces' credentials).
absl::StatusOr<StoredCredential> ManagedCredential(const Caller& caller, WriteTransaction& txn,
                                                   const std::string& id) {
  ASSIGN_OR_RETURN(std::optional<StoredCredential> stored, txn.GetCredential(id));
  if (!stored.has_value() || !Manages(caller, stored->credential)) {
    return capability::errors::CredentialNotFound(id);
  }
  return *std::move(stored);
}

}  // namespace

absl::StatusOr<v1::Credential> GrantStoreCore::CommitCredential(
    const Caller& caller, std::unique_ptr<WriteTransaction> txn, StoredCredential credential,
    const std::string& change, bool insert) {
  const int64_t revision = txn->revision();
  credential.credential.set_revision(revision);
  const absl::Status written =
      insert ? txn->InsertCredential(credential) : txn->UpdateCredential(credential);
  if (absl::IsAlreadyExists(written)) {
    return capability::errors::CredentialIdInUse(credential.credential.credential_id());
  }
  RETURN_IF_ERROR(written);
  const MutationContext context{ActorOf(caller), clock_.Now(), revision};
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn),
                                 {CredentialChangedEvent(context, credential.credential, change)}));
  return std::move(credential.credential);
}

absl::Status GrantStoreCore::CheckReviewerIdentityFromIdp(
    v1::CredentialRole role, const protocol::v1::Address& principal) const {
  if (!options_.identity_provider_configured || options_.allow_reviewer_credentials_with_idp ||
      role != v1::CREDENTIAL_ROLE_REVIEWER || !principal.has_human_user_id()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "principal: ", capability::AddressKey(principal),
      " is a human reviewer, whose identity comes from the identity provider (--oidc_config); "
      "a SharedOS reviewer credential for a human is issued or rotated only with the grant "
      "store's --allow_reviewer_credentials_with_idp (break-glass)"));
}

absl::StatusOr<v1::IssueCredentialResponse> GrantStoreCore::IssueCredential(
    const Caller& caller, v1::IssueCredentialRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateIssueCredentialRequest(&request));
  RETURN_IF_ERROR(CheckMayIssue(caller, request));
  RETURN_IF_ERROR(CheckReviewerIdentityFromIdp(request.role(), request.principal()));
  if (request.credential_id().empty()) {
    request.set_credential_id(absl::StrCat("cred-", options_.new_id()));
  }
  ASSIGN_OR_RETURN(std::string secret, NewCredentialSecret());
  ASSIGN_OR_RETURN(const google::protobuf::Timestamp now, common::ToProtoTimestamp(clock_.Now()));
  StoredCredential stored;
  v1::Credential& credential = stored.credential;
  credential.set_credential_id(request.credential_id());
  *credential.mutable_principal() = request.principal();
  credential.set_role(request.role());
  if (request.has_scope()) *credential.mutable_scope() = request.scope();
  *credential.mutable_issued_at() = now;
  *credential.mutable_secret_set_at() = now;
  *credential.mutable_issued_by() = ActorOf(caller);
  *credential.mutable_secret_set_by() = ActorOf(caller);
  stored.token_sha256 = common::Sha256Hex(secret);
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(std::optional<StoredCredential> existing,
                   txn->GetCredential(request.credential_id()));
  if (existing.has_value()) return capability::errors::CredentialIdInUse(request.credential_id());
  v1::IssueCredentialResponse response;
  ASSIGN_OR_RETURN(*response.mutable_credential(),
                   CommitCredential(caller, std::move(txn), std::move(stored), "issued", true));
  response.set_secret(std::move(secret));
  return response;
}

absl::StatusOr<v1::ListCredentialsResponse> GrantStoreCore::ListCredentials(
    const Caller& caller, v1::ListCredentialsRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateListCredentialsRequest(&request));
  v1::ListCredentialsRequest filter = request;
  filter.clear_page_token();
  filter.clear_page_size();
  storage::CredentialQuery query;
  query.include_revoked = request.include_revoked();
  if (!request.page_token().empty()) {
    ASSIGN_OR_RETURN(query.after_credential_id,
                     DecodePageToken(request.page_token(), "credentials", filter));
  }
  const int page_size = request.page_size() == 0 ? kDefaultPageSize : request.page_size();
  // Scan the store in batches until the page holds `page_size` credentials the caller manages
  // (and one more proves another page): the page token then names the last credential answered,
  // never one the caller may not see — an id of another namespace's credential never leaks.
  v1::ListCredentialsResponse response;
  bool more = false;
  query.limit = std::max(page_size + 1, 100);
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<v1::Credential> scanned, store_.ListCredentials(query));
    for (v1::Credential& credential : scanned) {
      if (!Manages(caller, credential)) continue;
      if (response.credentials_size() == page_size) {
        more = true;
        break;
      }
      *response.add_credentials() = std::move(credential);
    }
    if (more || static_cast<int>(scanned.size()) < query.limit) break;
    query.after_credential_id = scanned.back().credential_id();
  }
  if (more) {
    response.set_next_page_token(
        EncodePageToken("credentials", filter,
                        response.credentials(response.credentials_size() - 1).credential_id()));
  }
  return response;
}

absl::StatusOr<v1::RevokeCredentialResponse> GrantStoreCore::RevokeCredential(
    const Caller& caller, v1::RevokeCredentialRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateRevokeCredentialRequest(&request));
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(StoredCredential stored,
                   ManagedCredential(caller, *txn, request.credential_id()));
  v1::RevokeCredentialResponse response;
  if (stored.credential.has_revoked_at()) {
    *response.mutable_credential() = std::move(stored.credential);
    return response;
  }
  ASSIGN_OR_RETURN(*stored.credential.mutable_revoked_at(), common::ToProtoTimestamp(clock_.Now()));
  ASSIGN_OR_RETURN(*response.mutable_credential(),
                   CommitCredential(caller, std::move(txn), std::move(stored), "revoked", false));
  return response;
}

absl::StatusOr<v1::RotateCredentialResponse> GrantStoreCore::RotateCredential(
    const Caller& caller, v1::RotateCredentialRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateRotateCredentialRequest(&request));
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  // The credential the caller authenticated with is its own to rotate (its secret is then known
  // to it alone); any other only an admin that manages it.
  const bool own = !caller.from_file && caller.name == request.credential_id();
  StoredCredential stored;
  if (own) {
    ASSIGN_OR_RETURN(std::optional<StoredCredential> found,
                     txn->GetCredential(request.credential_id()));
    if (!found.has_value()) return capability::errors::CredentialNotFound(request.credential_id());
    stored = *std::move(found);
  } else {
    if (caller.role != common::server::Role::kAdmin) {
      return capability::errors::CredentialNotFound(request.credential_id());
    }
    ASSIGN_OR_RETURN(stored, ManagedCredential(caller, *txn, request.credential_id()));
    // A human's secret is the human's: an admin who set a new one in place could act in its name
    // and lock it out. Revoke it and issue a new one instead — both recorded (ADR 0014, T3).
    if (stored.credential.principal().has_human_user_id()) {
      return absl::PermissionDeniedError(
          absl::StrCat("credential_id: ", request.credential_id(), " belongs to ",
                       capability::AddressKey(stored.credential.principal()),
                       "; only that human rotates it — revoke it and issue a new one instead"));
    }
  }
  if (stored.credential.has_revoked_at()) {
    return capability::errors::CredentialRevoked(request.credential_id());
  }
  RETURN_IF_ERROR(
      CheckReviewerIdentityFromIdp(stored.credential.role(), stored.credential.principal()));
  *stored.credential.mutable_secret_set_by() = ActorOf(caller);
  ASSIGN_OR_RETURN(std::string secret, NewCredentialSecret());
  stored.token_sha256 = common::Sha256Hex(secret);
  ASSIGN_OR_RETURN(*stored.credential.mutable_secret_set_at(),
                   common::ToProtoTimestamp(clock_.Now()));
  v1::RotateCredentialResponse response;
  ASSIGN_OR_RETURN(*response.mutable_credential(),
                   CommitCredential(caller, std::move(txn), std::move(stored), "rotated", false));
  response.set_secret(std::move(secret));
  return response;
}

absl::StatusOr<v1::AuthenticateCredentialResponse> GrantStoreCore::AuthenticateCredential(
    v1::AuthenticateCredentialRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateAuthenticateCredentialRequest(&request));
  ASSIGN_OR_RETURN(std::optional<StoredCredential> found,
                   store_.FindCredentialByDigest(request.token_sha256()));
  if (!found.has_value() || found->credential.has_revoked_at()) {
    return absl::NotFoundError("no live credential with that digest");
  }
  v1::AuthenticateCredentialResponse response;
  *response.mutable_credential() = std::move(found->credential);
  return response;
}

}  // namespace sharedos::grantstore::core
