#include "envelope_svc/core/turn_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "common/server/access_policy.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;

std::string ExecutionKey(const pb::ExecutionRequest& request) {
  return absl::StrCat(request.context().namespace_id(), std::string(1, '\0'),
                      request.execution_id());
}

}  // namespace

bool ScopeCovers(const common::server::HostScope& scope, const pb::AccessContext& context) {
  return common::server::HostCovers(
      scope, {context.namespace_id(), capability::AddressKey(context.owner()),
              capability::AddressKey(context.authority())});
}

absl::Status CheckTurnId(const std::string& turn_id) {
  return common::validation::CheckString(turn_id, 1, common::validation::kMaxIdentifierLength,
                                         "turn_id");
}

absl::Status TurnTable::Reserve(const Turn& turn) {
  absl::MutexLock lock(&mu_);
  if (by_execution_.size() >= options_.max_turns) {
    return absl::ResourceExhaustedError("too many turns held by this envelope");
  }
  if (!by_execution_.emplace(ExecutionKey(turn.request), turn.id).second) {
    return absl::FailedPreconditionError(absl::StrCat("execution_request.execution_id: \"",
                                                      turn.request.execution_id(),
                                                      "\" is already used by another turn"));
  }
  return absl::OkStatus();
}

void TurnTable::PublishRunning(std::shared_ptr<Turn> turn) {
  absl::MutexLock lock(&mu_);
  deadlines_.emplace(turn->deadline, turn->id);
  running_.insert(turn->id);
  metrics_.TurnOpened();
  const std::string id = turn->id;
  turns_.emplace(id, std::move(turn));
}

void TurnTable::PublishEnded(std::shared_ptr<Turn> turn, absl::Time ended_at) {
  absl::MutexLock lock(&mu_);
  retention_.emplace(ended_at + options_.ended_turn_retention, turn->id);
  const std::string id = turn->id;
  turns_.emplace(id, std::move(turn));
}

bool TurnTable::Retire(const Turn& turn, absl::Time ended_at) {
  absl::MutexLock lock(&mu_);
  if (running_.erase(turn.id) == 0) return false;
  auto [first, last] = deadlines_.equal_range(turn.deadline);
  for (auto it = first; it != last; ++it) {
    if (it->second == turn.id) {
      deadlines_.erase(it);
      break;
    }
  }
  retention_.emplace(ended_at + options_.ended_turn_retention, turn.id);
  return true;
}

std::shared_ptr<Turn> TurnTable::Lookup(const std::string& turn_id) const {
  absl::MutexLock lock(&mu_);
  auto it = turns_.find(turn_id);
  return it == turns_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<Turn>> TurnTable::Find(
    const std::string& turn_id, const common::server::HostScope& scope) const {
  std::shared_ptr<Turn> turn = Lookup(turn_id);
  if (turn == nullptr) {
    return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
  }
  // Another host's turn is as unknown as one that never was (access_policy.h): nothing leaks.
  if (!ScopeCovers(scope, turn->context)) {
    return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
  }
  return turn;
}

std::vector<std::shared_ptr<Turn>> TurnTable::Sweep(absl::Time now) {
  std::vector<std::shared_ptr<Turn>> due;
  absl::MutexLock lock(&mu_);
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now; ++it) {
    if (auto turn = turns_.find(it->second); turn != turns_.end()) due.push_back(turn->second);
  }
  while (!retention_.empty() && retention_.begin()->first <= now) {
    if (auto turn = turns_.find(retention_.begin()->second); turn != turns_.end()) {
      by_execution_.erase(ExecutionKey(turn->second->request));
      turns_.erase(turn);
    }
    retention_.erase(retention_.begin());
  }
  return due;
}

size_t TurnTable::held() const {
  absl::MutexLock lock(&mu_);
  return turns_.size();
}

size_t TurnTable::running() const {
  absl::MutexLock lock(&mu_);
  return running_.size();
}

}  // namespace sharedos::envelope::core
