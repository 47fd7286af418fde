#include "common/server/outbox_registry.h"

#include <algorithm>

#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sharedos::common::server {
namespace {

struct Entry {
  const OutboxRegistration* owner;
  std::string writer;
  std::function<int64_t()> depth;
};

ABSL_CONST_INIT absl::Mutex registry_mu(absl::kConstInit);
std::vector<Entry>* registry ABSL_GUARDED_BY(registry_mu) = nullptr;

}  // namespace

OutboxRegistration::OutboxRegistration(std::string writer, std::function<int64_t()> depth) {
  absl::MutexLock lock(&registry_mu);
  if (registry == nullptr) registry = new std::vector<Entry>();
  registry->push_back({this, std::move(writer), std::move(depth)});
}

OutboxRegistration::~OutboxRegistration() {
  absl::MutexLock lock(&registry_mu);
  registry->erase(std::remove_if(registry->begin(), registry->end(),
                                 [this](const Entry& entry) { return entry.owner == this; }),
                  registry->end());
}

std::vector<std::pair<std::string, int64_t>> ProcessOutboxes() {
  absl::MutexLock lock(&registry_mu);
  std::vector<std::pair<std::string, int64_t>> outboxes;
  if (registry == nullptr) return outboxes;
  for (const Entry& entry : *registry) outboxes.emplace_back(entry.writer, entry.depth());
  return outboxes;
}

}  // namespace sharedos::common::server
