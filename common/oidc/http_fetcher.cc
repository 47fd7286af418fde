#include "common/oidc/http_fetcher.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/http/http_client.h"

namespace sharedos::common::oidc {

absl::StatusOr<std::string> HttplibFetcher::Get(absl::string_view url, size_t max_bytes) const {
  // The one HTTP client (common/http/http_client.h); the provider's documents need a 200.
  http::HttpClientOptions options;
  options.timeout = timeout_;
  options.ca_file = ca_file_;
  absl::StatusOr<http::HttpAnswer> answer = http::HttplibClient(options).Get(url, max_bytes);
  if (!answer.ok()) {
    return absl::UnavailableError(absl::StrCat("provider ", answer.status().message()));
  }
  if (answer->status != 200) {
    return absl::UnavailableError(absl::StrCat("provider answered HTTP ", answer->status));
  }
  return std::move(answer->body);
}

}  // namespace sharedos::common::oidc
