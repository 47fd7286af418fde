#include "tests/conformance/json_lines_child.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace sharedos::conformance {

std::string FindNode() {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/local/bin:/usr/bin";
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate = absl::StrCat(dir, "/node");
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

JsonLinesChild::~JsonLinesChild() {
  if (to_ >= 0) close(to_);
  if (from_ >= 0) close(from_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

absl::Status JsonLinesChild::Start(const std::vector<std::string>& args) {
  signal(SIGPIPE, SIG_IGN);  // a child that died is an error answer, not a crash
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return absl::InternalError("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, copy[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  to_ = in[1];
  from_ = out[0];
  if (rc != 0) return absl::FailedPreconditionError(absl::StrCat("cannot start ", copy[0]));
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> JsonLinesChild::Read(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string text = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      nlohmann::json answer = nlohmann::json::parse(text, nullptr, false);
      if (answer.is_discarded()) return absl::InternalError("driver: not JSON: " + text);
      return answer;
    }
    const int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) return absl::DeadlineExceededError("driver: no answer");
    pollfd fd{from_, POLLIN, 0};
    if (poll(&fd, 1, wait_ms) <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(from_, chunk, sizeof(chunk));
    if (n <= 0) return absl::UnavailableError("driver exited");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<nlohmann::json> JsonLinesChild::Ask(const nlohmann::json& request,
                                                   absl::Duration timeout) {
  const std::string line = request.dump() + "\n";
  if (write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return absl::UnavailableError("driver: cannot write");
  }
  return Read(timeout);
}

}  // namespace sharedos::conformance
