// ConsoleServer over real HTTP (httplib::Client) against recording fakes of GrantStore and
// AuditLog on an in-process gRPC server: who may sign in, what the session cookie says, that every
// RPC carries the signed-in credential (the console has no authority of its own), CSRF and
// origin refusals before any RPC, bounded forms, and sessions that expire.
#include "console/console_server.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/testing/test_certificates.h"

namespace sharedos::console {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kReviewer[] = "sos_alice-reviewer-secret";
constexpr char kAdmin[] = "sos_operator-admin-secret";
constexpr char kHost[] = "sos_product-host-secret";

std::string CredentialsJson() {
  using common::server::TokenDigestHex;
  return absl::StrCat(
      R"({"credentials": [{"name": "alice", "role": "reviewer", "principal": "human:user-alice",)",
      R"( "token_sha256": ")", TokenDigestHex(kReviewer),
      R"(", "scope": {"namespaces": ["world-demo"]}},)",
      R"({"name": "ops", "role": "admin", "token_sha256": ")", TokenDigestHex(kAdmin), R"("},)",
      R"({"name": "host", "role": "host", "token_sha256": ")", TokenDigestHex(kHost),
      R"(", "scope": {"namespaces": ["world-demo"], "owners": ["*"]}}]})");
}

std::string Authorization(const grpc::ServerContext& context) {
  auto it = context.client_metadata().find("authorization");
  return it == context.client_metadata().end() ? ""
                                               : std::string(it->second.data(), it->second.size());
}

// Answers one pending escalation; records each call's authorization and request.
class FakeGrantStore : public gs::GrantStore::Service {
 public:
  grpc::Status ListEscalations(grpc::ServerContext* context,
                               const gs::ListEscalationsRequest* request,
                               gs::ListEscalationsResponse* response) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(Authorization(*context));
    lists_.push_back(*request);
    google::protobuf::TextFormat::ParseFromString(R"pb(
                                                    escalations {
                                                      escalation_id: "esc-1"
                                                      namespace_id: "world-demo"
                                                      execution_id: "exec-1"
                                                      status: ESCALATION_RECORD_STATUS_PENDING
                                                      escalation {
                                                        reason: "it must write"
                                                        reviewer { human_user_id: "user-alice" }
                                                      }
                                                    })pb",
                                                  response);
    return grpc::Status::OK;
  }
  grpc::Status ResolveEscalation(grpc::ServerContext* context,
                                 const gs::ResolveEscalationRequest* request,
                                 gs::ResolveEscalationResponse* response) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(Authorization(*context));
    resolves_.push_back(*request);
    if (request->narrowing().has_max_uses() && request->narrowing().max_uses() > 5) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "narrowing.max_uses: more than the requested max_uses (would widen)");
    }
    response->mutable_escalation()->set_escalation_id(request->escalation_id());
    response->mutable_escalation()->set_note(request->note());  // as the store keeps it
    if (request->decision() == gs::ESCALATION_DECISION_DENY) {
      response->mutable_escalation()->set_status(gs::ESCALATION_RECORD_STATUS_DENIED);
      return grpc::Status::OK;
    }
    response->mutable_escalation()->set_status(gs::ESCALATION_RECORD_STATUS_APPROVED);
    response->mutable_grant()->set_id("grant-7");
    return grpc::Status::OK;
  }
  std::vector<std::string> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  std::vector<gs::ResolveEscalationRequest> resolves() {
    absl::MutexLock lock(&mu_);
    return resolves_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<gs::ListEscalationsRequest> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<gs::ResolveEscalationRequest> resolves_ ABSL_GUARDED_BY(mu_);
};

// Admins only, as the real audit log.
class FakeAuditLog : public av1::AuditLog::Service {
 public:
  grpc::Status Query(grpc::ServerContext* context, const av1::QueryRequest* request,
                     av1::QueryResponse* response) override {
    if (Authorization(*context) != absl::StrCat("Bearer ", kAdmin)) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "credential of role reviewer may not call this method");
    }
    absl::MutexLock lock(&mu_);
    filters_.push_back(request->filter());
    return grpc::Status::OK;
  }
  grpc::Status Verify(grpc::ServerContext*, const av1::VerifyRequest*,
                      av1::VerifyResponse* response) override {
    response->set_ok(true);
    response->set_checked(3);
    return grpc::Status::OK;
  }
  std::vector<av1::AuditFilter> filters() {
    absl::MutexLock lock(&mu_);
    return filters_;
  }

 private:
  absl::Mutex mu_;
  std::vector<av1::AuditFilter> filters_ ABSL_GUARDED_BY(mu_);
};

class ConsoleServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = common::server::Authenticator::FromJson(CredentialsJson());
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    grpc::ServerBuilder builder;
    builder.RegisterService(&grants_);
    builder.RegisterService(&audit_);
    grpc_ = builder.BuildAndStart();
    ConsoleOptions options;
    options.session_ttl = absl::Minutes(30);
    std::shared_ptr<grpc::Channel> channel = grpc_->InProcessChannel(grpc::ChannelArguments());
    auto console = ConsoleServer::Start(options, *authenticator_, channel, channel, clock_);
    ASSERT_TRUE(console.ok()) << console.status();
    console_ = *std::move(console);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", console_->port());
  }
  void TearDown() override {
    if (console_) console_->Shutdown();
    if (grpc_) grpc_->Shutdown();
  }

  // The sos_signin cookie and the form's token (the same value).
  std::string SignInToken() {
    httplib::Result page = http_->Get("/signin");
    EXPECT_TRUE(page && page->status == 200);
    const std::string cookie = page->get_header_value("Set-Cookie");
    return cookie.substr(std::string("sos_signin=").size(), cookie.find(';') - 11);
  }
  httplib::Result PostForm(const std::string& path, const std::string& body,
                           const std::string& cookie, httplib::Headers headers = {}) {
    headers.emplace("Cookie", cookie);
    return http_->Post(path.c_str(), headers, body, "application/x-www-form-urlencoded");
  }
  httplib::Result SignInAs(const std::string& secret) {
    const std::string token = SignInToken();
    return PostForm("/signin", absl::StrCat("signin=", token, "&secret=", secret),
                    absl::StrCat("sos_signin=", token));
  }
  // A signed-in session's cookie header value, and its CSRF token (read from the queue).
  std::pair<std::string, std::string> Session(const std::string& secret) {
    httplib::Result signed_in = SignInAs(secret);
    EXPECT_TRUE(signed_in && signed_in->status == 303) << (signed_in ? signed_in->body : "");
    std::string set_cookie;
    for (const auto& [name, value] : signed_in->headers) {
      if (name == "Set-Cookie" && value.rfind("sos_session=", 0) == 0) set_cookie = value;
    }
    const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
    httplib::Result queue = http_->Get("/queue", {{"Cookie", cookie}});
    const std::string marker = "name=\"csrf\" value=\"";
    const size_t at = queue->body.find(marker) + marker.size();
    return {cookie, queue->body.substr(at, queue->body.find('"', at) - at)};
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  std::unique_ptr<common::server::Authenticator> authenticator_;
  FakeGrantStore grants_;
  FakeAuditLog audit_;
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<ConsoleServer> console_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(ConsoleServerTest, AReviewerSignsInWithAnHttpOnlyStrictSessionCookie) {
  httplib::Result signed_in = SignInAs(kReviewer);
  ASSERT_TRUE(signed_in);
  EXPECT_EQ(signed_in->status, 303);
  EXPECT_EQ(signed_in->get_header_value("Location"), "/queue");
  std::vector<std::string> cookies;
  for (const auto& [name, value] : signed_in->headers) {
    if (name == "Set-Cookie") cookies.push_back(value);
  }
  ASSERT_FALSE(cookies.empty());
  EXPECT_THAT(cookies[0], HasSubstr("sos_session="));
  EXPECT_THAT(cookies[0], HasSubstr("; Max-Age=1800; HttpOnly; SameSite=Strict"));
  EXPECT_THAT(cookies[0], Not(HasSubstr("Secure")));  // plain HTTP on loopback
  for (const std::string& cookie : cookies) EXPECT_THAT(cookie, Not(HasSubstr("alice-reviewer")));
}

TEST_F(ConsoleServerTest, HostAndUnknownCredentialsAndAMissingSignInTokenAreRefused) {
  httplib::Result host = SignInAs(kHost);
  EXPECT_EQ(host->status, 403);
  EXPECT_THAT(host->body, HasSubstr("secret: only reviewer and admin credentials sign in here"));
  httplib::Result unknown = SignInAs("sos_nobody");
  EXPECT_EQ(unknown->status, 401);
  EXPECT_THAT(unknown->body, HasSubstr("secret: not a live credential"));
  // A sign-in posted without the double-submitted token (login CSRF).
  httplib::Result forged = PostForm("/signin", absl::StrCat("secret=", kReviewer), "");
  EXPECT_EQ(forged->status, 403);
  EXPECT_THAT(forged->body, HasSubstr("signin: the form&#39;s token is missing or stale"));
  EXPECT_THAT(SignInAs("").value().body, HasSubstr("secret: required"));
}

TEST_F(ConsoleServerTest, TheQueueIsListedWithTheSignedInCredentialNotTheConsoles) {
  auto [cookie, csrf] = Session(kReviewer);
  httplib::Result queue = http_->Get("/queue", {{"Cookie", cookie}});
  EXPECT_EQ(queue->status, 200);
  EXPECT_THAT(queue->body, HasSubstr("asked in turn exec-1 because it must write"));
  EXPECT_EQ(queue->get_header_value("Content-Security-Policy").rfind("default-src 'self'", 0), 0u);
  EXPECT_THAT(grants_.calls(),
              ElementsAre(absl::StrCat("Bearer ", kReviewer), absl::StrCat("Bearer ", kReviewer)));
}

TEST_F(ConsoleServerTest, ADecisionWithoutTheCsrfTokenOrFromAnotherOriginNeverReachesTheStore) {
  auto [cookie, csrf] = Session(kReviewer);
  httplib::Result missing = PostForm("/decide", "id=esc-1&decision=approve", cookie);
  EXPECT_EQ(missing->status, 403);
  EXPECT_THAT(missing->body, HasSubstr("csrf: the form&#39;s token is missing"));
  httplib::Result wrong = PostForm("/decide", "csrf=not-it&id=esc-1&decision=approve", cookie);
  EXPECT_EQ(wrong->status, 403);
  httplib::Result cross =
      PostForm("/decide", absl::StrCat("csrf=", csrf, "&id=esc-1&decision=approve"), cookie,
               {{"Origin", "https://attacker.example"}});
  EXPECT_EQ(cross->status, 403);
  EXPECT_THAT(cross->body, HasSubstr("origin: a cross-site request is refused"));
  EXPECT_THAT(grants_.resolves(), IsEmpty());
}

TEST_F(ConsoleServerTest, AnApprovalSendsExactlyTheNarrowingAsTheSignedInReviewer) {
  auto [cookie, csrf] = Session(kReviewer);
  httplib::Result approved =
      PostForm("/decide",
               absl::StrCat("csrf=", csrf,
                            "&id=esc-1&decision=approve&max_uses=1&purposes=keep+notes%2C+audit"
                            "&expires_at=2027-01-01T00%3A00%3A00Z"),
               cookie);
  ASSERT_EQ(approved->status, 200) << approved->body;
  EXPECT_THAT(approved->body, HasSubstr("Issued grant <code>grant-7</code>"));
  ASSERT_EQ(grants_.resolves().size(), 1u);
  const gs::ResolveEscalationRequest sent = grants_.resolves()[0];
  EXPECT_EQ(sent.escalation_id(), "esc-1");
  EXPECT_EQ(sent.decision(), gs::ESCALATION_DECISION_APPROVE);
  EXPECT_EQ(sent.narrowing().max_uses(), 1);
  EXPECT_THAT(sent.narrowing().purposes(), ElementsAre("keep notes", "audit"));
  EXPECT_EQ(sent.narrowing().expires_at().seconds(), 1798761600);
  EXPECT_FALSE(sent.has_reviewer());  // the decider is the authenticated principal
  EXPECT_EQ(grants_.calls().back(), absl::StrCat("Bearer ", kReviewer));
}

TEST_F(ConsoleServerTest, AnAdminDecidesOnTheReviewersBehalfOnlyWhenItSaysSo) {
  auto [cookie, csrf] = Session(kAdmin);
  ASSERT_EQ(
      PostForm("/decide", absl::StrCat("csrf=", csrf, "&id=esc-1&decision=deny"), cookie)->status,
      200);
  ASSERT_EQ(PostForm("/decide",
                     absl::StrCat("csrf=", csrf, "&id=esc-1&decision=deny&on_behalf=true"), cookie)
                ->status,
            200);
  ASSERT_EQ(grants_.resolves().size(), 2u);
  EXPECT_FALSE(grants_.resolves()[0].on_behalf_of_reviewer());
  EXPECT_TRUE(grants_.resolves()[1].on_behalf_of_reviewer());
  EXPECT_EQ(grants_.resolves()[1].decision(), gs::ESCALATION_DECISION_DENY);
  EXPECT_EQ(grants_.calls().back(), absl::StrCat("Bearer ", kAdmin));
}

TEST_F(ConsoleServerTest, ADenialSendsTheNoteWithLfLineBreaksAndTheResultShowsItEscaped) {
  auto [cookie, csrf] = Session(kReviewer);
  // As a browser submits a textarea: CRLF line breaks, percent-encoded.
  httplib::Result denied = PostForm(
      "/decide",
      absl::StrCat("csrf=", csrf,
                   "&id=esc-1&decision=deny&note=Not+now%2E%0D%0AAsk+%3Cb%3EBob%3C%2Fb%3E"),
      cookie);
  ASSERT_EQ(denied->status, 200) << denied->body;
  ASSERT_EQ(grants_.resolves().size(), 1u);
  EXPECT_EQ(grants_.resolves()[0].decision(), gs::ESCALATION_DECISION_DENY);
  EXPECT_EQ(grants_.resolves()[0].note(), "Not now.\nAsk <b>Bob</b>");
  EXPECT_THAT(denied->body, HasSubstr("Escalation esc-1 is denied."));
  EXPECT_THAT(denied->body, HasSubstr("id=\"note\" aria-labelledby=\"note-label\">Not now.\nAsk "
                                      "&lt;b&gt;Bob&lt;/b&gt;</blockquote>"));
  EXPECT_THAT(denied->body, Not(HasSubstr("<b>Bob")));
  // An approval carries one too; none given, none sent and none shown.
  ASSERT_EQ(
      PostForm("/decide", absl::StrCat("csrf=", csrf, "&id=esc-1&decision=approve&note=once+only"),
               cookie)
          ->status,
      200);
  httplib::Result plain =
      PostForm("/decide", absl::StrCat("csrf=", csrf, "&id=esc-1&decision=deny&note="), cookie);
  ASSERT_EQ(plain->status, 200);
  ASSERT_EQ(grants_.resolves().size(), 3u);
  EXPECT_EQ(grants_.resolves()[1].note(), "once only");
  EXPECT_EQ(grants_.resolves()[2].note(), "");
  EXPECT_THAT(plain->body, Not(HasSubstr("With the note")));
  // Over the form's bound for a note: refused naming it, before any call.
  EXPECT_THAT(
      PostForm("/decide",
               absl::StrCat("csrf=", csrf, "&id=esc-1&decision=deny&note=", std::string(5000, 'x')),
               cookie)
          ->body,
      HasSubstr("note: at most 4096 bytes"));
  EXPECT_EQ(grants_.resolves().size(), 3u);
}

TEST_F(ConsoleServerTest, AWideningRefusedByTheStoreIsShownAs400NamingTheField) {
  auto [cookie, csrf] = Session(kReviewer);
  httplib::Result widened = PostForm(
      "/decide", absl::StrCat("csrf=", csrf, "&id=esc-1&decision=approve&max_uses=9"), cookie);
  EXPECT_EQ(widened->status, 400);
  EXPECT_THAT(widened->body,
              HasSubstr("INVALID_ARGUMENT: narrowing.max_uses: more than the requested"));
}

TEST_F(ConsoleServerTest, BadFieldsAreRefused400NamingTheFieldBeforeAnyCall) {
  auto [cookie, csrf] = Session(kReviewer);
  // Init-captures: C++17 does not let a lambda capture a structured binding itself (gcc allows
  // it, clang does not).
  auto post = [this, &csrf = csrf, &cookie = cookie](const std::string& rest) {
    return PostForm("/decide", absl::StrCat("csrf=", csrf, rest), cookie);
  };
  EXPECT_THAT(post("&id=esc-1&decision=maybe")->body, HasSubstr("decision: approve or deny"));
  EXPECT_THAT(post("&decision=approve")->body, HasSubstr("id: required"));
  EXPECT_THAT(post("&id=esc-1&decision=approve&expires_at=soon")->body,
              HasSubstr("timestamp &quot;soon&quot; is not RFC 3339"));
  EXPECT_THAT(post("&id=esc-1&decision=approve&id=esc-2")->body, HasSubstr("given more than once"));
  EXPECT_EQ(post(absl::StrCat("&id=", std::string(3000, 'x')))->status, 400);
  EXPECT_THAT(grants_.resolves(), IsEmpty());
}

TEST_F(ConsoleServerTest, TheRecordIsTheAuditLogsAnswerToTheSignedInCredential) {
  auto [reviewer, unused] = Session(kReviewer);
  httplib::Result refused = http_->Get("/record?namespace=world-demo", {{"Cookie", reviewer}});
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(refused->body, HasSubstr("PERMISSION_DENIED"));
  auto [admin, csrf] = Session(kAdmin);
  httplib::Result record = http_->Get(
      "/record?namespace=world-demo&actor=agent%3Aagent-assistant&source=kernel&reason=no_matching_"
      "grant",
      {{"Cookie", admin}});
  ASSERT_EQ(record->status, 200) << record->body;
  EXPECT_THAT(record->body, HasSubstr("Chain: ok: 3 records verify"));
  ASSERT_EQ(audit_.filters().size(), 1u);
  const av1::AuditFilter filter = audit_.filters()[0];
  EXPECT_EQ(filter.namespace_id(), "world-demo");
  EXPECT_EQ(filter.actor().agent_id(), "agent-assistant");
  EXPECT_EQ(filter.source(), protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(filter.reason(), "no_matching_grant");
  EXPECT_THAT(http_->Get("/record?source=nowhere", {{"Cookie", admin}})->body, HasSubstr("source"));
}

TEST_F(ConsoleServerTest, ASessionExpiresAndSignOutEndsIt) {
  auto [cookie, csrf] = Session(kReviewer);
  clock_.AdvanceTime(absl::Minutes(30));
  httplib::Result expired = http_->Get("/queue", {{"Cookie", cookie}});
  EXPECT_EQ(expired->status, 303);
  EXPECT_EQ(expired->get_header_value("Location"), "/signin");

  auto [again, again_csrf] = Session(kReviewer);
  EXPECT_EQ(PostForm("/signout", "csrf=wrong", again)->status, 403);
  EXPECT_EQ(http_->Get("/queue", {{"Cookie", again}})->status, 200);
  EXPECT_EQ(PostForm("/signout", absl::StrCat("csrf=", again_csrf), again)->status, 303);
  EXPECT_EQ(http_->Get("/queue", {{"Cookie", again}})->status, 303);
}

// With the listener's TLS files the console serves HTTPS, on any host, and its cookies are Secure.
TEST(ConsoleServerStartTest, OverTlsTheConsoleServesHttpsWithSecureCookies) {
  auto ca = testing::TestCertificateAuthority::Create(std::getenv("TEST_TMPDIR"), "console");
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto pair = (*ca)->IssueLoopback("console-server");
  ASSERT_TRUE(pair.ok()) << pair.status();
  auto authenticator = common::server::Authenticator::FromJson(CredentialsJson());
  ASSERT_TRUE(authenticator.ok());
  ConsoleOptions options;
  options.tls.cert_file = pair->cert_file;
  options.tls.key_file = pair->key_file;
  auto unused = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  auto console =
      ConsoleServer::Start(options, **authenticator, unused, unused, common::RealClock());
  ASSERT_TRUE(console.ok()) << console.status();
  EXPECT_EQ((*console)->url().rfind("https://127.0.0.1:", 0), 0u);
  httplib::SSLClient https("127.0.0.1", (*console)->port());
  https.set_ca_cert_path((*ca)->ca_file().c_str());
  https.enable_server_certificate_verification(true);
  httplib::Result page = https.Get("/signin");
  ASSERT_TRUE(page) << httplib::to_string(page.error());
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->get_header_value("Set-Cookie"),
              HasSubstr("; HttpOnly; SameSite=Strict; Secure"));
  // Plain HTTP to the TLS port gets nothing.
  httplib::Client plain("127.0.0.1", (*console)->port());
  plain.set_connection_timeout(2);
  plain.set_read_timeout(2);
  httplib::Result refused = plain.Get("/signin");
  EXPECT_TRUE(!refused || refused->status != 200);
  (*console)->Shutdown();
}

TEST(ConsoleServerStartTest, PlaintextOffLoopbackIsRefusedNamingTheFlag) {
  auto authenticator = common::server::Authenticator::FromJson(CredentialsJson());
  ASSERT_TRUE(authenticator.ok());
  ConsoleOptions options;
  options.host = "0.0.0.0";
  auto console = ConsoleServer::Start(
      options, **authenticator,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()),
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()), common::RealClock());
  EXPECT_EQ(console.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(console.status().message(),
              HasSubstr("--console_host: the console serves plaintext HTTP only on loopback"));
}

// --- Sign-in at the OpenID provider (the flow's refusals; the whole flow against a real
// provider is //tests/oidc:console_oidc_test) -------------------------------------------------

// Answers as scripted; records what the console sent.
class FakeOidcProvider : public OidcProvider {
 public:
  FakeOidcProvider() {
    settings_.client_id = "sharedos-console";
    settings_.resource = "sharedos-grpc";
  }
  const OidcClientSettings& settings() const override { return settings_; }
  absl::StatusOr<OidcEndpoints> Endpoints() override {
    absl::MutexLock lock(&mu_);
    if (!reachable_) return absl::UnavailableError("cannot reach the identity provider");
    return OidcEndpoints{"http://idp.invalid", "http://idp.invalid/auth",
                         "http://idp.invalid/token", "http://idp.invalid/session/end"};
  }
  absl::StatusOr<OidcTokens> ExchangeCode(absl::string_view code, absl::string_view code_verifier,
                                          absl::string_view redirect_uri) override {
    absl::MutexLock lock(&mu_);
    exchanged_.push_back(
        {std::string(code), std::string(code_verifier), std::string(redirect_uri)});
    if (!exchange_.ok()) return exchange_.status();
    return *exchange_;
  }
  absl::StatusOr<OidcIdentity> VerifyIdToken(absl::string_view id_token,
                                             absl::string_view nonce) override {
    absl::MutexLock lock(&mu_);
    nonces_.push_back(std::string(nonce));
    return identity_;
  }

  // The script: whether the provider answers, and what the code exchange and the ID token check
  // return. The console calls from its HTTP workers, the test sets and reads from its own thread.
  void SetReachable(bool reachable) {
    absl::MutexLock lock(&mu_);
    reachable_ = reachable;
  }
  void SetExchange(absl::StatusOr<OidcTokens> exchange) {
    absl::MutexLock lock(&mu_);
    exchange_ = std::move(exchange);
  }
  void SetIdentity(absl::StatusOr<OidcIdentity> identity) {
    absl::MutexLock lock(&mu_);
    identity_ = std::move(identity);
  }
  // What the console sent: each exchange's {code, verifier, redirect_uri}, each checked nonce.
  std::vector<std::vector<std::string>> exchanged() {
    absl::MutexLock lock(&mu_);
    return exchanged_;
  }
  std::vector<std::string> nonces() {
    absl::MutexLock lock(&mu_);
    return nonces_;
  }

 private:
  OidcClientSettings settings_;
  absl::Mutex mu_;
  bool reachable_ ABSL_GUARDED_BY(mu_) = true;
  absl::StatusOr<OidcTokens> exchange_ ABSL_GUARDED_BY(mu_) = OidcTokens{"id.token.x", kReviewer};
  absl::StatusOr<OidcIdentity> identity_ ABSL_GUARDED_BY(mu_) = OidcIdentity{"http://idp.invalid",
                                                                             "alice-sub"};
  std::vector<std::vector<std::string>> exchanged_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> nonces_ ABSL_GUARDED_BY(mu_);
};

// The services' view of the provider's access tokens (as common/oidc's verifier answers).
class FakeBearerVerifier : public common::server::BearerTokenVerifier {
 public:
  absl::StatusOr<common::server::Principal> VerifyBearer(absl::string_view token) const override {
    if (token != kAliceAccessToken) return absl::UnauthenticatedError("invalid bearer token");
    common::server::Principal principal;
    principal.name = "idp:alice";
    principal.address = "human:alice";
    principal.role = common::server::Role::kReviewer;
    principal.scope.namespaces = {"world-demo"};
    principal.idp_issuer = "http://idp.invalid";
    principal.idp_subject = "alice-sub";
    return principal;
  }
  static constexpr char kAliceAccessToken[] = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln";
};

class ConsoleOidcTest : public ConsoleServerTest {
 protected:
  void SetUp() override {
    auto authenticator = common::server::Authenticator::FromJson(CredentialsJson());
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    authenticator_->AttachTokenVerifier(&bearer_);
    grpc::ServerBuilder builder;
    builder.RegisterService(&grants_);
    builder.RegisterService(&audit_);
    grpc_ = builder.BuildAndStart();
    ConsoleOptions options;
    options.oidc_max_pending = 3;
    std::shared_ptr<grpc::Channel> channel = grpc_->InProcessChannel(grpc::ChannelArguments());
    auto console =
        ConsoleServer::Start(options, *authenticator_, channel, channel, clock_, &provider_);
    ASSERT_TRUE(console.ok()) << console.status();
    console_ = *std::move(console);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", console_->port());
  }

  // A begun sign-in: its state (from the redirect) and the browser's binding cookie.
  std::pair<std::string, std::string> Begin() {
    httplib::Result started = http_->Get("/oidc/start");
    EXPECT_TRUE(started && started->status == 303);
    const std::string location = started->get_header_value("Location");
    const size_t at = location.find("&state=") + 7;
    const std::string cookie = started->get_header_value("Set-Cookie");
    return {location.substr(at, location.find('&', at) - at), cookie.substr(0, cookie.find(';'))};
  }
  static bool OpensASession(const httplib::Result& answer) {
    for (const auto& [name, value] : answer->headers) {
      if (name == "Set-Cookie" && value.rfind("sos_session=", 0) == 0 &&
          value.find("Max-Age=0") == std::string::npos) {
        return true;
      }
    }
    return false;
  }

  FakeBearerVerifier bearer_;
  FakeOidcProvider provider_;
};

TEST_F(ConsoleOidcTest, TheProvidersPersonGetsASessionThatCallsAsHerAccessToken) {
  provider_.SetExchange(OidcTokens{"id.token.x", FakeBearerVerifier::kAliceAccessToken});
  auto [state, binding] = Begin();
  httplib::Result signed_in = http_->Get(
      absl::StrCat("/oidc/callback?state=", state, "&code=c&iss=http%3A%2F%2Fidp.invalid"),
      {{"Cookie", binding}});
  ASSERT_EQ(signed_in->status, 200) << signed_in->body;
  ASSERT_TRUE(OpensASession(signed_in));
  EXPECT_THAT(signed_in->body, HasSubstr("http-equiv=\"refresh\" content=\"0;url=/queue\""));
  ASSERT_EQ(provider_.nonces().size(), 1u);
  EXPECT_EQ(provider_.nonces()[0].size(), 43u) << "the sign-in's nonce reached the ID token check";
  std::string cookie;
  for (const auto& [name, value] : signed_in->headers) {
    if (name == "Set-Cookie" && value.rfind("sos_session=", 0) == 0) {
      cookie = value.substr(0, value.find(';'));
      EXPECT_THAT(value, HasSubstr("SameSite=Strict"));
    }
    EXPECT_THAT(value, Not(HasSubstr(FakeBearerVerifier::kAliceAccessToken)));
  }
  httplib::Result queue = http_->Get("/queue", {{"Cookie", cookie}});
  EXPECT_EQ(queue->status, 200);
  EXPECT_THAT(queue->body, HasSubstr("Signed in as human:alice (reviewer)"));
  EXPECT_THAT(grants_.calls(),
              ElementsAre(absl::StrCat("Bearer ", FakeBearerVerifier::kAliceAccessToken)))
      << "the services are called with her access token, not the console's";
  // Sign-out ends the session and goes to the provider's end session with the ID token hint.
  const std::string marker = "name=\"csrf\" value=\"";
  const size_t at = queue->body.find(marker) + marker.size();
  const std::string csrf = queue->body.substr(at, queue->body.find('"', at) - at);
  httplib::Result out = PostForm("/signout", absl::StrCat("csrf=", csrf), cookie);
  EXPECT_EQ(out->status, 200);
  EXPECT_THAT(out->body,
              HasSubstr("url=http://idp.invalid/session/end?client_id=sharedos-console&amp;"
                        "id_token_hint=id.token.x"));
  EXPECT_EQ(http_->Get("/queue", {{"Cookie", cookie}})->status, 303) << "the session is over";
}

TEST_F(ConsoleServerTest, WithoutAnIdentityProviderThereIsNoOidcSignIn) {
  EXPECT_EQ(http_->Get("/oidc/start")->status, 404);
  EXPECT_EQ(http_->Get("/oidc/callback?state=s&code=c")->status, 404);
  EXPECT_THAT(http_->Get("/signin")->body, Not(HasSubstr("/oidc/start")));
}

TEST_F(ConsoleOidcTest, StartRedirectsWithPkceStateNonceAndALaxBindingCookie) {
  EXPECT_THAT(http_->Get("/signin")->body, HasSubstr("href=\"/oidc/start\""));
  EXPECT_THAT(http_->Get("/signin")->body, HasSubstr("Credential secret")) << "break-glass stays";
  httplib::Result started = http_->Get("/oidc/start");
  ASSERT_EQ(started->status, 303);
  const std::string location = started->get_header_value("Location");
  EXPECT_EQ(
      location.rfind("http://idp.invalid/auth?response_type=code&client_id=sharedos-console", 0),
      0u)
      << location;
  // (httplib's client hands the Location header back percent-decoded.)
  EXPECT_THAT(location, HasSubstr(absl::StrCat("&redirect_uri=http://127.0.0.1:", console_->port(),
                                               "/oidc/callback&")));
  EXPECT_THAT(location, HasSubstr("&code_challenge_method=S256&resource=sharedos-grpc"));
  EXPECT_THAT(location, HasSubstr("&nonce="));
  EXPECT_THAT(started->get_header_value("Set-Cookie"),
              HasSubstr("; Max-Age=600; HttpOnly; SameSite=Lax"));
}

TEST_F(ConsoleOidcTest, WrongMissingOrReplayedStateIsASignInErrorNeverASession) {
  auto [state, binding] = Begin();
  httplib::Result wrong = http_->Get("/oidc/callback?state=not-it&code=c", {{"Cookie", binding}});
  EXPECT_EQ(wrong->status, 400);
  EXPECT_THAT(wrong->body, HasSubstr("state: not a sign-in in progress"));
  EXPECT_FALSE(OpensASession(wrong));
  httplib::Result missing = http_->Get("/oidc/callback?code=c", {{"Cookie", binding}});
  EXPECT_EQ(missing->status, 400);
  // Another browser (no binding cookie, or its own) presenting this browser's state.
  auto [other_state, other_binding] = Begin();
  httplib::Result crossed = http_->Get(
      absl::StrCat("/oidc/callback?state=", other_state, "&code=c"), {{"Cookie", binding}});
  EXPECT_EQ(crossed->status, 403);
  EXPECT_THAT(crossed->body, HasSubstr("begun in another browser"));
  EXPECT_FALSE(OpensASession(crossed));
  EXPECT_TRUE(provider_.exchanged().empty()) << "no code is exchanged without its sign-in";
  // The first state was never consumed by the wrong ones: it still fails closed below (the
  // access token is SharedOS's own credential, not the provider's), and is then used up.
  httplib::Result first =
      http_->Get(absl::StrCat("/oidc/callback?state=", state, "&code=c1"), {{"Cookie", binding}});
  EXPECT_EQ(first->status, 401);
  EXPECT_THAT(first->body, HasSubstr("The access token and the ID token name different people"));
  EXPECT_FALSE(OpensASession(first));
  ASSERT_EQ(provider_.exchanged().size(), 1u);
  EXPECT_EQ(provider_.exchanged()[0][0], "c1");
  EXPECT_EQ(provider_.exchanged()[0][1].size(), 43u) << "the PKCE verifier";
  httplib::Result replayed =
      http_->Get(absl::StrCat("/oidc/callback?state=", state, "&code=c1"), {{"Cookie", binding}});
  EXPECT_EQ(replayed->status, 400);
  EXPECT_EQ(provider_.exchanged().size(), 1u) << "a used state reaches the provider no more";
}

TEST_F(ConsoleOidcTest, ProviderRefusalsAndOutagesAreSignInErrorPages) {
  provider_.SetExchange(absl::PermissionDeniedError(
      "the identity provider refused: invalid_grant (grant request is invalid)"));
  auto [state, binding] = Begin();
  httplib::Result refused =
      http_->Get(absl::StrCat("/oidc/callback?state=", state, "&code=used"), {{"Cookie", binding}});
  EXPECT_EQ(refused->status, 401);
  EXPECT_THAT(refused->body, HasSubstr("invalid_grant"));
  EXPECT_THAT(refused->body, HasSubstr("id=\"signin-error\""));
  EXPECT_FALSE(OpensASession(refused));
  provider_.SetExchange(absl::UnavailableError("cannot reach the identity provider"));
  std::tie(state, binding) = Begin();
  httplib::Result down =
      http_->Get(absl::StrCat("/oidc/callback?state=", state, "&code=c"), {{"Cookie", binding}});
  EXPECT_EQ(down->status, 502);
  EXPECT_FALSE(OpensASession(down));
  provider_.SetExchange(OidcTokens{"id.token.x", kReviewer});
  provider_.SetIdentity(absl::UnauthenticatedError("invalid ID token (nonce)"));
  std::tie(state, binding) = Begin();
  httplib::Result bad_token =
      http_->Get(absl::StrCat("/oidc/callback?state=", state, "&code=c"), {{"Cookie", binding}});
  EXPECT_EQ(bad_token->status, 401);
  EXPECT_THAT(bad_token->body, HasSubstr("The ID token is refused: invalid ID token (nonce)"));
  EXPECT_FALSE(OpensASession(bad_token));
  // The provider's own error answer (e.g. the person refused consent), escaped.
  std::tie(state, binding) = Begin();
  httplib::Result denied =
      http_->Get(absl::StrCat("/oidc/callback?state=", state,
                              "&error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E"),
                 {{"Cookie", binding}});
  EXPECT_EQ(denied->status, 401);
  EXPECT_THAT(denied->body, HasSubstr("access_denied: &lt;b&gt;no&lt;/b&gt;"));
  // RFC 9207: an authorization response naming another issuer (a mix-up) is refused unexchanged.
  std::tie(state, binding) = Begin();
  const size_t exchanged = provider_.exchanged().size();
  httplib::Result mixed_up = http_->Get(
      absl::StrCat("/oidc/callback?state=", state, "&code=c&iss=https%3A%2F%2Fevil.example"),
      {{"Cookie", binding}});
  EXPECT_EQ(mixed_up->status, 401);
  EXPECT_THAT(mixed_up->body, HasSubstr("iss: not this console&#39;s identity provider"));
  EXPECT_EQ(provider_.exchanged().size(), exchanged);
  provider_.SetReachable(false);
  httplib::Result unreachable = http_->Get("/oidc/start");
  EXPECT_EQ(unreachable->status, 502);
  EXPECT_THAT(unreachable->body, HasSubstr("The identity provider cannot be reached"));
}

TEST_F(ConsoleOidcTest, PendingSignInsAreBounded) {
  for (int i = 0; i < 3; ++i) EXPECT_EQ(http_->Get("/oidc/start")->status, 303);
  httplib::Result full = http_->Get("/oidc/start");
  EXPECT_EQ(full->status, 503);
  EXPECT_THAT(full->body, HasSubstr("--console_oidc_max_pending"));
  clock_.AdvanceTime(absl::Minutes(10));
  EXPECT_EQ(http_->Get("/oidc/start")->status, 303) << "expired sign-ins make room";
}

}  // namespace
}  // namespace sharedos::console
