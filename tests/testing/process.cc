#include "tests/testing/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

extern char** environ;

namespace sharedos::testing {

std::string RunfilePath(const std::string& relative, const char* argv0) {
  if (const char* dir = std::getenv("TEST_SRCDIR"))
    return absl::StrCat(dir, "/sharedos/", relative);
  if (const char* dir = std::getenv("RUNFILES_DIR")) {
    return absl::StrCat(dir, "/sharedos/", relative);
  }
  if (argv0 != nullptr) {
    const std::string candidate = absl::StrCat(argv0, ".runfiles/sharedos/", relative);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return relative;  // `bazel run` starts in the runfiles tree.
}

absl::StatusOr<std::unique_ptr<Process>> Process::StartService(const std::string& binary,
                                                               const std::vector<std::string>& args,
                                                               const std::string& name,
                                                               const char* argv0,
                                                               absl::Duration timeout) {
  absl::StatusOr<Process> started = Start(binary, args, argv0);
  if (!started.ok()) return started.status();
  auto process = std::make_unique<Process>(*std::move(started));
  absl::StatusOr<std::string> address = process->WaitForLine(name + " listening on ", timeout);
  if (!address.ok()) return address.status();
  process->address_ = *std::move(address);
  return process;
}

absl::StatusOr<Process> Process::Start(const std::string& binary,
                                       const std::vector<std::string>& args, const char* argv0) {
  const std::string path = RunfilePath(binary, argv0);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", path));
  }
  auto output = std::make_shared<Output>();
  // Drains the pipe until the process (and any child holding it) closes it.
  std::thread([fd = pipe_fds[0], output] {
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
      if (n <= 0) continue;
      absl::MutexLock lock(&output->mu);
      output->text.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    absl::MutexLock lock(&output->mu);
    output->closed = true;
  }).detach();
  return Process(pid, std::move(output));
}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_),
      address_(std::move(other.address_)),
      output_(std::move(other.output_)),
      consumed_(other.consumed_) {
  other.pid_ = -1;
}

Process::~Process() {
  if (pid_ > 0) Kill();
}

std::string Process::output() const {
  if (output_ == nullptr) return "";
  absl::MutexLock lock(&output_->mu);
  return output_->text;
}

absl::StatusOr<std::string> Process::WaitForLine(const std::string& prefix,
                                                 absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&output_->mu);
  // output_->text throughout, not a reference bound to it: the analysis does not carry the held
  // lock over to such an alias.
  size_t scanned = consumed_;  // complete lines before this have been looked at
  while (true) {
    // Look through complete lines not yet consumed.
    size_t end;
    while ((end = output_->text.find('\n', consumed_)) != std::string::npos) {
      const std::string line = output_->text.substr(consumed_, end - consumed_);
      consumed_ = end + 1;
      if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    }
    scanned = output_->text.size();
    if (output_->closed) {
      return absl::FailedPreconditionError(
          absl::StrCat("process exited before \"", prefix, "\"; output:\n", output_->text));
    }
    // Await evaluates the condition with the mutex held.
    auto more = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(output_->mu) {
      return output_->text.size() > scanned || output_->closed;
    };
    if (!output_->mu.AwaitWithDeadline(absl::Condition(&more), deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat("no line \"", prefix, "\"; output:\n", output_->text));
    }
  }
}

absl::StatusOr<int> Process::WaitForExit(absl::Duration timeout) {
  {
    absl::MutexLock lock(&output_->mu);
    auto closed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(output_->mu) { return output_->closed; };
    if (!output_->mu.AwaitWithTimeout(absl::Condition(&closed), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "still running after ", absl::FormatDuration(timeout), "; output:\n", output_->text));
    }
  }
  return Wait();
}

int Process::Wait() {
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) return -1;
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int Process::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  return Wait();
}

void Process::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  Wait();
}

CommandResult RunToCompletion(const std::string& binary, const std::vector<std::string>& args) {
  // One shell line, every word single-quoted (a quote inside becomes '\'').
  auto quote = [](const std::string& word) {
    return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
  };
  std::string line = quote(RunfilePath(binary));
  for (const std::string& arg : args) absl::StrAppend(&line, " ", quote(arg));
  absl::StrAppend(&line, " 2>&1");
  CommandResult result;
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace sharedos::testing
