// Bounded HTTP GET for the provider's documents (discovery, JWKS). An interface so the library's
// unit tests serve documents from memory; production uses HttplibFetcher (the one HTTP client,
// common/http/http_client.h: cpp-httplib with OpenSSL for https).
#ifndef SHAREDOS_COMMON_OIDC_HTTP_FETCHER_H_
#define SHAREDOS_COMMON_OIDC_HTTP_FETCHER_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::common::oidc {

class HttpFetcher {
 public:
  virtual ~HttpFetcher() = default;
  // The body of a 200 answer to GET `url`, at most `max_bytes`. No redirects are followed.
  // Errors: UNAVAILABLE (cannot connect, timeout, a status other than 200, a larger body).
  virtual absl::StatusOr<std::string> Get(absl::string_view url, size_t max_bytes) const = 0;
};

// GET over cpp-httplib: connect/read/write timeouts of `timeout`; https verifies the server's
// certificate against `ca_file` (empty: the system's default paths). Thread-safe (a client per
// call).
class HttplibFetcher : public HttpFetcher {
 public:
  HttplibFetcher(absl::Duration timeout, std::string ca_file)
      : timeout_(timeout), ca_file_(std::move(ca_file)) {}
  absl::StatusOr<std::string> Get(absl::string_view url, size_t max_bytes) const override;

 private:
  absl::Duration timeout_;
  std::string ca_file_;
};

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_HTTP_FETCHER_H_
