// A server with no services of its own, used by server_runner_test to prove the bootstrap's
// behaviour as a real process: port 0, the printed address, health, and SIGTERM shutdown.
#include <cstdio>

#include "common/server/server_runner.h"

int main() {
  using sharedos::common::server::ServerOptions;
  using sharedos::common::server::ServerRunner;
  using sharedos::common::server::TerminationSignals;
  TerminationSignals::Block();
  auto runner = ServerRunner::Start(ServerOptions{}, {});
  if (!runner.ok()) {
    std::fprintf(stderr, "%s\n", runner.status().ToString().c_str());
    return 1;
  }
  sharedos::common::server::ReportListening("sample_server", (*runner)->address());
  TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*runner)->Wait();
  std::printf("sample_server stopped\n");
  return 0;
}
