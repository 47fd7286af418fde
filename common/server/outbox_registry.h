// The audit outboxes of this process, by writer (audit_svc/client registers each it opens), so
// that the status service (status_service.h) can report their depth without owning them.
// Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_OUTBOX_REGISTRY_H_
#define SHAREDOS_COMMON_SERVER_OUTBOX_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sharedos::common::server {

// Registered while alive: destroy it before what `depth` reads.
class OutboxRegistration {
 public:
  // `writer`: a fixed word ("grantstore", "authorizer", "envelope"); `depth`: the records
  // waiting (negative: unreadable).
  OutboxRegistration(std::string writer, std::function<int64_t()> depth);
  ~OutboxRegistration();
  OutboxRegistration(const OutboxRegistration&) = delete;
  OutboxRegistration& operator=(const OutboxRegistration&) = delete;
};

// Every registered outbox's writer and depth, in registration order.
std::vector<std::pair<std::string, int64_t>> ProcessOutboxes();

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_OUTBOX_REGISTRY_H_
