#include "grantstore_svc/client/grantstore_flags.h"

#include "absl/flags/flag.h"
#include "common/server/control_plane_credentials.h"
#include "grantstore_svc/client/grpc_credential_source.h"

ABSL_FLAG(std::string, grantstore_target, "",
          sharedos::common::server::SharedFlagHelp(
              "grantstore_target",
              "grantstore_svc address (host:port). Optional: set, credentials issued through the "
              "control plane are honoured beside --credentials (looked up there on every call); "
              "unset, only --credentials."));
ABSL_FLAG(std::string, grantstore_token_file, "",
          sharedos::common::server::SharedFlagHelp(
              "grantstore_token_file",
              "File with this service's grantstore_svc token (first line). Required with "
              "--grantstore_target."));

namespace sharedos::grantstore::client {

std::string GrantStoreTargetFromFlags() { return absl::GetFlag(FLAGS_grantstore_target); }

std::string GrantStoreTokenFileFromFlags() { return absl::GetFlag(FLAGS_grantstore_token_file); }

absl::StatusOr<common::server::Upstream> GrantStoreUpstreamFromFlags(
    const common::client::ChannelTls& tls) {
  return common::server::ReadUpstream("grantstore", GrantStoreTargetFromFlags(),
                                      GrantStoreTokenFileFromFlags(), tls);
}

absl::StatusOr<std::unique_ptr<common::server::CredentialSource>>
AttachGrantStoreCredentialsFromFlags(common::server::Authenticator& authenticator,
                                     const common::client::ChannelTls& tls) {
  return AttachGrantStoreCredentials(authenticator, GrantStoreTargetFromFlags(),
                                     GrantStoreTokenFileFromFlags(), tls);
}

namespace {

// Provides the control-plane credentials to a main that links this library (audit_svc's).
[[maybe_unused]] const bool provided =
    common::server::ProvideControlPlaneCredentials(&AttachGrantStoreCredentialsFromFlags);

}  // namespace
}  // namespace sharedos::grantstore::client
