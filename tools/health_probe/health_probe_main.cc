// health_probe --target=HOST:PORT [--service=NAME] [--timeout=5s] [--mode=ready|live] [--tls_ca=PEM
// [--tls_client_cert=PEM --tls_client_key=PEM] [--tls_server_name=NAME]]
// Exit 0: SERVING (--mode=live: any answer). Exit 1: anything else, said on one line. Exit 2:
// usage.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tools/health_probe/health_probe.h"

int main(int argc, char** argv) {
  namespace probe = ::sharedos::health_probe;
  // One line of output (a HEALTHCHECK's log keeps it): gRPC's own logging stays quiet unless the
  // operator asks for it.
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  auto options = probe::ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::cerr << "health_probe: " << options.status().message() << "\n";
    return 2;
  }
  auto status = probe::Check(*options);
  if (!status.ok()) {
    std::cout << "health_probe: " << options->target << ": "
              << absl::StatusCodeToString(status.status().code()) << ": "
              << status.status().message() << "\n";
    return 1;
  }
  std::cout << "health_probe: " << options->target << ": " << *status << "\n";
  return probe::Healthy(*options, status) ? 0 : 1;
}
