// What every SharedOS composition root does the same way (house style 27): parse the command
// line, refuse a bad start-up with "<binary>: <what>" and exit code 2, serve until SIGTERM or
// SIGINT, shut down. The shared flags themselves are in service_flags.h (services) and
// audit_svc/client/audit_writer_flags.h (audit writers); this library defines none, so sharedosd,
// which has flags of its own, links it too.

#ifndef SHAREDOS_COMMON_SERVER_SERVICE_MAIN_H_
#define SHAREDOS_COMMON_SERVER_SERVICE_MAIN_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/client/channel.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/server/status_service.h"

namespace sharedos::common::server {

// The exit code of a refused start-up (a bad flag, a file that cannot be read, a port in use).
inline constexpr int kExitStartupFailed = 2;

// What a binary tells the bootstrap about itself.
struct ServiceBinary {
  // "audit_svc": the prefix of every error line and the name in "<name> listening on <address>".
  std::string name;
  // The usage line of --help.
  std::string usage;
  // Help texts replacing a shared flag's own, by flag name (e.g. "credentials": a service says
  // who may call it).
  std::map<std::string, std::string> flag_help;
};

// First thing in main(): blocks the termination signals (before any thread starts, so every
// thread inherits the mask), installs the usage line and help texts, parses the command line
// (absl exits on --help and on an unknown flag, as it always did) and applies
// ConfigureServiceProcess().
void ParseServiceCommandLine(int argc, char** argv, const ServiceBinary& binary);

// The help text of shared flag `flag`: the running binary's (ServiceBinary::flag_help) or
// `fallback`. The help expression of every shared ABSL_FLAG; absl evaluates it when it prints
// help, after ParseServiceCommandLine installed the binary's texts.
std::string SharedFlagHelp(absl::string_view flag, absl::string_view fallback);

// Prints "<name>: <what>" on stderr (a start-up notice).
void Notice(absl::string_view name, absl::string_view what);

// Prints "<name>: <message of error>" on stderr and returns kExitStartupFailed: a main's
// `return Fail(binary.name, status);`.
int Fail(absl::string_view name, const absl::Status& error);

// The value of a `full | normal` durability flag: true for full. Errors: INVALID_ARGUMENT
// "--<flag>: must be full or normal".
absl::StatusOr<bool> IsFullDurability(absl::string_view flag, absl::string_view value);

// A service this one calls: its channel and the bearer token this one presents there.
struct Upstream {
  std::shared_ptr<grpc::Channel> channel;
  std::string token;
};

// The service named by the values of --<name>_target (host:port) and --<name>_token_file (its
// first line is the token), reached over `tls` (common/client/channel.h: TLS verified against
// its CA, or plaintext on loopback). Errors: INVALID_ARGUMENT "--<name>_target: required" and
// those of client::NewChannel; those of ReadFlagToken for --<name>_token_file.
absl::StatusOr<Upstream> ReadUpstream(absl::string_view name, const std::string& target,
                                      const std::string& token_file, const client::ChannelTls& tls);

// What a service's Build… hands its main to serve: the builders' owning classes (e.g.
// grantstore_svc/server/grantstore_server.h) implement it. Used from main's thread only.
class Servable {
 public:
  virtual ~Servable() = default;

  // The gRPC adapters to register (a grpc::Service is registered with one server only).
  virtual std::vector<grpc::Service*> services() = 0;
  // Listeners of its own beside the gRPC server, as {label, address}; each is reported after
  // the gRPC server as "<name> <label> listening on <address>".
  virtual std::vector<std::pair<std::string, std::string>> side_listeners() const { return {}; }
  // Stops them; called on termination before the gRPC server shuts down.
  virtual void StopSideListeners() {}
  // Called on termination first, while the gRPC server and side listeners still serve and its
  // health already answers NOT_SERVING: a service that holds work in memory (an envelope
  // replica's open turns, ADR 0011) finishes it here, bounded by its own deadline.
  virtual void Drain() {}
  // What it needs to answer: the gRPC server reports NOT_SERVING while one is down
  // (common/server/readiness.h). Called once, before the server starts.
  virtual std::vector<DependencyCheck> dependencies() { return {}; }
  // What `sharedosctl status` shows of it beside its health (status_service.h; `service` is
  // filled in with the binary's name).
  virtual StatusInfo status_info() { return {}; }
};

// `servable` with `dependencies` and `status` (a main knows what its service calls and where
// its store is).
std::unique_ptr<Servable> WithDependencies(std::unique_ptr<Servable> servable,
                                           std::vector<DependencyCheck> dependencies,
                                           StatusInfo status = StatusInfo());

// The rest of every service's main: starts `servable`'s services on `options` (its
// dependencies() deciding health; with `authenticator`, sharedos.status.v1.Status beside them,
// for operators), reports
// "<name> listening on <address>" (then its side listeners), waits for SIGTERM or SIGINT, marks
// it NOT_SERVING and lets the servable drain (Servable::Drain), stops the side listeners, shuts the
// server down (in-flight calls get the grace) and returns 0. A server that cannot start is refused
// like any start-up error (Fail: exit code 2).
int ServeUntilTerminated(absl::string_view name, const ServerOptions& options, Servable& servable,
                         const Authenticator* authenticator = nullptr);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_SERVICE_MAIN_H_
