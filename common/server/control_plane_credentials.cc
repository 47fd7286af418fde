#include "common/server/control_plane_credentials.h"

namespace sharedos::common::server {
namespace {

// Set during static initialisation, read after: no lock.
ControlPlaneCredentials provided = nullptr;

}  // namespace

bool ProvideControlPlaneCredentials(ControlPlaneCredentials attach) {
  provided = attach;
  return true;
}

absl::StatusOr<std::unique_ptr<CredentialSource>> AttachControlPlaneCredentials(
    Authenticator& authenticator, const client::ChannelTls& tls) {
  if (provided == nullptr) return nullptr;
  return provided(authenticator, tls);
}

}  // namespace sharedos::common::server
