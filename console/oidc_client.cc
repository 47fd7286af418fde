#include "console/oidc_client.h"

#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "console/http.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace sharedos::console {
namespace {

// "scheme://authority" and the path (with query) of `url`. Errors: INVALID_ARGUMENT.
absl::StatusOr<std::pair<std::string, std::string>> SplitUrl(absl::string_view url) {
  const bool https = absl::StartsWith(url, "https://");
  if (!https && !absl::StartsWith(url, "http://")) {
    return absl::InvalidArgumentError("token endpoint: not an http(s) URL");
  }
  const size_t authority = url.find("://") + 3;
  size_t path = url.find('/', authority);
  if (path == absl::string_view::npos) path = url.size();
  if (path == authority) return absl::InvalidArgumentError("token endpoint: no host");
  std::string rest(url.substr(path));
  if (rest.empty()) rest = "/";
  return std::make_pair(std::string(url.substr(0, path)), rest);
}

std::string JsonString(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string PrintableAscii(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text.substr(0, max_bytes)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

absl::StatusOr<HttpAnswer> PostForm(absl::string_view url,
                                    const std::map<std::string, std::string>& fields,
                                    absl::string_view client_id, absl::string_view client_secret,
                                    absl::string_view ca_file, absl::Duration timeout) {
  absl::StatusOr<std::pair<std::string, std::string>> split = SplitUrl(url);
  if (!split.ok()) return split.status();
  httplib::Client client(split->first);
  const auto chrono_timeout = absl::ToChronoMilliseconds(timeout);
  client.set_connection_timeout(chrono_timeout);
  client.set_read_timeout(chrono_timeout);
  client.set_write_timeout(chrono_timeout);
  client.set_follow_location(false);
  if (!ca_file.empty()) client.set_ca_cert_path(std::string(ca_file));
  if (!client_id.empty()) {
    client.set_basic_auth(UrlEncode(client_id), UrlEncode(client_secret));
  }
  std::string body;
  for (const auto& [name, value] : fields) {
    absl::StrAppend(&body, body.empty() ? "" : "&", UrlEncode(name), "=", UrlEncode(value));
  }
  httplib::Request request;
  request.method = "POST";
  request.path = split->second;
  request.headers.emplace("Accept", "application/json");
  request.body = std::move(body);
  request.set_header("Content-Type", "application/x-www-form-urlencoded");
  std::string answer_body;
  bool too_long = false;
  request.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
    if (answer_body.size() + length > kMaxTokenResponseBytes) {
      too_long = true;
      return false;
    }
    answer_body.append(data, length);
    return true;
  };
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  const bool sent = client.send(request, response, error);
  if (too_long) {
    return absl::UnavailableError(
        absl::StrCat("token endpoint: answer over ", kMaxTokenResponseBytes, " bytes"));
  }
  if (!sent) {
    return absl::UnavailableError(
        absl::StrCat("token endpoint: cannot reach the identity provider (", httplib::to_string(error),
                     ")"));
  }
  return HttpAnswer{response.status, std::move(answer_body)};
}

absl::StatusOr<OidcTokens> ParseTokenAnswer(const HttpAnswer& answer) {
  nlohmann::json json = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (answer.status != 200) {
    std::string code = json.is_object() ? JsonString(json, "error") : "";
    std::string description = json.is_object() ? JsonString(json, "error_description") : "";
    if (code.empty()) {
      return absl::UnavailableError(
          absl::StrCat("token endpoint: HTTP ", answer.status, " without an OAuth error"));
    }
    std::string message = absl::StrCat("the identity provider refused the code: ",
                                       PrintableAscii(code, kMaxProviderErrorBytes));
    if (!description.empty()) {
      absl::StrAppend(&message, " (", PrintableAscii(description, kMaxProviderErrorBytes), ")");
    }
    return absl::PermissionDeniedError(message);
  }
  if (!json.is_object()) return absl::UnavailableError("token endpoint: the answer is not JSON");
  OidcTokens tokens{JsonString(json, "id_token"), JsonString(json, "access_token")};
  if (tokens.id_token.empty()) return absl::UnavailableError("token endpoint: no id_token");
  if (tokens.access_token.empty()) return absl::UnavailableError("token endpoint: no access_token");
  return tokens;
}

}  // namespace sharedos::console
