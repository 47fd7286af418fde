#ifndef SHAREDOS_TESTS_TESTING_PROCESS_H_
#define SHAREDOS_TESTS_TESTING_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sharedos::testing {

// A child process started for a test (a real service binary), whose stdout and stderr the test
// reads line by line. Killed with SIGKILL on destruction if still running. Not thread-safe.
class Process {
 public:
  // `binary` relative to the runfiles root (e.g. "sharedosd/sharedosd").
  static absl::StatusOr<Process> Start(const std::string& binary,
                                       const std::vector<std::string>& args);
  Process(Process&& other) noexcept;
  Process& operator=(Process&&) = delete;
  ~Process();

  // Reads output until a line starting with `prefix` appears; returns the rest of that line.
  // Errors: DEADLINE_EXCEEDED, or FAILED_PRECONDITION when the process exits first (with its
  // output so far in the message).
  absl::StatusOr<std::string> WaitForLine(const std::string& prefix, absl::Duration timeout);
  // SIGTERM then wait: the exit code (or 128 + signal).
  int Terminate();
  // SIGKILL then wait.
  void Kill();
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

 private:
  Process(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  int Wait();

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
  size_t consumed_ = 0;
};

// "$TEST_TMPDIR/<name>".
std::string TempPath(const std::string& name);
// The first line of a file, whitespace trimmed ("" when unreadable).
std::string ReadFirstLine(const std::string& path);

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_PROCESS_H_
