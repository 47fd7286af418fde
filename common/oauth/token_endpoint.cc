#include "common/oauth/token_endpoint.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/text/url.h"
#include "httplib.h"

namespace sharedos::common::oauth {

std::string PrintableAscii(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text.substr(0, max_bytes)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

std::string StringMember(const nlohmann::json& object, absl::string_view name) {
  if (!object.is_object()) return "";
  auto it = object.find(std::string(name));
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<HttpAnswer> PostForm(absl::string_view url,
                                    const std::map<std::string, std::string>& fields,
                                    absl::string_view client_id, absl::string_view client_secret,
                                    absl::string_view ca_file, absl::Duration timeout) {
  absl::StatusOr<text::HttpUrl> parsed = text::ParseHttpUrl(url);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("provider endpoint: ", parsed.status().message()));
  }
  httplib::Client client(parsed->origin);
  const auto chrono_timeout = absl::ToChronoMilliseconds(timeout);
  client.set_connection_timeout(chrono_timeout);
  client.set_read_timeout(chrono_timeout);
  client.set_write_timeout(chrono_timeout);
  client.set_follow_location(false);
  if (!ca_file.empty()) client.set_ca_cert_path(std::string(ca_file));
  if (!client_secret.empty()) {
    client.set_basic_auth(text::UrlEncode(client_id), text::UrlEncode(client_secret));
  }
  std::string body;
  for (const auto& [name, value] : fields) {
    absl::StrAppend(&body, body.empty() ? "" : "&", text::UrlEncode(name), "=",
                    text::UrlEncode(value));
  }
  httplib::Request request;
  request.method = "POST";
  request.path = parsed->target;
  request.set_header("Accept", "application/json");
  request.set_header("Content-Type", "application/x-www-form-urlencoded");
  request.body = std::move(body);
  std::string answer_body;
  bool too_long = false;
  request.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
    if (answer_body.size() + length > kMaxAnswerBytes) {
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
        absl::StrCat("provider endpoint: answer over ", kMaxAnswerBytes, " bytes"));
  }
  if (!sent) {
    return absl::UnavailableError(absl::StrCat("cannot reach the identity provider at ",
                                               parsed->origin, " (", httplib::to_string(error),
                                               ")"));
  }
  return HttpAnswer{response.status, std::move(answer_body)};
}

absl::StatusOr<nlohmann::json> ParseAnswer(const HttpAnswer& answer, std::string* oauth_error) {
  nlohmann::json json = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (answer.status != 200) {
    const std::string code = StringMember(json, "error");
    if (code.empty()) {
      return absl::UnavailableError(absl::StrCat("the identity provider answered HTTP ",
                                                 answer.status, " without an OAuth error"));
    }
    const std::string printable = PrintableAscii(code, kMaxProviderErrorBytes);
    if (oauth_error != nullptr) *oauth_error = printable;
    std::string message = absl::StrCat("the identity provider refused: ", printable);
    const std::string description = StringMember(json, "error_description");
    if (!description.empty()) {
      absl::StrAppend(&message, " (", PrintableAscii(description, kMaxProviderErrorBytes), ")");
    }
    return absl::PermissionDeniedError(message);
  }
  if (!json.is_object()) {
    return absl::UnavailableError("the identity provider's answer is not a JSON object");
  }
  return json;
}

}  // namespace sharedos::common::oauth
