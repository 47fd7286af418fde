// Where the reviewer console listens, defined once for the binaries that serve it (the console's
// own binary and sharedosd; ADR 0022): --console_host and --console_port. Only a main links this
// library. What stays in console_main.cc is what only the console binary has
// (--console_public_origin, --audit_target).
//
// --console_port's default, -1, is "the binary's default", because the binaries differ: the
// console binary listens on 8443, sharedosd serves no console unless asked. Each main passes what
// -1 stands for to ConsoleListenerFromFlags and words the flag's help accordingly
// (ServiceBinary::flag_help, as for the shared flags), so that --help tells the truth for each
// binary.

#ifndef SHAREDOS_CONSOLE_CONSOLE_FLAGS_H_
#define SHAREDOS_CONSOLE_CONSOLE_FLAGS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "console/console_server.h"

namespace sharedos::console {

// The value of --console_port that means "the binary's default" (the flag's default).
inline constexpr int kConsolePortBinaryDefault = -1;

// ConsoleOptions with host, port and tls (the listener's TLS flags, common/server/tls_flags.h)
// from the flags, the rest at their defaults; a --console_port of -1 becomes `default_port`
// (0: a free port). nullopt when that leaves no port (`default_port` nullopt: no console unless
// asked). Errors: INVALID_ARGUMENT "--console_port: must be -1..65535".
absl::StatusOr<std::optional<ConsoleOptions>> ConsoleListenerFromFlags(
    std::optional<int> default_port);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_CONSOLE_FLAGS_H_
