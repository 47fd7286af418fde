#include "tests/conformance/mcp_client.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/conformance/json_lines_child.h"

namespace sharedos::conformance {
namespace {

using nlohmann::json;

class NodeMcpClient final : public McpClient {
 public:
  absl::Status Start(const std::string& node, const std::string& script,
                     const std::string& client) {
    return child_.Start({node, script, "--client=" + client});
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
  absl::StatusOr<json> Ask(const json& request) { return child_.Ask(request, absl::Seconds(60)); }

  JsonLinesChild child_;
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
