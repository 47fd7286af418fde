// sharedos.status.v1.Status (proto/sharedos/status/v1/status.proto): each service's health and
// its dependencies (readiness.h), the version, the store (a PostgreSQL URI without its password),
// the audit chain's head and this process's audit outboxes (outbox_registry.h). Operators only.
// Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_STATUS_SERVICE_H_
#define SHAREDOS_COMMON_SERVER_STATUS_SERVICE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "common/server/server_runner.h"
#include "sharedos/status/v1/status.grpc.pb.h"

namespace sharedos::common::server {

// The release every binary reports (package.json's "version").
inline constexpr char kSharedosVersion[] = "0.0.0";

// What a service shows beside its health.
struct StatusInfo {
  // "grantstore_svc", ...
  std::string service;
  // Its --db value; empty: it has no store.
  std::string store;
  // The audit chain's head (sequence, full hash); null: not the audit log.
  std::function<absl::StatusOr<std::pair<int64_t, std::string>>()> audit_head;
};

// {"sqlite", path} or {"postgresql", the URI with a password in its user info or its query
// replaced by "****"}.
std::pair<std::string, std::string> DescribeStore(absl::string_view db);

class StatusService final : public sharedos::status::v1::Status::Service {
 public:
  // Borrows `authenticator`, which must outlive it.
  StatusService(const Authenticator& authenticator, std::vector<StatusInfo> services);

  // The server whose health and dependencies it reports (set once it started; until then every
  // service reads NOT_SERVING). Borrowed; must outlive it or be detached with nullptr.
  void Attach(ServerRunner* runner) ABSL_LOCKS_EXCLUDED(mu_);

  grpc::Status GetStatus(grpc::ServerContext* context,
                         const sharedos::status::v1::GetStatusRequest* request,
                         sharedos::status::v1::GetStatusResponse* response) override;

 private:
  absl::StatusOr<sharedos::status::v1::GetStatusResponse> Status() ABSL_LOCKS_EXCLUDED(mu_);

  const RpcAdapter rpc_;
  const std::vector<StatusInfo> services_;
  absl::Mutex mu_;
  ServerRunner* runner_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_STATUS_SERVICE_H_
