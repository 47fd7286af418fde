#include "grantstore_svc/client/grpc_credential_source.h"

#include "absl/strings/str_cat.h"
#include "common/client/bearer_call.h"
#include "common/server/service_main.h"
#include "common/status/status_macros.h"
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
    // Only the code: the caller is told the store is away, not where it is or what it said.
    return absl::UnavailableError(absl::StrCat("grantstore_svc credential lookup failed: ",
                                               absl::StatusCodeToString(response.status().code())));
  }
  return std::optional<common::server::Principal>(
      core::PrincipalFromCredential(response->credential()));
}

absl::StatusOr<std::unique_ptr<common::server::CredentialSource>> AttachGrantStoreCredentials(
    common::server::Authenticator& authenticator, const std::string& target,
    const std::string& token_file, const common::client::ChannelTls& tls) {
  if (target.empty() && token_file.empty()) return nullptr;
  ASSIGN_OR_RETURN(common::server::Upstream grantstore,
                   common::server::ReadUpstream("grantstore", target, token_file, tls));
  auto source =
      std::make_unique<GrpcCredentialSource>(grantstore.channel, std::move(grantstore.token));
  authenticator.AttachSource(source.get());
  return source;
}

}  // namespace sharedos::grantstore::client
