// The MCP columns' client: mcp_driver.mjs (node, the official MCP TypeScript clients) as a
// child process speaking JSON lines over its stdin/stdout, one request and one answer per line.

#ifndef SHAREDOS_TESTS_CONFORMANCE_MCP_CLIENT_H_
#define SHAREDOS_TESTS_CONFORMANCE_MCP_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/conformance/suite.h"

namespace sharedos::conformance {

// `column`: mcp-legacy (@modelcontextprotocol/sdk v1, protocol 2025-11-25) or mcp-modern
// (@modelcontextprotocol/client v2, 2026-07-28). `node_root`: the workspace holding
// node_modules. Errors: FAILED_PRECONDITION naming what is missing (node, node_modules).
absl::StatusOr<std::unique_ptr<McpClient>> StartMcpClient(const std::string& node_root,
                                                          const std::string& column);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_MCP_CLIENT_H_
