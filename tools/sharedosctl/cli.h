// Command-line parsing for sharedosctl: `sharedosctl [global flags] <group> <verb> [flags]`.
// Global flags may appear anywhere. Each command accepts only its own flags; an unknown command,
// an unknown or repeated flag, or a missing required flag is a usage error. Pure: no I/O.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_CLI_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_CLI_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/client/channel.h"

namespace sharedos::sharedosctl {

struct GlobalOptions {
  std::string target = "127.0.0.1:50051";
  // The admin token is read from this file, never taken from argv.
  // Without --token_file: the token `sharedosctl login` kept, when there is one (login.h).
  std::string token_file = "sharedos-data/admin.token";
  bool token_file_given = false;
  bool json = false;
  absl::Duration timeout = absl::Seconds(10);
  // --tls_ca, --tls_client_cert, --tls_client_key, --tls_server_name.
  common::client::ChannelTls tls;
};

struct Invocation {
  // "grants list", "audit verify", …
  std::string command;
  // The command's flags as given ("true" for a boolean flag given without a value).
  std::map<std::string, std::string> flags;
  bool help = false;

  bool Has(const std::string& name) const { return flags.count(name) > 0; }
  // "" when absent.
  std::string Get(const std::string& name) const;
  // Boolean flags: true for "", "true", "1", "yes".
  bool GetBool(const std::string& name) const;
};

// `args` excludes argv[0]. The global flags land in `*globals` (whose values are the defaults on
// entry). `--help` (anywhere) sets Invocation::help and skips the other checks. Errors:
// INVALID_ARGUMENT naming the problem (the caller prints it with UsageText() and exits 2).
absl::StatusOr<Invocation> ParseArgs(const std::vector<std::string>& args, GlobalOptions* globals);

// Parses an integer flag value. Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<int64_t> ParseInt(const std::string& flag, const std::string& value);

// The full usage text (every command and its flags).
std::string UsageText();

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_CLI_H_
