// Real service binaries as child processes, for process-level tests and benchmarks: spawn with
// flags, wait (by reading its stdout, never by sleeping) for the "<name> listening on <address>"
// line every SharedOS main prints, signal and reap. Not thread-safe; one owner per process.

#ifndef SHAREDOS_AUTHORIZER_SVC_TESTING_CHILD_PROCESS_H_
#define SHAREDOS_AUTHORIZER_SVC_TESTING_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sharedos::authorizer::testing {

// The path of a runfile such as "grantstore_svc/server/grantstore_svc": under TEST_SRCDIR in a
// test, under RUNFILES_DIR or the binary's .runfiles tree in `bazel run`.
std::string RunfilePath(const std::string& relative, const char* argv0 = nullptr);

class ChildProcess {
 public:
  // Starts `binary` with `args` and waits until it reports "<name> listening on <address>".
  // Its stderr goes to `log_path` (appended). Errors: INTERNAL when it cannot be spawned or
  // exits before listening (the log's tail is in the message).
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::string& binary,
                                                             const std::vector<std::string>& args,
                                                             const std::string& name,
                                                             const std::string& log_path);
  // Kills (SIGKILL) and reaps it if still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& address() const { return address_; }
  // Sends `signal` and reaps the process (SIGTERM: orderly; SIGKILL: a crash).
  void Stop(int signal);

 private:
  ChildProcess(pid_t pid, int out, std::string address)
      : pid_(pid), out_(out), address_(std::move(address)) {}

  pid_t pid_;
  int out_;
  std::string address_;
};

// Writes `contents` to `path` (replacing it). Errors: INTERNAL.
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace sharedos::authorizer::testing

#endif  // SHAREDOS_AUTHORIZER_SVC_TESTING_CHILD_PROCESS_H_
