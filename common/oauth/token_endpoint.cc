#include "common/oauth/token_endpoint.h"

#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace sharedos::common::oauth {
namespace {

// "scheme://authority" and the path (with query) of `url`. Errors: INVALID_ARGUMENT.
absl::StatusOr<std::pair<std::string, std::string>> SplitUrl(absl::string_view url) {
  if (!absl::StartsWith(url, "https://") && !absl::StartsWith(url, "http://")) {
    return absl::InvalidArgumentError("provider endpoint: not an http(s) URL");
  }
  const size_t authority = url.find("://") + 3;
  size_t path = url.find('/', authority);
  if (path == absl::string_view::npos) path = url.size();
  if (path == authority) return absl::InvalidArgumentError("provider endpoint: no host");
  std::string rest(url.substr(path));
  if (rest.empty()) rest = "/";
  return std::make_pair(std::string(url.substr(0, path)), rest);
}

}  // namespace

std::string FormEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

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
  absl::StatusOr<std::pair<std::string, std::string>> split = SplitUrl(url);
  if (!split.ok()) return split.status();
  httplib::Client client(split->first);
  const auto chrono_timeout = absl::ToChronoMilliseconds(timeout);
  client.set_connection_timeout(chrono_timeout);
  client.set_read_timeout(chrono_timeout);
  client.set_write_timeout(chrono_timeout);
  client.set_follow_location(false);
  if (!ca_file.empty()) client.set_ca_cert_path(std::string(ca_file));
  if (!client_secret.empty()) {
    client.set_basic_auth(FormEncode(client_id), FormEncode(client_secret));
  }
  std::string body;
  for (const auto& [name, value] : fields) {
    absl::StrAppend(&body, body.empty() ? "" : "&", FormEncode(name), "=", FormEncode(value));
  }
  httplib::Request request;
  request.method = "POST";
  request.path = split->second;
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
                                               split->first, " (", httplib::to_string(error), ")"));
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
