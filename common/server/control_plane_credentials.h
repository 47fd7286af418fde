// Credentials issued through the control plane, for a main whose service sits below the grant
// store's plane (audit_svc): the main asks for them here, and the library that reaches the grant
// store and defines its flags (grantstore_svc/client:grantstore_flags), linked by that main,
// provides them. The main composes the grant store's client by linking it, without including a
// higher plane (ADR 0022).

#ifndef SHAREDOS_COMMON_SERVER_CONTROL_PLANE_CREDENTIALS_H_
#define SHAREDOS_COMMON_SERVER_CONTROL_PLANE_CREDENTIALS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/client/channel.h"
#include "common/server/auth.h"

namespace sharedos::common::server {

// Attaches to `authenticator` the source of control-plane credentials the process's flags
// describe, reached over `tls`; returns it (kept by the caller as long as the authenticator
// serves), or null when the flags ask for none.
using ControlPlaneCredentials = absl::StatusOr<std::unique_ptr<CredentialSource>> (*)(
    Authenticator& authenticator, const client::ChannelTls& tls);

// Called once, by the providing library's static initialiser (hence the bool). Not thread-safe:
// only before main() runs.
bool ProvideControlPlaneCredentials(ControlPlaneCredentials attach);

// The provided source, attached to `authenticator`: null when the flags ask for none, and when
// the main links no provider (it then has no --grantstore_target either). Errors: the
// provider's (a flag naming an unreadable file, a target that cannot be dialled).
absl::StatusOr<std::unique_ptr<CredentialSource>> AttachControlPlaneCredentials(
    Authenticator& authenticator, const client::ChannelTls& tls);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_CONTROL_PLANE_CREDENTIALS_H_
