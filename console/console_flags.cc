#include "console/console_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "common/server/service_main.h"
#include "common/server/tls_flags.h"

// Help texts go through SharedFlagHelp so that each binary can say what its default is.
ABSL_FLAG(int, console_port, sharedos::console::kConsolePortBinaryDefault,
          sharedos::common::server::SharedFlagHelp(
              "console_port",
              "Port of the reviewer console (a web UI on --console_host; HTTPS with --tls_cert "
              "and --tls_key, else plaintext HTTP on loopback only); 0 picks a free port; -1: the "
              "binary's default."));
ABSL_FLAG(std::string, console_host, "127.0.0.1",
          sharedos::common::server::SharedFlagHelp("console_host",
                                                   "Host of the reviewer console."));

namespace sharedos::console {

absl::StatusOr<std::optional<ConsoleOptions>> ConsoleListenerFromFlags(
    std::optional<int> default_port) {
  const int flag = absl::GetFlag(FLAGS_console_port);
  if (flag < kConsolePortBinaryDefault || flag > 65535) {
    return absl::InvalidArgumentError("--console_port: must be -1..65535");
  }
  const std::optional<int> port =
      flag == kConsolePortBinaryDefault ? default_port : std::optional<int>(flag);
  if (!port.has_value()) return std::nullopt;
  ConsoleOptions options;
  options.host = absl::GetFlag(FLAGS_console_host);
  options.port = *port;
  options.tls = common::server::ServerTlsFromFlags();
  return options;
}

}  // namespace sharedos::console
