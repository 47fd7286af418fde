#include "common/oidc/http_fetcher.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace sharedos::common::oidc {

absl::StatusOr<std::string> HttplibFetcher::Get(absl::string_view url, size_t max_bytes) const {
  absl::string_view rest;
  bool https = false;
  if (absl::StartsWith(url, "https://")) {
    https = true;
    rest = url.substr(8);
  } else if (absl::StartsWith(url, "http://")) {
    rest = url.substr(7);
  } else {
    return absl::UnavailableError("provider URL is neither http nor https");
  }
  const size_t slash = rest.find('/');
  const std::string origin(
      url.substr(0, (https ? 8 : 7) + (slash == absl::string_view::npos ? rest.size() : slash)));
  const std::string path = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  httplib::Client client(origin);
  if (https) {
    client.enable_server_certificate_verification(true);
    if (!ca_file_.empty()) client.set_ca_cert_path(ca_file_.c_str());
  }
  const auto micros = absl::ToInt64Microseconds(timeout_);
  client.set_connection_timeout(0, micros);
  client.set_read_timeout(0, micros);
  client.set_write_timeout(0, micros);
  client.set_follow_location(false);
  client.set_keep_alive(false);
  std::string body;
  bool too_large = false;
  httplib::Result result = client.Get(path, httplib::Headers{{"Accept", "application/json"}},
                                      [&](const char* data, size_t length) {
                                        if (body.size() + length > max_bytes) {
                                          too_large = true;
                                          return false;
                                        }
                                        body.append(data, length);
                                        return true;
                                      });
  if (too_large) {
    return absl::UnavailableError(
        absl::StrCat("provider answer larger than ", max_bytes, " bytes"));
  }
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat("provider unreachable: ", httplib::to_string(result.error())));
  }
  if (result->status != 200) {
    return absl::UnavailableError(absl::StrCat("provider answered HTTP ", result->status));
  }
  return body;
}

}  // namespace sharedos::common::oidc
