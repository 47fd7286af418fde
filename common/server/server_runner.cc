#include "common/server/server_runner.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/malformed_request.h"
#include "common/server/rpc_metrics.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"

namespace sharedos::common::server {
namespace {

// Idle polling threads the sync server keeps (see Start). Measured (docs/performance.md,
// 2026-12-06): 16 raised Authorize throughput at 16 callers most but cost one caller ~20 % more
// server CPU per call; 4 keeps most of the gain at no measurable cost to one caller.
constexpr int kMaxPollers = 4;

std::atomic<int> default_max_threads{256};

std::string HostForUri(const std::string& host) {
  if (host.find(':') != std::string::npos && host.front() != '[') {
    return absl::StrCat("[", host, "]");
  }
  return host;
}

}  // namespace

void ConfigureServiceProcess() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

void SetDefaultMaxThreads(int max_threads) { default_max_threads.store(max_threads); }

absl::StatusOr<std::unique_ptr<ServerRunner>> ServerRunner::Start(
    const ServerOptions& options, const std::vector<grpc::Service*>& services) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port: out of range: ", options.port));
  }
  if (options.host.empty()) {
    return absl::InvalidArgumentError("host: empty");
  }
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (options.listen) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> made =
        NewServerCredentials(options.tls, options.host);
    if (!made.ok()) return made.status();
    credentials = *std::move(made);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<MalformedRequestInterceptorFactory>());
  if (options.metrics != nullptr) {
    interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(*options.metrics));
  }
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  // Keep up to this many idle threads polling for calls: with gRPC's default (2), a burst of
  // concurrent calls makes the sync server create a thread per call beyond it and end it after.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kMaxPollers);
  // Threads are bounded (issue 34): past the quota a call is refused, never given a new thread.
  grpc::ResourceQuota quota("sharedos-server");
  quota.SetMaxThreads(std::max(
      options.max_threads > 0 ? options.max_threads : default_max_threads.load(), kMaxPollers + 1));
  builder.SetResourceQuota(quota);
  int bound_port = 0;
  if (options.listen) {
    builder.AddListeningPort(absl::StrCat(HostForUri(options.host), ":", options.port), credentials,
                             &bound_port);
  }
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (options.listen && bound_port == 0)) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.host, ":", options.port));
  }
  std::unique_ptr<ServerRunner> runner(
      new ServerRunner(std::move(server), options.host, bound_port, options.shutdown_grace));
  // The default health service reports the overall server and every registered service.
  grpc::HealthCheckServiceInterface* health = runner->server_->GetHealthCheckService();
  if (options.dependencies.empty()) {
    health->SetServingStatus(true);
  } else {
    runner->readiness_ = Readiness::Start(health, options.dependencies, options.health_interval,
                                          options.metrics, *options.clock);
  }
  return runner;
}

ServerRunner::ServerRunner(std::unique_ptr<grpc::Server> server, std::string host, int port,
                           absl::Duration grace)
    : server_(std::move(server)), host_(std::move(host)), port_(port), grace_(grace) {}

ServerRunner::~ServerRunner() {
  Shutdown();
  Wait();
}

std::string ServerRunner::address() const { return absl::StrCat(HostForUri(host_), ":", port_); }

std::shared_ptr<grpc::Channel> ServerRunner::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

std::vector<std::pair<std::string, bool>> ServerRunner::dependencies() {
  if (readiness_ == nullptr) return {};
  return readiness_->dependencies();
}

std::vector<std::string> ServerRunner::dependency_details() {
  if (readiness_ == nullptr) return {};
  return readiness_->details();
}

void ServerRunner::MarkNotServing() {
  // Readiness::Stop is idempotent and leaves the status as set; the health service's setter is
  // thread-safe.
  if (readiness_ != nullptr) readiness_->Stop();
  server_->GetHealthCheckService()->SetServingStatus(false);
}

void ServerRunner::Shutdown() {
  // grpc::Server::Shutdown is itself thread-safe and idempotent; so is Readiness::Stop.
  MarkNotServing();
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoSeconds(grace_));
}

void ServerRunner::Wait() { server_->Wait(); }

void TerminationSignals::Block() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int TerminationSignals::Wait() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  return signal_number;
}

void ReportListening(const std::string& name, const std::string& address) {
  std::printf("%s listening on %s\n", name.c_str(), address.c_str());
  std::fflush(stdout);
}

}  // namespace sharedos::common::server
