#include "console/console_server.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/oauth/token_endpoint.h"
#include "common/server/access_policy.h"
#include "common/text/url.h"
#include "console/explain_page.h"
#include "console/pages.h"
#include "grantstore_svc/client/explain.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_requests.h"
#include "grpcpp/grpcpp.h"

namespace sharedos::console {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using common::server::Principal;
using common::server::Role;

// Pages of the queue read at most (100 escalations each).
constexpr int kMaxQueuePages = 10;
// Records one record view shows.
constexpr int kRecordLimit = 500;
// The record view's filter fields (query parameters), each at most kMaxFilterBytes.
constexpr const char* kFilterFields[] = {"namespace", "actor",   "trace", "execution", "reason",
                                         "source",    "outcome", "type",  "since",     "until"};
constexpr size_t kMaxFilterBytes = 512;
constexpr absl::Duration kSignInTokenAge = absl::Minutes(10);

// Every answer: no caching, no framing, no sniffing, nothing but this origin (no script at all).
void Send(common::http::Response& response, int status, const std::string& html) {
  response.status = status;
  response.set_header("Content-Security-Policy",
                      "default-src 'self'; script-src 'none'; form-action 'self'; "
                      "frame-ancestors 'none'; base-uri 'none'");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("X-Frame-Options", "DENY");
  // same-origin, not no-referrer: under no-referrer a browser posts forms with "Origin: null".
  response.set_header("Referrer-Policy", "same-origin");
  response.set_header("Cache-Control", "no-store");
  response.set_content(html, "text/html; charset=utf-8");
}

void Redirect(common::http::Response& response, const std::string& location) {
  Send(response, 303, "");
  response.set_header("Location", location);
}

void Refuse(common::http::Response& response, const Session* session, int status,
            absl::string_view heading, absl::string_view message) {
  Send(response, status, Page(heading, session, MessageBody(heading, message)));
}

int HttpStatus(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS:
      return 409;
    default:
      return 503;
  }
}

absl::string_view CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    default:
      return "UNAVAILABLE";
  }
}

// The namespace a queue shows by default: the first the credential names (not "*").
// An admin of every namespace: the chain and every namespace's record are its to read.
bool IsOperator(const Principal& principal) {
  return principal.role == Role::kAdmin &&
         std::find(principal.scope.namespaces.begin(), principal.scope.namespaces.end(), "*") !=
             principal.scope.namespaces.end();
}

std::string DefaultNamespace(const Principal& principal) {
  for (const std::string& name : principal.scope.namespaces) {
    if (name != "*") return name;
  }
  return "";
}

std::string Scheme(const ConsoleOptions& options) {
  return options.tls.enabled() ? "https" : "http";
}

std::string UrlHost(const std::string& host) {
  return host.find(':') != std::string::npos && host.front() != '[' ? absl::StrCat("[", host, "]")
                                                                    : host;
}

// Bind to --console_host:--console_port, HTTPS when TLS is configured, every connection, read
// and write bounded (common/http/bounded_http_server.h).
absl::StatusOr<std::unique_ptr<common::http::BoundedHttpServer>> NewHttpServer(
    const ConsoleOptions& options, std::shared_ptr<common::server::KeyPairWatcher>& key_pair) {
  absl::StatusOr<std::shared_ptr<common::server::KeyPairWatcher>> loaded =
      common::server::HttpListenerKeyPair(options.tls, options.host, "--console_host",
                                          "the console");
  if (!loaded.ok()) return loaded.status();
  key_pair = *std::move(loaded);
  common::http::BoundedHttpServer::Options http;
  http.host = options.host;
  http.port = options.port;
  http.tls = key_pair;
  http.max_connections = options.max_connections;
  http.max_connections_per_address = options.max_connections_per_address;
  http.max_body_bytes = options.form.max_body_bytes;
  http.read_timeout = absl::Seconds(10);
  http.write_timeout = absl::Seconds(10);
  http.handler_threads = options.handler_threads;
  absl::StatusOr<std::unique_ptr<common::http::BoundedHttpServer>> bound =
      common::http::BoundedHttpServer::Bind(std::move(http));
  if (!bound.ok() && bound.status().code() != absl::StatusCode::kInvalidArgument) {
    return absl::UnavailableError(
        absl::StrCat("--console_port: cannot listen on ", options.host, ":", options.port));
  }
  return bound;
}

// Whether the services' principal for the access token is the person the ID token names.
bool SameIdentity(const Principal& principal, const OidcIdentity& identity) {
  return !principal.idp_issuer.empty() && !principal.idp_subject.empty() &&
         principal.idp_issuer == identity.issuer && principal.idp_subject == identity.subject;
}

std::string Field(const std::map<std::string, std::string>& form, const std::string& name) {
  auto it = form.find(name);
  return it == form.end() ? "" : std::string(absl::StripAsciiWhitespace(it->second));
}

}  // namespace

ConsoleServer::ConsoleServer(ConsoleOptions options,
                             const common::server::Authenticator& authenticator,
                             const std::shared_ptr<grpc::Channel>& grants,
                             const std::shared_ptr<grpc::Channel>& audit,
                             const common::Clock& clock, OidcProvider* oidc)
    : options_(std::move(options)),
      authenticator_(authenticator),
      clock_(clock),
      grants_(gs::GrantStore::NewStub(grants)),
      audit_(av1::AuditLog::NewStub(audit)),
      sessions_(clock, options_.session_ttl, options_.max_sessions,
                options_.max_sessions_per_principal),
      oidc_(oidc),
      pending_(clock, options_.oidc_pending_ttl, options_.oidc_max_pending) {}

ConsoleServer::~ConsoleServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<ConsoleServer>> ConsoleServer::Start(
    ConsoleOptions options, const common::server::Authenticator& authenticator,
    std::shared_ptr<grpc::Channel> grants, std::shared_ptr<grpc::Channel> audit,
    const common::Clock& clock, OidcProvider* oidc) {
  std::unique_ptr<ConsoleServer> console(
      new ConsoleServer(std::move(options), authenticator, grants, audit, clock, oidc));
  const ConsoleOptions& o = console->options_;
  absl::StatusOr<std::unique_ptr<common::http::BoundedHttpServer>> http =
      NewHttpServer(o, console->key_pair_);
  if (!http.ok()) return http.status();
  console->http_ = *std::move(http);
  const int port = console->http_->port();
  console->port_ = port;
  for (const std::string& host :
       {std::string("127.0.0.1"), std::string("localhost"), UrlHost(o.host)}) {
    console->origins_.push_back(absl::StrCat(Scheme(o), "://", host, ":", port));
  }
  if (!o.public_origin.empty()) console->origins_.push_back(o.public_origin);
  console->Route();
  console->http_->Start();
  return console;
}

void ConsoleServer::Shutdown() {
  if (http_ != nullptr) http_->Stop();
}

std::string ConsoleServer::url() const {
  return absl::StrCat(Scheme(options_), "://", UrlHost(options_.host), ":", port_, "/");
}

void ConsoleServer::Route() {
  using Req = const common::http::Request&;
  using Res = common::http::Response&;
  http_->Route("GET", "/console.css", [](Req, Res response) {
    response.set_header("Cache-Control", "no-store");
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_content(std::string(Stylesheet()), "text/css; charset=utf-8");
  });
  http_->Route("GET", "/", [this](Req request, Res response) {
    Redirect(response, SessionOf(request).has_value() ? "/queue" : "/signin");
  });
  http_->Route("GET", "/signin", [this](Req, Res response) { SignInForm(response, 200, ""); });
  http_->Route("POST", "/signin", [this](Req request, Res response) { SignIn(request, response); });
  http_->Route("POST", "/signout",
               [this](Req request, Res response) { SignOut(request, response); });
  http_->Route("GET", "/oidc/start",
               [this](Req request, Res response) { OidcStart(request, response); });
  http_->Route("GET", "/oidc/callback",
               [this](Req request, Res response) { OidcCallback(request, response); });
  http_->Route("GET", "/queue", [this](Req request, Res response) { Queue(request, response); });
  http_->Route("POST", "/decide", [this](Req request, Res response) { Decide(request, response); });
  http_->Route("GET", "/record", [this](Req request, Res response) { Record(request, response); });
  http_->Route("GET", "/turn", [this](Req request, Res response) { Turn(request, response); });
  http_->Route("GET", "/explain",
               [this](Req request, Res response) { Explain(request, response); });
  http_->SetFallback([](Req, Res response) {
    Refuse(response, nullptr, 404, "Not here",
           "The console has no page for this request (HTTP 404).");
  });
}

std::optional<Session> ConsoleServer::SessionOf(const common::http::Request& request) {
  std::optional<std::string> id = CookieValue(request.get_header_value("Cookie"), kSessionCookie);
  if (!id.has_value() || id->empty()) return std::nullopt;
  return sessions_.Find(*id);
}

bool ConsoleServer::CrossSite(const common::http::Request& request) const {
  if (request.get_header_value("Sec-Fetch-Site") == "cross-site") return true;
  if (!request.has_header("Origin")) return false;
  const std::string origin = request.get_header_value("Origin");
  return std::find(origins_.begin(), origins_.end(), origin) == origins_.end();
}

std::unique_ptr<grpc::ClientContext> ConsoleServer::CallAs(const Session& session) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", session.secret));
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(options_.rpc_timeout));
  return context;
}

void ConsoleServer::RpcError(const Session& session, const grpc::Status& status,
                             absl::string_view call, common::http::Response& response) {
  // Revoked or rotated since sign-in (as the credentials that signed it in say): the session ends
  // with it. A service that does not know the credential (an audit_svc without
  // --grantstore_target) refuses this call only.
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
      !authenticator_.Authenticate(absl::StrCat("Bearer ", session.secret)).ok()) {
    sessions_.Remove(session.id);
    response.set_header("Set-Cookie",
                        SetCookie(kSessionCookie, "", absl::ZeroDuration(), secure()));
  }
  Refuse(response, &session, HttpStatus(status.error_code()), absl::StrCat(call, " refused"),
         absl::StrCat(CodeName(status.error_code()), ": ", status.error_message()));
}

std::optional<std::map<std::string, std::string>> ConsoleServer::CheckedForm(
    const common::http::Request& request, const Session& session,
    common::http::Response& response) {
  if (CrossSite(request)) {
    Refuse(response, &session, 403, "Refused", "origin: a cross-site request is refused");
    return std::nullopt;
  }
  absl::StatusOr<std::map<std::string, std::string>> form = ParseForm(request.body, options_.form);
  if (!form.ok()) {
    Refuse(response, &session, 400, "Bad form", form.status().message());
    return std::nullopt;
  }
  if (!TokensEqual(session.csrf, Field(*form, "csrf"))) {
    Refuse(response, &session, 403, "Refused",
           "csrf: the form's token is missing or is not this session's");
    return std::nullopt;
  }
  return *std::move(form);
}

void ConsoleServer::SignInForm(common::http::Response& response, int status,
                               absl::string_view error) {
  absl::StatusOr<std::string> token = NewToken();
  if (!token.ok()) {
    Refuse(response, nullptr, 503, "Unavailable", "no randomness for a sign-in token");
    return;
  }
  Send(response, status, SignInPage(*token, error, oidc_ != nullptr));
  response.set_header("Set-Cookie", SetCookie(kSignInCookie, *token, kSignInTokenAge, secure()));
}

void ConsoleServer::SignIn(const common::http::Request& request, common::http::Response& response) {
  absl::StatusOr<std::map<std::string, std::string>> form = ParseForm(request.body, options_.form);
  if (!form.ok()) return SignInForm(response, 400, form.status().message());
  const std::optional<std::string> cookie =
      CookieValue(request.get_header_value("Cookie"), kSignInCookie);
  if (CrossSite(request) || !cookie.has_value() || !TokensEqual(*cookie, Field(*form, "signin"))) {
    return SignInForm(response, 403, "signin: the form's token is missing or stale; try again");
  }
  const std::string secret = Field(*form, "secret");
  if (secret.empty()) return SignInForm(response, 400, "secret: required");
  absl::StatusOr<Principal> principal =
      authenticator_.Authenticate(absl::StrCat("Bearer ", secret));
  if (!principal.ok()) return SignInForm(response, 401, "secret: not a live credential");
  // Who signs in here: the access table's row (reviewers and admins).
  if (!common::server::Admit("console sign-in", *principal).ok()) {
    return SignInForm(response, 403, "secret: only reviewer and admin credentials sign in here");
  }
  absl::StatusOr<Session> session = sessions_.Create(secret, *std::move(principal));
  if (!session.ok()) return SignInForm(response, 503, session.status().message());
  Redirect(response, "/queue");
  response.set_header("Set-Cookie",
                      SetCookie(kSessionCookie, session->id, sessions_.ttl(), secure()));
  response.set_header("Set-Cookie", SetCookie(kSignInCookie, "", absl::ZeroDuration(), secure()));
}

void ConsoleServer::SignOut(const common::http::Request& request,
                            common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Redirect(response, "/signin");
  if (!CheckedForm(request, *session, response).has_value()) return;
  sessions_.Remove(session->id);
  std::string location = "/signin";
  // Signed in at the provider: sign out there too when it offers RP-Initiated Logout.
  if (oidc_ != nullptr && !session->id_token.empty()) {
    absl::StatusOr<OidcEndpoints> endpoints = oidc_->Endpoints();
    if (endpoints.ok() && !endpoints->end_session.empty()) {
      location = EndSessionUrl(endpoints->end_session, oidc_->settings().client_id,
                               session->id_token, oidc_->settings().post_logout_redirect_uri);
    }
  }
  if (location == "/signin") {
    Redirect(response, location);
  } else {
    // A page that moves on to the provider: the console's form-action 'self' forbids a redirect
    // of this form's post to another origin.
    Send(response, 200, SignedOutPage(location));
  }
  response.set_header("Set-Cookie", SetCookie(kSessionCookie, "", absl::ZeroDuration(), secure()));
}

std::string ConsoleServer::RedirectUri() const {
  return oidc_->settings().redirect_uri.empty() ? absl::StrCat(url(), "oidc/callback")
                                                : oidc_->settings().redirect_uri;
}

void ConsoleServer::SignInFailed(common::http::Response& response, int status,
                                 absl::string_view message) {
  Send(response, status, SignInFailedPage(message));
  response.set_header("Set-Cookie",
                      SetCookie(kOidcCookie, "", absl::ZeroDuration(), secure(), /*lax=*/true));
}

void ConsoleServer::OidcStart(const common::http::Request& request,
                              common::http::Response& response) {
  if (oidc_ == nullptr) {
    return Refuse(response, nullptr, 404, "Not here",
                  "This console signs in with credentials only (no --oidc_config).");
  }
  absl::StatusOr<OidcEndpoints> endpoints = oidc_->Endpoints();
  if (!endpoints.ok()) {
    return SignInFailed(
        response, 502,
        absl::StrCat("The identity provider cannot be reached: ", endpoints.status().message()));
  }
  absl::StatusOr<PendingSignIn> pending = pending_.Begin();
  if (!pending.ok()) return SignInFailed(response, 503, pending.status().message());
  AuthorizationRequest authorize;
  authorize.authorization_endpoint = endpoints->authorization;
  authorize.client_id = oidc_->settings().client_id;
  authorize.redirect_uri = RedirectUri();
  authorize.scope = oidc_->settings().scope;
  authorize.resource = oidc_->settings().resource;
  Redirect(response, AuthorizationUrl(authorize, *pending));
  response.set_header("Set-Cookie", SetCookie(kOidcCookie, pending->binding, pending_.ttl(),
                                              secure(), /*lax=*/true));
}

void ConsoleServer::OidcCallback(const common::http::Request& request,
                                 common::http::Response& response) {
  if (oidc_ == nullptr) {
    return Refuse(response, nullptr, 404, "Not here",
                  "This console signs in with credentials only (no --oidc_config).");
  }
  const std::string state = request.get_param_value("state");
  const std::string code = request.get_param_value("code");
  const std::string error = request.get_param_value("error");
  for (const auto& [name, value] : {std::pair<const char*, const std::string&>{"state", state},
                                    {"code", code},
                                    {"error", error}}) {
    if (value.size() > kMaxFilterBytes) {
      return SignInFailed(response, 400,
                          absl::StrCat(name, ": at most ", kMaxFilterBytes, " bytes"));
    }
  }
  // The state is used up by any answer, so neither it nor its verifier is ever used twice.
  const std::optional<std::string> binding =
      CookieValue(request.get_header_value("Cookie"), kOidcCookie);
  absl::StatusOr<PendingSignIn> pending = pending_.Take(state, binding.value_or(""));
  if (!pending.ok()) {
    return SignInFailed(response,
                        pending.status().code() == absl::StatusCode::kPermissionDenied ? 403 : 400,
                        pending.status().message());
  }
  if (!error.empty()) {
    std::string message =
        absl::StrCat("The identity provider answered ",
                     common::oauth::PrintableAscii(error, common::oauth::kMaxProviderErrorBytes));
    const std::string description = request.get_param_value("error_description");
    if (!description.empty()) {
      absl::StrAppend(
          &message, ": ",
          common::oauth::PrintableAscii(description, common::oauth::kMaxProviderErrorBytes));
    }
    return SignInFailed(response, 401, message);
  }
  if (code.empty()) return SignInFailed(response, 400, "code: required");
  // RFC 9207: a provider that names itself in the response must be this console's (a response
  // from another provider the browser was sent to is not exchanged here).
  if (request.has_param("iss")) {
    absl::StatusOr<OidcEndpoints> endpoints = oidc_->Endpoints();
    if (!endpoints.ok()) return SignInFailed(response, 502, endpoints.status().message());
    if (request.get_param_value("iss") != endpoints->issuer) {
      return SignInFailed(response, 401, "iss: not this console's identity provider");
    }
  }
  absl::StatusOr<OidcTokens> tokens =
      oidc_->ExchangeCode(code, pending->code_verifier, RedirectUri());
  if (!tokens.ok()) {
    return SignInFailed(response,
                        tokens.status().code() == absl::StatusCode::kPermissionDenied ? 401 : 502,
                        tokens.status().message());
  }
  absl::StatusOr<OidcIdentity> identity = oidc_->VerifyIdToken(tokens->id_token, pending->nonce);
  if (!identity.ok()) {
    return SignInFailed(response,
                        identity.status().code() == absl::StatusCode::kUnavailable ? 502 : 401,
                        absl::StrCat("The ID token is refused: ", identity.status().message()));
  }
  // The session calls the services with the access token, so who it is is what they say; it
  // must be the person the ID token names.
  absl::StatusOr<Principal> principal =
      authenticator_.Authenticate(absl::StrCat("Bearer ", tokens->access_token));
  if (!principal.ok()) {
    switch (principal.status().code()) {
      case absl::StatusCode::kPermissionDenied:  // known to the provider, no role in SharedOS
        return SignInFailed(response, 403,
                            "Your identity provider's groups give you no role in SharedOS (no "
                            "rule of the claim mapping matches): ask an operator");
      case absl::StatusCode::kUnavailable:
        return SignInFailed(response, 502, principal.status().message());
      default:
        return SignInFailed(response, 401,
                            "The identity provider's access token is not accepted by the services");
    }
  }
  if (!SameIdentity(*principal, *identity)) {
    return SignInFailed(response, 401, "The access token and the ID token name different people");
  }
  if (!common::server::Admit("console sign-in", *principal).ok()) {
    return SignInFailed(
        response, 403,
        absl::StrCat(principal->address,
                     " is neither a reviewer nor an admin here (the identity provider's claims "
                     "map to no console role)"));
  }
  absl::StatusOr<Session> session =
      sessions_.Create(tokens->access_token, *std::move(principal), tokens->id_token);
  if (!session.ok()) return SignInFailed(response, 503, session.status().message());
  Send(response, 200, SignedInPage());
  response.set_header("Set-Cookie",
                      SetCookie(kSessionCookie, session->id, sessions_.ttl(), secure()));
  response.set_header("Set-Cookie",
                      SetCookie(kOidcCookie, "", absl::ZeroDuration(), secure(), /*lax=*/true));
}

void ConsoleServer::Queue(const common::http::Request& request, common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Redirect(response, "/signin");
  std::string namespace_id =
      request.has_param("namespace")
          ? std::string(absl::StripAsciiWhitespace(request.get_param_value("namespace")))
          : DefaultNamespace(session->principal);
  if (namespace_id.size() > kMaxFilterBytes) {
    return Refuse(response, &*session, 400, "Bad request",
                  absl::StrCat("namespace: at most ", kMaxFilterBytes, " bytes"));
  }
  std::vector<gs::EscalationRecord> pending;
  if (!namespace_id.empty()) {
    gs::ListEscalationsRequest list;
    list.set_namespace_id(namespace_id);
    list.set_status(gs::ESCALATION_RECORD_STATUS_PENDING);
    for (int page = 0; page < kMaxQueuePages; ++page) {
      gs::ListEscalationsResponse listed;
      grpc::Status status = grants_->ListEscalations(CallAs(*session).get(), list, &listed);
      if (!status.ok()) return RpcError(*session, status, "ListEscalations", response);
      for (gs::EscalationRecord& record : *listed.mutable_escalations()) {
        pending.push_back(std::move(record));
      }
      if (listed.next_page_token().empty()) break;
      list.set_page_token(listed.next_page_token());
    }
  }
  std::reverse(pending.begin(), pending.end());  // the service answers oldest first
  Send(response, 200, Page("Escalations", &*session, QueueBody(*session, namespace_id, pending)));
}

void ConsoleServer::Decide(const common::http::Request& request, common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Refuse(response, nullptr, 401, "Signed out", "sign in first");
  std::optional<std::map<std::string, std::string>> form = CheckedForm(request, *session, response);
  if (!form.has_value()) return;
  const std::string decision = Field(*form, "decision");
  if (decision != "approve" && decision != "deny") {
    return Refuse(response, &*session, 400, "Bad form", "decision: approve or deny");
  }
  if (Field(*form, "id").empty())
    return Refuse(response, &*session, 400, "Bad form", "id: required");
  // The form's fields, checked as sharedosctl's `escalations approve|deny` checks its flags.
  grantstore::client::ResolveEscalationFields fields;
  fields.id = Field(*form, "id");
  fields.expires_at = Field(*form, "expires_at");
  fields.max_uses = Field(*form, "max_uses");
  // A browser sends a textarea's line breaks as CRLF; the store's notes keep LF only.
  fields.note = absl::StrReplaceAll(Field(*form, "note"), {{"\r\n", "\n"}});
  // An admin's explicit "in the reviewer's stead" (the store refuses it for a reviewer).
  fields.on_behalf = Field(*form, "on_behalf") == "true";
  absl::StatusOr<gs::ResolveEscalationRequest> resolve = grantstore::client::BuildResolveEscalation(
      fields,
      decision == "approve" ? gs::ESCALATION_DECISION_APPROVE : gs::ESCALATION_DECISION_DENY);
  if (!resolve.ok())
    return Refuse(response, &*session, 400, "Bad form", resolve.status().message());
  for (absl::string_view purpose : absl::StrSplit(Field(*form, "purposes"), ',')) {
    purpose = absl::StripAsciiWhitespace(purpose);
    if (!purpose.empty()) resolve->mutable_narrowing()->add_purposes(std::string(purpose));
  }
  gs::ResolveEscalationResponse resolved;
  grpc::Status status = grants_->ResolveEscalation(CallAs(*session).get(), *resolve, &resolved);
  if (!status.ok()) return RpcError(*session, status, "ResolveEscalation", response);
  Send(response, 200, Page("Decided", &*session, DecidedBody(resolved)));
}

void ConsoleServer::Record(const common::http::Request& request, common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Redirect(response, "/signin");
  std::map<std::string, std::string> fields;
  for (const char* name : kFilterFields) {
    const std::string value(absl::StripAsciiWhitespace(request.get_param_value(name)));
    if (value.size() > kMaxFilterBytes) {
      return Refuse(response, &*session, 400, "Bad request",
                    absl::StrCat(name, ": at most ", kMaxFilterBytes, " bytes"));
    }
    fields[name] = value;
  }
  // A credential of some namespaces reads one of them (the access table); its first by default.
  if (fields["namespace"].empty() && !IsOperator(session->principal)) {
    fields["namespace"] = DefaultNamespace(session->principal);
  }
  // The same filter sharedosctl's `audit query` builds from its flags.
  grantstore::client::AuditFilterFields filter_fields;
  filter_fields.namespace_id = fields["namespace"];
  filter_fields.actor = fields["actor"];
  filter_fields.trace = fields["trace"];
  filter_fields.execution = fields["execution"];
  filter_fields.reason = fields["reason"];
  filter_fields.source = fields["source"];
  filter_fields.outcome = fields["outcome"];
  filter_fields.type = fields["type"];
  filter_fields.since = fields["since"];
  filter_fields.until = fields["until"];
  absl::StatusOr<av1::AuditFilter> filter = grantstore::client::BuildAuditFilter(filter_fields);
  if (!filter.ok())
    return Refuse(response, &*session, 400, "Bad request", filter.status().message());
  av1::QueryRequest query;
  *query.mutable_filter() = *std::move(filter);
  query.set_limit(kRecordLimit);
  av1::QueryResponse answered;
  grpc::Status status = audit_->Query(CallAs(*session).get(), query, &answered);
  if (!status.ok()) return RpcError(*session, status, "audit Query", response);
  // The chain spans every namespace: the operator's alone to verify (its last verification).
  std::optional<av1::VerifyResponse> verify;
  if (IsOperator(session->principal)) {
    status = LastVerification(*session, verify.emplace());
    if (!status.ok()) return RpcError(*session, status, "audit Verify", response);
  }
  std::vector<av1::AuditRecord> records(answered.records().begin(), answered.records().end());
  Send(response, 200,
       Page("Record", &*session,
            RecordBody(fields, verify, records, !answered.next_page_token().empty())));
}

grpc::Status ConsoleServer::LastVerification(const Session& session, av1::VerifyResponse& verify) {
  {
    absl::MutexLock lock(&verify_mu_);
    // Fresh enough, or another page is verifying now: the last verification answers.
    if (last_verify_.has_value() &&
        (verifying_ || clock_.Now() - verified_at_ < options_.verify_interval)) {
      verify = *last_verify_;
      return grpc::Status::OK;
    }
    verifying_ = true;
  }
  av1::VerifyResponse answered;
  grpc::Status status = audit_->Verify(CallAs(session).get(), av1::VerifyRequest(), &answered);
  absl::MutexLock lock(&verify_mu_);
  verifying_ = false;
  if (!status.ok()) return status;
  last_verify_ = answered;
  verified_at_ = clock_.Now();
  verify = std::move(answered);
  return grpc::Status::OK;
}

void ConsoleServer::Turn(const common::http::Request& request, common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Redirect(response, "/signin");
  const std::string execution(absl::StripAsciiWhitespace(request.get_param_value("execution")));
  if (execution.empty() || execution.size() > kMaxFilterBytes) {
    return Refuse(response, &*session, 400, "Bad request",
                  absl::StrCat("execution: required, at most ", kMaxFilterBytes, " bytes"));
  }
  // The turn's own records (escalation.requested, turn.ended) carry its trace and its end; the
  // decisions within it carry the trace only.
  av1::QueryRequest query;
  query.mutable_filter()->set_execution_id(execution);
  // A credential of some namespaces reads the turn within the one it names (else its first).
  std::string namespace_id(absl::StripAsciiWhitespace(request.get_param_value("namespace")));
  if (namespace_id.empty() && !IsOperator(session->principal)) {
    namespace_id = DefaultNamespace(session->principal);
  }
  if (namespace_id.size() > kMaxFilterBytes) {
    return Refuse(response, &*session, 400, "Bad request",
                  absl::StrCat("namespace: at most ", kMaxFilterBytes, " bytes"));
  }
  query.mutable_filter()->set_namespace_id(namespace_id);
  query.set_limit(kRecordLimit);
  av1::QueryResponse answered;
  grpc::Status status = audit_->Query(CallAs(*session).get(), query, &answered);
  if (!status.ok()) return RpcError(*session, status, "audit Query", response);
  std::string trace;
  google::protobuf::Timestamp end;
  for (const av1::AuditRecord& record : answered.records()) {
    if (!record.has_event()) continue;
    if (trace.empty()) trace = record.event().trace_id();
    if (record.event().at().seconds() > end.seconds() ||
        (record.event().at().seconds() == end.seconds() &&
         record.event().at().nanos() > end.nanos())) {
      end = record.event().at();
    }
  }
  if (trace.empty()) {
    return Refuse(response, &*session, 404, "Not found",
                  absl::StrCat("execution: no records of turn ", execution));
  }
  // Until just after its last record ("until" is exclusive).
  if (end.nanos() == 999999999) {
    end.set_seconds(end.seconds() + 1);
    end.set_nanos(0);
  } else {
    end.set_nanos(end.nanos() + 1);
  }
  std::string location =
      absl::StrCat("/record?trace=", common::text::UrlEncode(trace),
                   "&until=", common::text::UrlEncode(grantstore::client::FormatTimestamp(end)));
  if (!namespace_id.empty())
    absl::StrAppend(&location, "&namespace=", common::text::UrlEncode(namespace_id));
  if (request.get_param_value("outcome") == "denied") absl::StrAppend(&location, "&outcome=denied");
  Redirect(response, location);
}

void ConsoleServer::Explain(const common::http::Request& request,
                            common::http::Response& response) {
  std::optional<Session> session = SessionOf(request);
  if (!session.has_value()) return Redirect(response, "/signin");
  const std::string id(absl::StripAsciiWhitespace(request.get_param_value("id")));
  if (id.size() > kMaxExplainIdBytes) {
    return Refuse(response, &*session, 400, "Bad request",
                  absl::StrCat("id: at most ", kMaxExplainIdBytes, " bytes"));
  }
  if (id.empty()) return Send(response, 200, Page("Explain", &*session, ExplainBody("", nullptr)));
  // The same reads as `sharedosctl explain`, with the signed-in credential.
  grantstore::client::ExplainClients clients{grants_.get(), audit_.get(),
                                             [this, &session] { return CallAs(*session); }};
  absl::StatusOr<grantstore::client::Explanation> explanation =
      grantstore::client::Explain(clients, id);
  if (!explanation.ok()) {
    return RpcError(*session,
                    grpc::Status(static_cast<grpc::StatusCode>(explanation.status().code()),
                                 std::string(explanation.status().message())),
                    "explain", response);
  }
  Send(response, 200, Page("Explain", &*session, ExplainBody(id, &*explanation)));
}

}  // namespace sharedos::console
