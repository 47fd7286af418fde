// A child process spoken to in JSON lines over its stdin/stdout, one request and one answer per
// line (the node drivers of the MCP and CLI columns). Not thread-safe: one caller at a time.

#ifndef SHAREDOS_TESTS_CONFORMANCE_JSON_LINES_CHILD_H_
#define SHAREDOS_TESTS_CONFORMANCE_JSON_LINES_CHILD_H_

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sharedos::conformance {

// The node on PATH (or /usr/local/bin, /usr/bin); empty when there is none.
std::string FindNode();

class JsonLinesChild {
 public:
  JsonLinesChild() = default;
  ~JsonLinesChild();
  JsonLinesChild(const JsonLinesChild&) = delete;
  JsonLinesChild& operator=(const JsonLinesChild&) = delete;

  // Starts `argv` (argv[0] the binary), stderr inherited. Errors: FAILED_PRECONDITION.
  absl::Status Start(const std::vector<std::string>& argv);
  // The next line the child writes, as JSON (e.g. a greeting it prints first).
  absl::StatusOr<nlohmann::json> Read(absl::Duration timeout);
  // Writes `request` as one line and reads the answer. Errors: UNAVAILABLE (the child is gone),
  // DEADLINE_EXCEEDED, INTERNAL (the answer is not JSON).
  absl::StatusOr<nlohmann::json> Ask(const nlohmann::json& request, absl::Duration timeout);

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_JSON_LINES_CHILD_H_
