#ifndef SHAREDOS_TESTS_TESTING_PROCESS_H_
#define SHAREDOS_TESTS_TESTING_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sharedos::testing {

// The path of a runfile such as "sharedosd/sharedosd": under TEST_SRCDIR in a test, under
// RUNFILES_DIR or the binary's own .runfiles tree (pass argv[0]) under `bazel run`.
std::string RunfilePath(const std::string& relative, const char* argv0 = nullptr);

// A child process started for a test or a benchmark (a real service binary), whose stdout and
// stderr are read line by line. A thread drains them as they come (so a chatty process never
// blocks on a full pipe); WaitForLine reads what it kept. Killed with SIGKILL on destruction if
// still running. Not thread-safe; one owner per process.
class Process {
 public:
  // `binary` relative to the runfiles root (e.g. "sharedosd/sharedosd"); see RunfilePath.
  static absl::StatusOr<Process> Start(const std::string& binary,
                                       const std::vector<std::string>& args,
                                       const char* argv0 = nullptr);
  // Starts a SharedOS service and waits (by reading its output, never by sleeping) for the
  // "<name> listening on <address>" line every main prints; address() then holds it.
  // Errors: as Start and WaitForLine.
  static absl::StatusOr<std::unique_ptr<Process>> StartService(
      const std::string& binary, const std::vector<std::string>& args, const std::string& name,
      const char* argv0 = nullptr, absl::Duration timeout = absl::Seconds(60));
  Process(Process&& other) noexcept;
  Process& operator=(Process&&) = delete;
  ~Process();

  // Reads output until a line starting with `prefix` appears; returns the rest of that line.
  // Errors: DEADLINE_EXCEEDED, or FAILED_PRECONDITION when the process exits first (with its
  // output so far in the message).
  absl::StatusOr<std::string> WaitForLine(const std::string& prefix, absl::Duration timeout);
  // Waits until the process exits on its own (its output closed) for at most `timeout`: its exit
  // code (or 128 + signal). Errors: DEADLINE_EXCEEDED while it still runs (with its output so
  // far; it is left running).
  absl::StatusOr<int> WaitForExit(absl::Duration timeout);
  // SIGTERM then wait: the exit code (or 128 + signal).
  int Terminate();
  // SIGKILL then wait.
  void Kill();
  // `signal` then wait: SIGTERM is an orderly stop, SIGKILL a crash.
  void Stop(int signal) { signal == SIGKILL ? Kill() : static_cast<void>(Terminate()); }
  pid_t pid() const { return pid_; }
  // The address a service reported (StartService).
  const std::string& address() const { return address_; }
  // Everything it wrote so far.
  std::string output() const;

 private:
  // What the drain thread has read; shared with it, so it outlives a moved-from Process.
  struct Output {
    absl::Mutex mu;
    std::string text ABSL_GUARDED_BY(mu);
    bool closed ABSL_GUARDED_BY(mu) = false;  // the pipe reached end of file
  };
  Process(pid_t pid, std::shared_ptr<Output> output) : pid_(pid), output_(std::move(output)) {}
  int Wait();

  pid_t pid_ = -1;
  std::string address_;
  std::shared_ptr<Output> output_;
  size_t consumed_ = 0;
};

// What a program run to completion printed (stdout and stderr together) and how it ended: its
// exit code, 128 + the signal that killed it, or -1 when it could not be started.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

// Runs the runfile `binary` ("tools/sharedosctl/sharedosctl") with `args` to completion (each
// argument passed as it is, whatever it holds).
CommandResult RunToCompletion(const std::string& binary, const std::vector<std::string>& args);

// "$TEST_TMPDIR/<name>".
std::string TempPath(const std::string& name);
// The first line of a file, whitespace trimmed ("" when unreadable).
std::string ReadFirstLine(const std::string& path);
// Writes `contents` to `path`, replacing it. Errors: INTERNAL.
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_PROCESS_H_
