// The reviewer console's sign-in sessions: a random id (the cookie's value), a CSRF token and
// the signed-in credential's secret (or, signed in through the OpenID provider, its access token),
// kept in memory only, each expiring a fixed time after sign-in. The secret never leaves the
// process: the browser holds the session id alone, and the console sends the secret as the caller's
// own bearer credential on each RPC (it has no authority of its own). Thread-safe.
#ifndef SHAREDOS_CONSOLE_SESSION_H_
#define SHAREDOS_CONSOLE_SESSION_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/server/auth.h"
#include "common/time/clock.h"

namespace sharedos::console {

struct Session {
  // 256 random bits, base64url: the session cookie's value.
  std::string id;
  // 256 random bits, base64url: the hidden field every state-changing form carries.
  std::string csrf;
  // The bearer secret pasted at sign-in (sent as "authorization: Bearer <secret>").
  std::string secret;
  // Who signed in (never the secret): name, address, role, scope.
  common::server::Principal principal;
  // Signed in through the OpenID provider: its ID token (the end-session request's
  // id_token_hint); empty for a credential's secret.
  std::string id_token;
  absl::Time expires_at;
};

class SessionStore {
 public:
  // Sessions live `ttl` from sign-in; at most `max_sessions` at once, and at most
  // `max_per_principal` of one principal (its credential's name).
  SessionStore(const common::Clock& clock, absl::Duration ttl, size_t max_sessions,
               size_t max_per_principal = 4)
      : clock_(clock),
        ttl_(ttl),
        max_sessions_(max_sessions),
        max_per_principal_(max_per_principal) {}

  // A new session. Expired sessions are dropped first; a principal at max_per_principal loses
  // its oldest session (so one principal never holds more, and never all of them).
  // Errors: RESOURCE_EXHAUSTED (max_sessions live sessions, naming
  // --console_max_sessions); UNAVAILABLE (no randomness).
  absl::StatusOr<Session> Create(std::string secret, common::server::Principal principal,
                                 std::string id_token = "") ABSL_LOCKS_EXCLUDED(mu_);

  // The live session with this id; nullopt when unknown or expired (an expired one is removed).
  std::optional<Session> Find(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);

  // Ends a session (sign-out); unknown ids are ignored.
  void Remove(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration ttl() const { return ttl_; }

 private:
  void DropExpired(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const common::Clock& clock_;
  const absl::Duration ttl_;
  const size_t max_sessions_;
  const size_t max_per_principal_;
  mutable absl::Mutex mu_;
  std::map<std::string, Session, std::less<>> sessions_ ABSL_GUARDED_BY(mu_);
};

// A fresh 256-bit token, base64url (session ids, CSRF tokens). Errors: UNAVAILABLE.
absl::StatusOr<std::string> NewToken();

// Whether `presented` equals `expected`, in time independent of where they differ; false when
// either is empty.
bool TokensEqual(absl::string_view expected, absl::string_view presented);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_SESSION_H_
