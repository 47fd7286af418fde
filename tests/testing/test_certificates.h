// A throwaway certificate authority for tests, made with OpenSSL at test time: a CA, and
// certificates it signs for servers and clients (subject alternative names chosen by the test),
// valid now or already expired. Files are PEM under the directory given. Not thread-safe.

#ifndef SHAREDOS_TESTS_TESTING_TEST_CERTIFICATES_H_
#define SHAREDOS_TESTS_TESTING_TEST_CERTIFICATES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sharedos::testing {

// A certificate and its key, as files.
struct TestCertificate {
  std::string cert_file;
  std::string key_file;
};

class TestCertificateAuthority {
 public:
  // A new CA "<name>" (an EC P-256 key), its certificate in <dir>/<name>-ca.pem.
  // Errors: INTERNAL (OpenSSL or the file system failed).
  static absl::StatusOr<std::unique_ptr<TestCertificateAuthority>> Create(const std::string& dir,
                                                                          const std::string& name);
  ~TestCertificateAuthority();

  const std::string& ca_file() const { return ca_file_; }

  // A certificate for `common_name` with `sans` ("DNS:localhost", "IP:127.0.0.1",
  // "URI:spiffe://sharedos/authorizer"), usable by a server and a client, into
  // <dir>/<file_stem>.pem and <dir>/<file_stem>.key (replacing what is there). `expired`: its
  // validity ended yesterday. Errors: INTERNAL.
  absl::StatusOr<TestCertificate> Issue(const std::string& file_stem,
                                        const std::string& common_name,
                                        const std::vector<std::string>& sans, bool expired = false);

  // A server certificate for loopback: DNS:localhost and IP:127.0.0.1.
  absl::StatusOr<TestCertificate> IssueLoopback(const std::string& file_stem,
                                                bool expired = false) {
    return Issue(file_stem, "localhost", {"DNS:localhost", "IP:127.0.0.1"}, expired);
  }

 private:
  TestCertificateAuthority() = default;

  std::string dir_, name_, ca_file_;
  void* key_ = nullptr;   // EVP_PKEY*
  void* cert_ = nullptr;  // X509*
};

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_TEST_CERTIFICATES_H_
