#include "authorizer_svc/testing/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace sharedos::authorizer::testing {
namespace {

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

}  // namespace

std::string RunfilePath(const std::string& relative, const char* argv0) {
  if (const char* dir = std::getenv("TEST_SRCDIR"))
    return absl::StrCat(dir, "/sharedos/", relative);
  if (const char* dir = std::getenv("RUNFILES_DIR")) {
    return absl::StrCat(dir, "/sharedos/", relative);
  }
  if (argv0 != nullptr) {
    const std::string candidate = absl::StrCat(argv0, ".runfiles/sharedos/", relative);
    if (Exists(candidate)) return candidate;
  }
  return relative;  // `bazel run` starts in the runfiles tree.
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::string& binary, const std::vector<std::string>& args, const std::string& name,
    const std::string& log_path) {
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe failed");
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (log < 0) return absl::InternalError(absl::StrCat("cannot open ", log_path));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> argv_storage = {binary};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(log);
  if (spawned != 0) {
    close(out[0]);
    return absl::InternalError(absl::StrCat("cannot spawn ", binary));
  }
  // Blocking reads until the line (or EOF: the child died).
  const std::string prefix = absl::StrCat(name, " listening on ");
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1) {
    if (c != '\n') {
      line.push_back(c);
      continue;
    }
    if (absl::StartsWith(line, prefix)) {
      return std::unique_ptr<ChildProcess>(
          new ChildProcess(pid, out[0], line.substr(prefix.size())));
    }
    line.clear();
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return absl::InternalError(absl::StrCat(name, " exited before listening:\n", Tail(log_path)));
}

ChildProcess::~ChildProcess() {
  Stop(SIGKILL);
  if (out_ >= 0) close(out_);
}

void ChildProcess::Stop(int signal) {
  if (pid_ <= 0) return;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = 0;
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace sharedos::authorizer::testing
