// `sharedosctl mcp-config --cli=claude|codex|gemini|opencode|opencode-serve|pi
// --url=<OpenTurnResponse.mcp.url>`: the recipe a host ships to start an agent CLI on a RUNTIME_MCP
// turn (envelope_svc/mcp/README.md) — the CLI's own configuration file(s) for the turn's MCP
// endpoint, the environment it needs and its command-line switches. The token is never written
// into a file: every recipe reads it from the environment variable SHAREDOS_MCP_TOKEN (the turn's
// mcp.token), except opencode-serve, which sends it in its per-turn request to the warm server.
// Offline: no call is made. The column tests (tests/conformance/cli_client.cc) start each CLI from
// this output verbatim (the opencode column from opencode-serve).
//
// Printed as one JSON object:
//   {"cli", "server", "files": [{"path", "content"}], "env": {name: value}, "args": [...],
//    "toolNames": "<how the CLI names the turn's tools>"}
// opencode-serve also has "turn": {"method", "path", "query", "body"}, the request each turn sends
// to the running `opencode serve` (its body's "<mcp.token>" is the turn's token); its env has
// OPENCODE_SERVER_PASSWORD "<server password>" (the host's choice) and no SHAREDOS_MCP_TOKEN.
// `path` is relative to the harness's working directory; in `env` and `args`, "{cwd}" stands for
// that directory's absolute path and "{pi_extension}" for where the host installed
// envelope_svc/mcp/pi/sharedos_mcp.ts. env SHAREDOS_MCP_TOKEN's value is the placeholder
// "<mcp.token>". Stateless; thread-safe.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_MCP_CONFIG_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_MCP_CONFIG_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

inline constexpr char kMcpTokenVariable[] = "SHAREDOS_MCP_TOKEN";
inline constexpr char kMcpUrlVariable[] = "SHAREDOS_MCP_URL";

// The recipe as JSON text (see above). `server` is the MCP server's name in the CLI's
// configuration ([a-z0-9_-], at most 32; the CLIs prefix tool names with it).
// Errors: INVALID_ARGUMENT naming the flag (--cli unknown; --url not http(s), over 2048 bytes, with
// whitespace, control characters, a query or a fragment; --server malformed).
absl::StatusOr<std::string> McpConfig(const std::string& cli, const std::string& url,
                                      const std::string& server);

// The `mcp-config` command (needs no server and no token).
int McpConfigCommand(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                     std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_MCP_CONFIG_H_
