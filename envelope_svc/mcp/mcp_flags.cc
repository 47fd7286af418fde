#include "envelope_svc/mcp/mcp_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/server/service_main.h"

// Help texts go through SharedFlagHelp so that each binary can say what its default is.
ABSL_FLAG(std::string, mcp_host, "127.0.0.1",
          sharedos::common::server::SharedFlagHelp(
              "mcp_host",
              "Host of the MCP front door. With --tls_cert and --tls_key it serves HTTPS with the "
              "same certificate as the gRPC listener, on any host; without, plaintext HTTP on a "
              "loopback host only."));
ABSL_FLAG(int, mcp_port, sharedos::envelope::mcp::kMcpPortBinaryDefault,
          sharedos::common::server::SharedFlagHelp(
              "mcp_port",
              "Port of the MCP front door (Streamable HTTP, path /mcp) on --mcp_host; 0 picks a "
              "free port; -1: the binary's default."));
ABSL_FLAG(std::string, mcp_public_url, "",
          sharedos::common::server::SharedFlagHelp(
              "mcp_public_url",
              "The MCP URL handed to harnesses (OpenTurn's mcp url), as they reach the front door "
              "(e.g. through a load balancer). Empty: <http|https>://<mcp_host>:<port>/mcp."));
ABSL_FLAG(std::vector<std::string>, mcp_allowed_origins, {},
          sharedos::common::server::SharedFlagHelp(
              "mcp_allowed_origins",
              "Origins the MCP front door accepts besides its own (comma-separated)."));

namespace sharedos::envelope::mcp {

absl::Status ApplyMcpListenerFlags(int default_port, McpServer::Options& options) {
  const int port = absl::GetFlag(FLAGS_mcp_port);
  if (port < kMcpPortBinaryDefault || port > 65535) {
    return absl::InvalidArgumentError("--mcp_port: must be -1..65535");
  }
  options.host = absl::GetFlag(FLAGS_mcp_host);
  options.port = port == kMcpPortBinaryDefault ? default_port : port;
  options.public_url = absl::GetFlag(FLAGS_mcp_public_url);
  options.allowed_origins = absl::GetFlag(FLAGS_mcp_allowed_origins);
  return absl::OkStatus();
}

}  // namespace sharedos::envelope::mcp
