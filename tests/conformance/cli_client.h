// The CLI columns' client (issue 35): a real agent CLI — Claude Code, Codex, Gemini CLI, opencode
// or Pi, installed from package-lock.json — plays the harness seat of each RUNTIME_MCP turn,
// driven by the scripted model server (tests/cli/scripted_model.mjs) instead of a model.
//
// Connect starts the CLI for the turn from `sharedosctl mcp-config --cli=…` verbatim (its files
// written into the turn's working directory, its env and switches; the token only in
// $SHAREDOS_MCP_TOKEN), pointed at the scripted model, with its own HOME and stdin /dev/null,
// and answers the SharedOS tools the CLI offered its model (canonical names). opencode, whose
// launch costs 10-20 s of CPU, runs warm instead: the column's first Connect starts one
// `opencode serve` from `mcp-config --cli=opencode-serve` verbatim (its own HOME and directory,
// killed with the client), and every turn sends that recipe's per-turn request (the turn's MCP
// server and token) and a prompt to it over its HTTP API. Call has the model
// call a tool and answers what the CLI showed the model back as a CallToolResult: a refusal is
// recognised only by SharedOS's refusal sentence in that text (so its code reached the model),
// _meta carrying the status, code and requirement id read from it; a success carries the JSON the
// text holds as structuredContent. A tool the CLI never offered its model is still called (under
// the CLI's naming) and answered FAILED_PRECONDITION: the CLI's own router refused it. Close has
// the model give its final answer and waits for the CLI to exit.

#ifndef SHAREDOS_TESTS_CONFORMANCE_CLI_CLIENT_H_
#define SHAREDOS_TESTS_CONFORMANCE_CLI_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/conformance/suite.h"

namespace sharedos::conformance {

// The CLI columns and the CLI each runs (cases.json "cliColumns").
// claude-code → claude, codex → codex, gemini-cli → gemini, opencode → opencode, pi → pi.
std::string CliOfColumn(const std::string& column);

struct CliClientOptions {
  std::string column;
  // The workspace holding node_modules (the CLIs), tests/cli and envelope_svc/mcp/pi.
  std::string node_root;
  // The sharedosctl binary (mcp-config), runfile-relative: tools/sharedosctl/sharedosctl.
  std::string sharedosctl;
  // Per-turn directories and the model's request log go here.
  std::string scratch;
  // Every canonical tool name a turn may offer (what the CLI's names are mapped back to).
  std::vector<std::string> tool_names;
};

// Errors: FAILED_PRECONDITION naming what is missing (node, the CLI, sharedosctl).
absl::StatusOr<std::unique_ptr<McpClient>> StartCliClient(const CliClientOptions& options);

// What a CLI showed its model, read back as a CallToolResult (exposed for tests).
nlohmann::json ResultFromModelText(const std::string& text);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_CLI_CLIENT_H_
