#include "tests/conformance/mcp_client.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace sharedos::conformance {
namespace {

using nlohmann::json;

std::string FindNode() {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/local/bin:/usr/bin";
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate = absl::StrCat(dir, "/node");
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

class NodeMcpClient final : public McpClient {
 public:
  ~NodeMcpClient() override {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  absl::Status Start(const std::string& node, const std::string& script,
                     const std::string& client) {
    signal(SIGPIPE, SIG_IGN);  // a driver that died is an error answer, not a crash
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return absl::InternalError("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args = {node, script, "--client=" + client};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, node.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    if (rc != 0) return absl::FailedPreconditionError(absl::StrCat("cannot start ", node));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> Connect(const std::string& url,
                                                   const std::string& token) override {
    auto answer = Ask({{"op", "connect"}, {"url", url}, {"token", token}});
    if (!answer.ok()) return answer.status();
    if (!answer->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("MCP connect: ", answer->value("error", "")));
    }
    return (*answer)["tools"].get<std::vector<std::string>>();
  }

  absl::StatusOr<json> Call(const std::string& tool, const json& arguments) override {
    auto answer = Ask({{"op", "call"}, {"tool", tool}, {"arguments", arguments}});
    if (!answer.ok()) return answer.status();
    if (answer->value("ok", false)) return (*answer)["result"];
    if (answer->value("local", false)) {
      return absl::FailedPreconditionError(
          absl::StrCat("refused by the client: ", answer->value("error", "")));
    }
    return absl::UnavailableError(absl::StrCat("MCP error: ", answer->value("error", "")));
  }

  absl::Status Close() override {
    auto answer = Ask({{"op", "close"}});
    return answer.ok() ? absl::OkStatus() : answer.status();
  }

 private:
  absl::StatusOr<json> Ask(const json& request) {
    const std::string line = request.dump() + "\n";
    if (write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      return absl::UnavailableError("mcp_driver: cannot write");
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (true) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string text = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        json answer = json::parse(text, nullptr, false);
        if (answer.is_discarded()) return absl::InternalError("mcp_driver: not JSON: " + text);
        return answer;
      }
      const int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (wait_ms <= 0) return absl::DeadlineExceededError("mcp_driver: no answer");
      pollfd fd{from_, POLLIN, 0};
      if (poll(&fd, 1, wait_ms) <= 0) continue;
      char chunk[4096];
      const ssize_t n = read(from_, chunk, sizeof(chunk));
      if (n <= 0) return absl::UnavailableError("mcp_driver exited");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<McpClient>> StartMcpClient(const std::string& node_root,
                                                          const std::string& column) {
  const std::string node = FindNode();
  if (node.empty()) {
    return absl::FailedPreconditionError("node is not on PATH (run tools/setup.sh)");
  }
  const std::string script = node_root + "/tests/conformance/mcp_driver.mjs";
  const std::string package =
      column == "mcp-legacy" ? "@modelcontextprotocol/sdk" : "@modelcontextprotocol/client";
  if (node_root.empty() ||
      access((node_root + "/node_modules/" + package + "/package.json").c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        package, " is not installed under ", node_root, "/node_modules (run tools/setup.sh)"));
  }
  auto client = std::make_unique<NodeMcpClient>();
  absl::Status started = client->Start(node, script, column == "mcp-legacy" ? "legacy" : "modern");
  if (!started.ok()) return started;
  return client;
}

}  // namespace sharedos::conformance
