#include "common/http/http_client.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/text/url.h"
#include "httplib.h"

namespace sharedos::common::http {

absl::StatusOr<HttpAnswer> HttplibClient::Get(absl::string_view url, size_t max_bytes) const {
  return Send("GET", url, "", "", max_bytes);
}

absl::StatusOr<HttpAnswer> HttplibClient::Post(absl::string_view url, const std::string& body,
                                               absl::string_view content_type,
                                               size_t max_bytes) const {
  return Send("POST", url, body, content_type, max_bytes);
}

absl::StatusOr<HttpAnswer> HttplibClient::Send(absl::string_view method, absl::string_view url,
                                               const std::string& body,
                                               absl::string_view content_type,
                                               size_t max_bytes) const {
  const absl::StatusOr<text::HttpUrl> parsed = text::ParseHttpUrl(url);
  if (!parsed.ok()) return absl::UnavailableError(absl::StrCat("URL: ", parsed.status().message()));
  std::unique_ptr<httplib::Client> client;
  if (parsed->https && !options_.client_cert_file.empty()) {
    client = std::make_unique<httplib::Client>(parsed->origin, options_.client_cert_file,
                                               options_.client_key_file);
  } else {
    client = std::make_unique<httplib::Client>(parsed->origin);
  }
  if (parsed->https) {
    client->enable_server_certificate_verification(true);
    if (!options_.ca_file.empty()) client->set_ca_cert_path(options_.ca_file.c_str());
  }
  const auto micros = absl::ToInt64Microseconds(options_.timeout);
  client->set_connection_timeout(0, micros);
  client->set_read_timeout(0, micros);
  client->set_write_timeout(0, micros);
  client->set_follow_location(false);
  client->set_keep_alive(false);

  httplib::Request request;
  request.method = std::string(method);
  request.path = parsed->target;
  request.headers.emplace("Accept", "application/json");
  if (!content_type.empty()) request.headers.emplace("Content-Type", std::string(content_type));
  request.body = body;
  HttpAnswer answer;
  bool too_large = false;
  request.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
    if (answer.body.size() + length > max_bytes) {
      too_large = true;
      return false;
    }
    answer.body.append(data, length);
    return true;
  };
  httplib::Result result = client->send(request);
  if (too_large) {
    return absl::UnavailableError(absl::StrCat("answer larger than ", max_bytes, " bytes"));
  }
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat("unreachable: ", httplib::to_string(result.error())));
  }
  answer.status = result->status;
  return answer;
}

}  // namespace sharedos::common::http
