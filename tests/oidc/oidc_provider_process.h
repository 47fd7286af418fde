// A real OpenID provider (tests/oidc/provider.mjs: npm oidc-provider) as a child process on
// 127.0.0.1, with helpers for what tests ask of it: tokens, key rotation, stopping it.
#ifndef SHAREDOS_TESTS_OIDC_OIDC_PROVIDER_PROCESS_H_
#define SHAREDOS_TESTS_OIDC_OIDC_PROVIDER_PROCESS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/testing/process.h"

namespace sharedos::testing {

class OidcProviderProcess {
 public:
  // The provider's fixed test clients (provider.mjs).
  static constexpr char kConsoleClientId[] = "sharedos-console";
  static constexpr char kConsoleSecret[] = "console-secret-for-tests-only-0123456789";
  static constexpr char kDeviceClientId[] = "sharedosctl";
  static constexpr char kTestsClientId[] = "sharedos-tests";
  static constexpr char kTestsSecret[] = "tests-secret-for-tests-only-0123456789";
  // The gRPC audience (resource indicator) its access tokens are for by default.
  static constexpr char kGrpcAudience[] = "urn:sharedos:grpc";

  struct Options {
    // The console client's redirect URI (part 2's sign-in); a placeholder when empty.
    std::string console_redirect_uri;
    // RS256, ES256 or EdDSA: the provider's keys and every token it signs.
    std::string alg = "RS256";
    // Signing keys at start (the first signs).
    int keys = 1;
    // More users besides alice, bob, ops and carol: id → groups.
    std::vector<std::pair<std::string, std::vector<std::string>>> users;
  };

  // Starts the provider and waits for its issuer line. Errors: those of Process::Start/WaitForLine.
  static absl::StatusOr<std::unique_ptr<OidcProviderProcess>> Start(Options options);
  static absl::StatusOr<std::unique_ptr<OidcProviderProcess>> Start() { return Start(Options()); }

  // "http://127.0.0.1:<port>".
  const std::string& issuer() const { return issuer_; }

  // A JWT access token for `user` (alice, bob, ops, carol) minted by the provider's own token
  // model, as a sign-in would give (claims sub, email, groups), for `resource`.
  absl::StatusOr<std::string> UserAccessToken(const std::string& user,
                                              const std::string& resource = kGrpcAudience);
  // A JWT access token from the token endpoint: client_credentials with a resource indicator
  // (sub is the client id, no groups).
  absl::StatusOr<std::string> ClientCredentialsToken(const std::string& resource = kGrpcAudience);
  // A JWS over `payload` with the provider's current signing key (header fields override).
  absl::StatusOr<std::string> Sign(const nlohmann::json& payload,
                                   const nlohmann::json& header = nlohmann::json::object());
  // Adds a new signing key (which signs from now on); returns its kid.
  absl::StatusOr<std::string> RotateKey();
  // The published JWKS.
  absl::StatusOr<nlohmann::json> Jwks();
  // POSTs a form (application/x-www-form-urlencoded) or JSON; the raw answer.
  absl::StatusOr<std::string> PostJson(const std::string& path, const nlohmann::json& body);

  // Stops the provider (its port stays closed: "unreachable").
  void Stop() { process_.reset(); }

 private:
  explicit OidcProviderProcess(std::unique_ptr<Process> process, std::string issuer)
      : process_(std::move(process)), issuer_(std::move(issuer)) {}
  std::unique_ptr<Process> process_;
  std::string issuer_;
};

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_OIDC_OIDC_PROVIDER_PROCESS_H_
