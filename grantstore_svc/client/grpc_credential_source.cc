#include "grantstore_svc/client/grpc_credential_source.h"

#include "absl/strings/str_cat.h"
#include "common/client/bearer_call.h"
#include "grantstore_svc/core/credentials.h"

namespace sharedos::grantstore::client {

absl::StatusOr<std::optional<common::server::Principal>> GrpcCredentialSource::FindByDigest(
    const std::string& token_sha256_hex) const {
  v1::AuthenticateCredentialRequest request;
  request.set_token_sha256(token_sha256_hex);
  absl::StatusOr<v1::AuthenticateCredentialResponse> response =
      common::BearerCall<v1::AuthenticateCredentialResponse>(
          authorization_, kDeadline,
          [&](grpc::ClientContext* context, v1::AuthenticateCredentialResponse* out) {
            return stub_->AuthenticateCredential(context, request, out);
          });
  if (absl::IsNotFound(response.status())) return std::optional<common::server::Principal>();
  if (!response.ok()) {
    return absl::UnavailableError(
        absl::StrCat("grantstore_svc credential lookup: ", response.status().ToString()));
  }
  return std::optional<common::server::Principal>(
      core::PrincipalFromCredential(response->credential()));
}

}  // namespace sharedos::grantstore::client
