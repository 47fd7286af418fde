#include "common/oidc/http_fetcher.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/text/url.h"
#include "httplib.h"

namespace sharedos::common::oidc {

absl::StatusOr<std::string> HttplibFetcher::Get(absl::string_view url, size_t max_bytes) const {
  const absl::StatusOr<text::HttpUrl> parsed = text::ParseHttpUrl(url);
  if (!parsed.ok()) {
    return absl::UnavailableError(absl::StrCat("provider URL: ", parsed.status().message()));
  }
  const bool https = parsed->https;
  const std::string& path = parsed->target;
  httplib::Client client(parsed->origin);
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
