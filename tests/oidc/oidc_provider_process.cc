#include "tests/oidc/oidc_provider_process.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "httplib.h"

namespace sharedos::testing {
namespace {

absl::StatusOr<nlohmann::json> ParseAnswer(const httplib::Result& result, const char* what) {
  if (!result) {
    return absl::UnavailableError(absl::StrCat(what, ": ", httplib::to_string(result.error())));
  }
  if (result->status != 200) {
    return absl::InternalError(absl::StrCat(what, ": HTTP ", result->status, " ", result->body));
  }
  nlohmann::json json = nlohmann::json::parse(result->body, nullptr, false);
  if (!json.is_object()) return absl::InternalError(absl::StrCat(what, ": not JSON"));
  return json;
}

absl::StatusOr<std::string> StringField(const absl::StatusOr<nlohmann::json>& json,
                                        const char* field) {
  if (!json.ok()) return json.status();
  if (!json->contains(field) || !(*json)[field].is_string()) {
    return absl::InternalError(absl::StrCat("answer without ", field, ": ", json->dump()));
  }
  return (*json)[field].get<std::string>();
}

}  // namespace

absl::StatusOr<std::unique_ptr<OidcProviderProcess>> OidcProviderProcess::Start(Options options) {
  std::vector<std::string> args = {absl::StrCat("--alg=", options.alg),
                                   absl::StrCat("--keys=", options.keys)};
  if (!options.console_redirect_uri.empty()) {
    args.push_back(absl::StrCat("--console_redirect_uri=", options.console_redirect_uri));
  }
  if (!options.users.empty()) {
    std::vector<std::string> users;
    for (const auto& [id, groups] : options.users) {
      users.push_back(absl::StrCat(id, "=", absl::StrJoin(groups, ",")));
    }
    args.push_back(absl::StrCat("--users=", absl::StrJoin(users, ";")));
  }
  absl::StatusOr<Process> started = Process::Start("tests/oidc/run_provider.sh", args);
  if (!started.ok()) return started.status();
  auto process = std::make_unique<Process>(*std::move(started));
  absl::StatusOr<std::string> port = process->WaitForLine("http://127.0.0.1:", absl::Seconds(60));
  if (!port.ok()) return port.status();
  return std::unique_ptr<OidcProviderProcess>(
      new OidcProviderProcess(std::move(process), absl::StrCat("http://127.0.0.1:", *port)));
}

absl::StatusOr<std::string> OidcProviderProcess::PostJson(const std::string& path,
                                                          const nlohmann::json& body) {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  httplib::Result result = client.Post(path, body.dump(), "application/json");
  if (!result) return absl::UnavailableError(httplib::to_string(result.error()));
  return result->body;
}

absl::StatusOr<std::string> OidcProviderProcess::UserAccessToken(const std::string& user,
                                                                 const std::string& resource) {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  return StringField(
      ParseAnswer(
          client.Post("/test/token", nlohmann::json{{"user", user}, {"resource", resource}}.dump(),
                      "application/json"),
          "test token"),
      "access_token");
}

absl::StatusOr<std::string> OidcProviderProcess::ClientCredentialsToken(
    const std::string& resource) {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  client.set_basic_auth(kTestsClientId, kTestsSecret);
  httplib::Params params = {
      {"grant_type", "client_credentials"}, {"resource", resource}, {"scope", "sharedos"}};
  return StringField(ParseAnswer(client.Post("/token", params), "client_credentials"),
                     "access_token");
}

absl::StatusOr<std::string> OidcProviderProcess::Sign(const nlohmann::json& payload,
                                                      const nlohmann::json& header) {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  return StringField(
      ParseAnswer(
          client.Post("/test/sign", nlohmann::json{{"payload", payload}, {"header", header}}.dump(),
                      "application/json"),
          "sign"),
      "token");
}

absl::StatusOr<std::string> OidcProviderProcess::RotateKey() {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  return StringField(ParseAnswer(client.Post("/test/rotate", "{}", "application/json"), "rotate"),
                     "kid");
}

absl::StatusOr<nlohmann::json> OidcProviderProcess::Jwks() {
  httplib::Client client(issuer_);
  client.set_read_timeout(30, 0);
  return ParseAnswer(client.Get("/jwks"), "jwks");
}

}  // namespace sharedos::testing
