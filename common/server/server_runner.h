#ifndef SHAREDOS_COMMON_SERVER_SERVER_RUNNER_H_
#define SHAREDOS_COMMON_SERVER_SERVER_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/metrics.h"
#include "common/server/loopback.h"
#include "common/server/readiness.h"
#include "common/server/tls.h"
#include "grpcpp/grpcpp.h"

namespace sharedos::common::server {

// Process-wide settings every service binary applies once at start, after parsing flags and
// before starting threads. Turns off absl::Mutex deadlock detection: Debian builds Abseil
// without NDEBUG, so by default every absl::Mutex acquisition — gRPC's own locks included —
// updates one process-wide lock-order graph under a global lock (about 30 ns per uncontended
// lock here, and a point of contention between threads). Tests keep the detection on.
void ConfigureServiceProcess();

// Where and how a service listens. Filled from flags in <svc>_main.cc only.
struct ServerOptions {
  // Host to bind. Plaintext is allowed only on loopback; off it `tls` is required.
  std::string host = "127.0.0.1";
  // 0 picks a free port; the bound port is reported by ServerRunner::port().
  int port = 0;
  // The certificate and key (both set: TLS), and the client CA (set: mTLS); re-read when
  // they change on disk.
  ServerTls tls;
  // How long in-flight calls may take to finish on shutdown before they are cancelled.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // False: no network listener at all, only in-process channels (sharedosd's internal tier).
  bool listen = true;
  // Per-method latency and status metrics of this server's calls (common/server/rpc_metrics.h);
  // null: none. Borrowed; must outlive the server.
  metrics::Metrics* metrics = nullptr;
  // What the server needs to answer (readiness.h): while one is down, grpc.health.v1 reports
  // NOT_SERVING for the server and every service. Empty: SERVING from start to shutdown.
  std::vector<DependencyCheck> dependencies;
  // How often `dependencies` are probed (--health_interval).
  absl::Duration health_interval = absl::Seconds(2);
  // The clock the probing waits on between rounds (a test drives it with a SimulatedClock).
  // Borrowed; must outlive the server.
  const Clock* clock = &RealClock();
  // Threads the server may run calls on (a grpc::ResourceQuota; --grpc_max_threads): a call
  // that finds none is RESOURCE_EXHAUSTED at once instead of a new thread. Long-polls are
  // bounded below it (long_poll_limiter.h), so unary calls always find one.
  // 0: the process's default (SetDefaultMaxThreads; 256 until then).
  int max_threads = 0;
};

// The thread bound of servers whose options leave it 0: set once by a main from its flags
// (capacity_flags.h), before servers start.
void SetDefaultMaxThreads(int max_threads);

// Starts a gRPC server with the given services plus the standard health service (every
// registered service SERVING while every one of options.dependencies is up) and server
// reflection, then owns it until shutdown.
// Thread-safe: Shutdown() may be called from any thread, once or many times.
class ServerRunner {
 public:
  // Errors: INVALID_ARGUMENT (plaintext on a non-loopback host, only one TLS file, bad port;
  // each naming its flag), UNAVAILABLE (the address could not be bound), FAILED_PRECONDITION
  // (TLS files unreadable); see CheckServerTls.
  static absl::StatusOr<std::unique_ptr<ServerRunner>> Start(
      const ServerOptions& options, const std::vector<grpc::Service*>& services);

  ~ServerRunner();
  ServerRunner(const ServerRunner&) = delete;
  ServerRunner& operator=(const ServerRunner&) = delete;

  // The port actually bound (useful with port 0); 0 when not listening.
  int port() const { return port_; }
  // A channel to this server that never leaves the process.
  std::shared_ptr<grpc::Channel> InProcessChannel();
  // "host:port" as a client would dial it.
  std::string address() const;
  grpc::Server* server() { return server_.get(); }
  // The dependencies' last states (ServerOptions::dependencies order); empty without any.
  std::vector<std::pair<std::string, bool>> dependencies();
  // Their details (Readiness::details), in the same order; empty without any.
  std::vector<std::string> dependency_details();

  // Marks every service NOT_SERVING, lets in-flight calls finish within the grace, then stops.
  void Shutdown();
  // Marks every service NOT_SERVING (dependency probes stop) and keeps serving: a load balancer
  // sends no new work while what is in hand finishes. Shutdown follows. Idempotent.
  void MarkNotServing();
  // Blocks until the server has shut down.
  void Wait();

 private:
  ServerRunner(std::unique_ptr<grpc::Server> server, std::string host, int port,
               absl::Duration grace);

  std::unique_ptr<grpc::Server> server_;
  // Null without dependencies. Stopped before the server shuts down.
  std::unique_ptr<Readiness> readiness_;
  std::string host_;
  int port_;
  absl::Duration grace_;
};

// Termination signals (SIGTERM, SIGINT) delivered synchronously: call Block() first thing in
// main(), before any thread starts, so every thread inherits the mask; then Wait() returns the
// signal number when one arrives. No async-signal-unsafe code runs in a handler.
class TerminationSignals {
 public:
  static void Block();
  static int Wait();
};

// Prints the line tools and tests wait for: "<name> listening on <address>". Flushes stdout.
void ReportListening(const std::string& name, const std::string& address);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_SERVER_RUNNER_H_
