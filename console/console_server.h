// The reviewer console: a small web application, served on its own port (HTTPS with the
// listener's TLS files, plaintext HTTP on loopback only), in which a person signs in with a
// reviewer or admin credential, reads the escalations addressed to them as sentences, approves
// (narrowing expiry, uses, purposes) or denies them, and follows the audit record.
//
// It holds no authority of its own: every page calls the existing RPCs — GrantStore's
// ListEscalations and ResolveEscalation, AuditLog's Query and Verify — with the signed-in
// credential as the caller's bearer token, so the services decide exactly as they do for
// sharedosctl (a reviewer sees only its own escalations; the audit log answers admins only).
// Sessions expire (ConsoleOptions::session_ttl); the cookie holds a random session id only
// (HttpOnly, SameSite=Strict, Secure over HTTPS); every state-changing form carries the session's
// CSRF token (the sign-in form a double-submitted one) and a cross-site Origin is refused.
// Forms are bounded (FormLimits); a bad field is a 400 naming it. Secrets are never logged.
// With an OpenID provider (Start's `oidc`), a person may instead sign in there (authorization code
// flow with PKCE, state and nonce: console/oidc_sign_in.h); the session then carries the
// provider's access token as its bearer, so the services see the person the provider vouches for
// (its iss and sub), and every failure is a sign-in error page, never a session.
#ifndef SHAREDOS_CONSOLE_CONSOLE_SERVER_H_
#define SHAREDOS_CONSOLE_CONSOLE_SERVER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/bounded_http_server.h"
#include "common/server/auth.h"
#include "common/server/tls.h"
#include "common/time/clock.h"
#include "console/http.h"
#include "console/oidc_client.h"
#include "console/oidc_sign_in.h"
#include "console/session.h"
#include "grpcpp/channel.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::console {

struct ConsoleOptions {
  // Plaintext only on a loopback host; with tls.cert_file and tls.key_file, HTTPS on any.
  std::string host = "127.0.0.1";
  // 0 picks a free port.
  int port = 0;
  // Where browsers reach the console when that is not where it listens (a published port, an
  // ingress): "https://console.example.com" or "https://127.0.0.1:9443". A form posted from
  // this origin is not cross-site; neither is one from 127.0.0.1, localhost or `host` at the
  // bound port. Empty: none.
  std::string public_origin;
  common::server::ServerTls tls;
  absl::Duration session_ttl = absl::Minutes(30);
  size_t max_sessions = 256;
  // Live sessions of one principal (the credential's name; --console_max_sessions_per_principal):
  // a new sign-in beyond ends that principal's oldest session.
  size_t max_sessions_per_principal = 4;
  // The record page shows the chain's last verification, run at most this often (a full Verify
  // per page view would make every view as costly as the whole log).
  absl::Duration verify_interval = absl::Minutes(1);
  // Connections at once, in total and per client address (closed at accept beyond), and the
  // threads rendering pages (common/http/bounded_http_server.h).
  size_t max_connections = 256;
  size_t max_connections_per_address = 32;
  int handler_threads = 4;
  absl::Duration rpc_timeout = absl::Seconds(10);
  FormLimits form;
  // Sign-ins begun at the OpenID provider and not yet returned: at most this many at once
  // (--console_oidc_max_pending), each for at most oidc_pending_ttl.
  size_t oidc_max_pending = 64;
  absl::Duration oidc_pending_ttl = absl::Minutes(10);
};

class ConsoleServer {
 public:
  // Binds and serves on a thread of its own. `authenticator` says who a pasted secret is (only
  // admin and reviewer credentials sign in); `grants` reaches GrantStore and `audit` AuditLog (the
  // same channel in sharedosd). `oidc` (borrowed; may be null) is the OpenID provider people sign
  // in at. Borrowed references must outlive the server. Errors:
  // INVALID_ARGUMENT (plaintext off loopback, naming --console_host); those of
  // KeyPairWatcher::Load; UNAVAILABLE (cannot bind, naming
  // --console_port).
  static absl::StatusOr<std::unique_ptr<ConsoleServer>> Start(
      ConsoleOptions options, const common::server::Authenticator& authenticator,
      std::shared_ptr<grpc::Channel> grants, std::shared_ptr<grpc::Channel> audit,
      const common::Clock& clock, OidcProvider* oidc = nullptr);
  ~ConsoleServer();
  ConsoleServer(const ConsoleServer&) = delete;
  ConsoleServer& operator=(const ConsoleServer&) = delete;

  // Stops accepting and waits for the serving thread. Idempotent.
  void Shutdown();
  int port() const { return port_; }
  // "<http|https>://<host>:<port>/".
  std::string url() const;

 private:
  ConsoleServer(ConsoleOptions options, const common::server::Authenticator& authenticator,
                const std::shared_ptr<grpc::Channel>& grants,
                const std::shared_ptr<grpc::Channel>& audit, const common::Clock& clock,
                OidcProvider* oidc);
  void Route();
  bool secure() const { return options_.tls.enabled(); }

  // The request's live session, or null.
  std::optional<Session> SessionOf(const common::http::Request& request);
  // A POST from another site (Origin or Sec-Fetch-Site), refused before anything else.
  bool CrossSite(const common::http::Request& request) const;
  std::unique_ptr<grpc::ClientContext> CallAs(const Session& session) const;
  // The chain's last verification (ConsoleOptions::verify_interval), run with `session`'s
  // credential when it is stale. Errors: Verify's.
  grpc::Status LastVerification(const Session& session, audit::v1::VerifyResponse& verify)
      ABSL_LOCKS_EXCLUDED(verify_mu_);

  void SignInForm(common::http::Response& response, int status, absl::string_view error);
  void SignIn(const common::http::Request& request, common::http::Response& response);
  void SignOut(const common::http::Request& request, common::http::Response& response);
  // GET /oidc/start: a pending sign-in, its cookie, and a redirect to the provider.
  void OidcStart(const common::http::Request& request, common::http::Response& response);
  // GET /oidc/callback: the provider's answer; a session or a sign-in error page.
  void OidcCallback(const common::http::Request& request, common::http::Response& response);
  void SignInFailed(common::http::Response& response, int status, absl::string_view message);
  // The provider's redirect back to /oidc/callback (configured, else this console's URL).
  std::string RedirectUri() const;
  void Queue(const common::http::Request& request, common::http::Response& response);
  void Decide(const common::http::Request& request, common::http::Response& response);
  void Record(const common::http::Request& request, common::http::Response& response);
  // "Why was this refused?" (/explain?id=…): console/explain_page.h.
  void Explain(const common::http::Request& request, common::http::Response& response);
  // A turn by its execution id: redirects to the record of its trace up to its end (and only its
  // refusals with outcome=denied).
  void Turn(const common::http::Request& request, common::http::Response& response);
  // The session's form (CSRF-checked) or a refusal already written to `response`.
  std::optional<std::map<std::string, std::string>> CheckedForm(
      const common::http::Request& request, const Session& session,
      common::http::Response& response);
  // A gRPC refusal as a page: 400/401/403/404/409/503 with the service's message.
  void RpcError(const Session& session, const grpc::Status& status, absl::string_view call,
                common::http::Response& response);

  const ConsoleOptions options_;
  const common::server::Authenticator& authenticator_;
  const common::Clock& clock_;
  std::unique_ptr<grantstore::v1::GrantStore::Stub> grants_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
  SessionStore sessions_;
  OidcProvider* const oidc_;
  PendingSignIns pending_;
  absl::Mutex verify_mu_;
  std::optional<audit::v1::VerifyResponse> last_verify_ ABSL_GUARDED_BY(verify_mu_);
  absl::Time verified_at_ ABSL_GUARDED_BY(verify_mu_);
  bool verifying_ ABSL_GUARDED_BY(verify_mu_) = false;
  std::shared_ptr<common::server::KeyPairWatcher> key_pair_;
  std::unique_ptr<common::http::BoundedHttpServer> http_;
  std::vector<std::string> origins_;
  int port_ = 0;
};

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_CONSOLE_SERVER_H_
