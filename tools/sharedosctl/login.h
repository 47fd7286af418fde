// `sharedosctl login`: a token from the organisation's identity provider through the OAuth 2
// device authorization grant (RFC 8628). sharedosctl asks the provider's device authorization
// endpoint for a code, prints the verification URI and the user code for the person to approve in
// any browser, polls the token endpoint (honouring `interval`, `slow_down` and `expires_in`) and
// keeps the access token in a file only its owner can read (LoginTokenPath), which later commands
// use when no --token_file is given.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_LOGIN_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_LOGIN_H_

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/oauth/token_endpoint.h"
#include "common/time/clock.h"

namespace sharedos::sharedosctl {

// RFC 8628 3.2, bounded: expires_in at most kMaxDeviceCodeLifetime, interval within
// [1 s, kMaxPollInterval] (default 5 s).
struct DeviceAuthorization {
  std::string device_code;
  std::string user_code;
  std::string verification_uri;
  // With the user code in it (optional).
  std::string verification_uri_complete;
  absl::Duration expires_in;
  absl::Duration interval;
};
inline constexpr absl::Duration kMaxDeviceCodeLifetime = absl::Minutes(30);
inline constexpr absl::Duration kMaxPollInterval = absl::Minutes(1);

// Errors: UNAVAILABLE naming the missing or malformed member (the provider answered something
// that is not a device authorization).
absl::StatusOr<DeviceAuthorization> ParseDeviceAuthorization(const nlohmann::json& answer);

// How the poller reaches the token endpoint and waits (injected: tests run without waiting).
struct DevicePolling {
  // POSTs these fields to the token endpoint.
  std::function<absl::StatusOr<common::oauth::HttpAnswer>(
      const std::map<std::string, std::string>& fields)>
      post;
  std::function<void(absl::Duration)> sleep;
  const common::Clock* clock = nullptr;
};

// Polls the token endpoint (grant_type urn:ietf:params:oauth:grant-type:device_code) every
// `interval` until the person approves: authorization_pending waits on, slow_down adds 5 s to the
// interval (RFC 8628 3.5). Returns the access token. Errors: PERMISSION_DENIED (access_denied, or
// another refusal, naming the provider's error); DEADLINE_EXCEEDED (expired_token, or expires_in
// passed: run login again); UNAVAILABLE (the provider cannot be reached, or answered no
// access_token).
absl::StatusOr<std::string> PollForToken(const DeviceAuthorization& authorization,
                                         absl::string_view client_id, const DevicePolling& polling);

// Where `login` keeps the token: $SHAREDOS_CONFIG_DIR/token when that variable is set, else
// $XDG_CONFIG_HOME/sharedos/token, else $HOME/.config/sharedos/token. Errors:
// FAILED_PRECONDITION (none of these variables is set).
absl::StatusOr<std::string> LoginTokenPath();

// Writes `token` to `path` readable by its owner alone: the directory is created 0700 (its
// parents 0700 when missing) and must be a directory of this user open to nobody else; the file
// is written 0600 beside it and renamed into place. Errors: FAILED_PRECONDITION naming the path
// and the fix (a directory open to group/others or owned by another user, a symbolic link);
// INTERNAL (a write failed).
absl::Status StoreLoginToken(const std::string& path, absl::string_view token);

// The login token file when it exists (the token later commands use without --token_file).
// Errors: FAILED_PRECONDITION when it exists but is open to group/others or another user's
// (a token that others could read is refused, naming the fix).
absl::StatusOr<std::optional<std::string>> ExistingLoginTokenFile();

struct LoginOptions {
  std::string issuer;
  std::string client_id;
  std::string scope = "openid";
  // RFC 8707: the API the access token is for (the services' audience).
  std::string resource;
  // CA for the provider's https (empty: the system's).
  std::string ca_file;
  bool allow_loopback_http = false;
  absl::Duration timeout = absl::Seconds(10);
};

// The whole command: discovery, the device authorization, the instructions on `out`, the poll,
// the token stored at LoginTokenPath (its path printed). Returns the exit code; errors on `err`.
int RunLogin(const LoginOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_LOGIN_H_
