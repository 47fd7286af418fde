#include "common/server/status_service.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/server/access_policy.h"
#include "common/server/outbox_registry.h"
#include "common/status/status_macros.h"

namespace sharedos::common::server {
namespace {

namespace v1 = ::sharedos::status::v1;

constexpr size_t kHashPrefix = 16;

// "scheme://user:secret@host" → "scheme://user:****@host".
std::string RedactUserInfo(std::string uri) {
  const size_t scheme_end = uri.find("://");
  if (scheme_end == std::string::npos) return uri;
  const size_t authority = scheme_end + 3;
  const size_t authority_end = std::min(uri.find_first_of("/?", authority), uri.size());
  const size_t at = uri.rfind('@', authority_end);
  if (at == std::string::npos || at < authority) return uri;
  const size_t colon = uri.find(':', authority);
  if (colon == std::string::npos || colon > at) return uri;
  return absl::StrCat(uri.substr(0, colon + 1), "****", uri.substr(at));
}

// "...?a=1&password=secret&b=2" → "...?a=1&password=****&b=2".
std::string RedactQueryPassword(std::string uri) {
  const size_t query = uri.find('?');
  if (query == std::string::npos) return uri;
  size_t at = query + 1;
  while (at < uri.size()) {
    const size_t end = std::min(uri.find('&', at), uri.size());
    if (absl::StartsWithIgnoreCase(absl::string_view(uri).substr(at, end - at), "password=")) {
      const size_t value = at + 9;
      uri.replace(value, end - value, "****");
      at = value + 4 + 1;
      continue;
    }
    at = end + 1;
  }
  return uri;
}

}  // namespace

std::pair<std::string, std::string> DescribeStore(absl::string_view db) {
  if (absl::StartsWith(db, "postgres://") || absl::StartsWith(db, "postgresql://")) {
    return {"postgresql", RedactQueryPassword(RedactUserInfo(std::string(db)))};
  }
  return {"sqlite", std::string(db)};
}

StatusService::StatusService(const Authenticator& authenticator, std::vector<StatusInfo> services)
    : rpc_(authenticator), services_(std::move(services)) {}

void StatusService::Attach(ServerRunner* runner) {
  absl::MutexLock lock(&mu_);
  runner_ = runner;
}

grpc::Status StatusService::GetStatus(grpc::ServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) {
  static const std::string kMethod = "sharedos.status.v1.Status/GetStatus";
  return rpc_.Unary(*context, kMethod, response,
                    [&](const Principal& caller) -> absl::StatusOr<v1::GetStatusResponse> {
                      // The process serves every namespace: the operator's.
                      RETURN_IF_ERROR(CheckTarget(kMethod, caller, Target()));
                      return Status();
                    });
}

absl::StatusOr<v1::GetStatusResponse> StatusService::Status() {
  std::vector<std::pair<std::string, bool>> dependencies;
  std::vector<std::string> details;
  bool attached = false;
  {
    absl::MutexLock lock(&mu_);
    attached = runner_ != nullptr;
    if (attached) {
      dependencies = runner_->dependencies();
      details = runner_->dependency_details();
    }
  }
  const bool serving =
      attached && std::all_of(dependencies.begin(), dependencies.end(),
                              [](const std::pair<std::string, bool>& d) { return d.second; });
  v1::GetStatusResponse response;
  response.set_version(kSharedosVersion);
  for (const StatusInfo& info : services_) {
    v1::ServiceStatus* service = response.add_services();
    service->set_service(info.service);
    service->set_health(serving ? "SERVING" : "NOT_SERVING");
    for (size_t i = 0; i < dependencies.size(); ++i) {
      v1::DependencyStatus* dependency = service->add_dependencies();
      dependency->set_name(dependencies[i].first);
      dependency->set_up(dependencies[i].second);
      if (i < details.size()) dependency->set_detail(details[i]);
    }
    if (!info.store.empty()) {
      auto [kind, location] = DescribeStore(info.store);
      service->mutable_store()->set_kind(kind);
      service->mutable_store()->set_location(location);
    }
    if (info.audit_head) {
      absl::StatusOr<std::pair<int64_t, std::string>> head = info.audit_head();
      if (!head.ok()) return head.status();
      service->mutable_audit_head()->set_sequence(head->first);
      service->mutable_audit_head()->set_hash_prefix(head->second.substr(0, kHashPrefix));
    }
  }
  for (const auto& [writer, depth] : ProcessOutboxes()) {
    v1::OutboxStatus* outbox = response.add_outboxes();
    outbox->set_writer(writer);
    outbox->set_depth(depth);
  }
  return response;
}

}  // namespace sharedos::common::server
