// The MCP front door's listener flags, defined once for the binaries that serve it (envelope_svc
// and sharedosd; ADR 0022): --mcp_host, --mcp_port, --mcp_public_url and --mcp_allowed_origins.
// Only a main links this library. What stays in a main is what only it has: envelope_svc's
// --mcp_secret_file (sharedosd keeps the secret in its data directory) and its replicas'
// --replica_mcp_peers.
//
// --mcp_port's default, -1, is "the binary's default", because the binaries differ: envelope_svc
// picks a free port, sharedosd listens on --port + 1. Each main passes the port -1 stands for to
// ApplyMcpListenerFlags and words the flag's help accordingly (ServiceBinary::flag_help, as for
// the shared flags), so that --help tells the truth for each binary.

#ifndef SHAREDOS_ENVELOPE_SVC_MCP_MCP_FLAGS_H_
#define SHAREDOS_ENVELOPE_SVC_MCP_MCP_FLAGS_H_

#include "absl/status/status.h"
#include "envelope_svc/mcp/mcp_server.h"

namespace sharedos::envelope::mcp {

// The value of --mcp_port that means "the binary's default" (the flag's default).
inline constexpr int kMcpPortBinaryDefault = -1;

// Copies the flags into `options` (host, port, public_url, allowed_origins); a --mcp_port of -1
// becomes `default_port` (0: a free port). Errors: INVALID_ARGUMENT "--mcp_port: must be
// -1..65535".
absl::Status ApplyMcpListenerFlags(int default_port, McpServer::Options& options);

}  // namespace sharedos::envelope::mcp

#endif  // SHAREDOS_ENVELOPE_SVC_MCP_MCP_FLAGS_H_
