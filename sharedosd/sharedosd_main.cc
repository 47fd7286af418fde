// sharedosd: SharedOS in one process on its embedded default (SQLite files in one data directory).
//
// Today it starts the shared service bootstrap — gRPC health and reflection on loopback — and
// prepares the data directory. The four services (grantstore, audit, authorizer, envelope) are
// wired in here as they land; until then it says so at start-up rather than pretending.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/server/server_runner.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 50051, "Port to listen on; 0 picks a free port and prints it.");
ABSL_FLAG(std::string, data_dir, "sharedos-data", "Directory holding the SQLite files.");

int main(int argc, char** argv) {
  using sharedos::common::server::ServerOptions;
  using sharedos::common::server::ServerRunner;
  using sharedos::common::server::TerminationSignals;

  TerminationSignals::Block();
  absl::SetProgramUsageMessage("SharedOS in one process on SQLite (the embedded default).");
  absl::ParseCommandLine(argc, argv);

  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "sharedosd: --data_dir %s: %s\n", data_dir.c_str(), std::strerror(errno));
    return 2;
  }

  ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  auto runner = ServerRunner::Start(options, {});
  if (!runner.ok()) {
    std::fprintf(stderr, "sharedosd: %s\n", runner.status().ToString().c_str());
    return 2;
  }
  sharedos::common::server::ReportListening("sharedosd", (*runner)->address());
  std::printf(
      "sharedosd: data directory %s\n"
      "sharedosd: serving gRPC health and reflection only; the grantstore, audit, authorizer and\n"
      "           envelope services are not built yet (see README.md, \"Status\").\n"
      "sharedosd: stop with Ctrl-C.\n",
      data_dir.c_str());
  std::fflush(stdout);

  TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*runner)->Wait();
  std::printf("sharedosd: stopped\n");
  return 0;
}
