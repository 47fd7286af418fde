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
  const std::string& namespace_id = turn.request.context().namespace_id();
  absl::MutexLock lock(&mu_);
  if (auto open = open_by_namespace_.find(namespace_id);
      open != open_by_namespace_.end() && open->second >= options_.max_open_turns_per_namespace) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "open turns in namespace \"", namespace_id, "\": ", open->second, " of ",
        options_.max_open_turns_per_namespace,
        " (quota max_open_turns_per_namespace; --max_open_turns_per_namespace raises it)"));
  }
  if (auto open = open_by_host_.find(turn.host);
      open != open_by_host_.end() && open->second >= options_.max_open_turns_per_host) {
    return absl::ResourceExhaustedError(
        absl::StrCat("open turns of host credential \"", turn.host, "\": ", open->second, " of ",
                     options_.max_open_turns_per_host,
                     " (quota max_open_turns_per_host; --max_open_turns_per_host raises it)"));
  }
  // Ended turns give way to open ones; only open turns can fill the table.
  while (by_execution_.size() >= options_.max_turns) {
    if (!EvictOneLocked()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("open turns held by this envelope: ", by_execution_.size(), " of ",
                       options_.max_turns, " (quota max_turns; --max_turns raises it)"));
    }
  }
  if (!by_execution_.emplace(ExecutionKey(turn.request), turn.id).second) {
    return absl::FailedPreconditionError(absl::StrCat("execution_request.execution_id: \"",
                                                      turn.request.execution_id(),
                                                      "\" is already used by another turn"));
  }
  ++open_by_namespace_[namespace_id];
  ++open_by_host_[turn.host];
  reserved_.insert(turn.id);
  return absl::OkStatus();
}

void TurnTable::CloseLocked(const Turn& turn) {
  auto decrement = [](absl::flat_hash_map<std::string, size_t>& counts, const std::string& key) {
    auto it = counts.find(key);
    if (it == counts.end()) return;
    if (--it->second == 0) counts.erase(it);
  };
  decrement(open_by_namespace_, turn.request.context().namespace_id());
  decrement(open_by_host_, turn.host);
}

bool TurnTable::ForgetLocked(const std::string& turn_id) {
  auto turn = turns_.find(turn_id);
  if (turn == turns_.end() || running_.contains(turn_id)) return false;
  by_execution_.erase(ExecutionKey(turn->second->request));
  turns_.erase(turn);
  return true;
}

bool TurnTable::EvictOneLocked() {
  // The turns ended at admission first (cheapest to lose), then those closest to forgetting.
  while (!admission_ended_.empty()) {
    const std::string id = std::move(admission_ended_.front().second);
    admission_ended_.pop_front();
    if (ForgetLocked(id)) return true;
  }
  while (!retention_.empty()) {
    const std::string id = std::move(retention_.begin()->second);
    retention_.erase(retention_.begin());
    if (ForgetLocked(id)) return true;
  }
  return false;
}

void TurnTable::PublishRunning(std::shared_ptr<Turn> turn) {
  absl::MutexLock lock(&mu_);
  reserved_.erase(turn->id);
  deadlines_.emplace(turn->deadline, turn->id);
  running_.insert(turn->id);
  metrics_.TurnOpened();
  const std::string id = turn->id;
  turns_.emplace(id, std::move(turn));
}

void TurnTable::PublishEnded(std::shared_ptr<Turn> turn, absl::Time ended_at) {
  absl::MutexLock lock(&mu_);
  if (reserved_.erase(turn->id) > 0) CloseLocked(*turn);
  const std::string id = turn->id;
  turns_.emplace(id, std::move(turn));
  admission_ended_.emplace_back(ended_at + options_.ended_turn_retention, id);
  while (admission_ended_.size() > options_.max_admission_ended) {
    const std::string oldest = std::move(admission_ended_.front().second);
    admission_ended_.pop_front();
    ForgetLocked(oldest);
  }
}

bool TurnTable::Retire(const Turn& turn, absl::Time ended_at) {
  absl::MutexLock lock(&mu_);
  if (running_.erase(turn.id) == 0) return false;
  CloseLocked(turn);
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
    ForgetLocked(retention_.begin()->second);
    retention_.erase(retention_.begin());
  }
  while (!admission_ended_.empty() && admission_ended_.front().first <= now) {
    ForgetLocked(admission_ended_.front().second);
    admission_ended_.pop_front();
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

size_t TurnTable::AwaitNoneRunning(const common::Clock& clock, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_.empty(); };
  clock.AwaitWithTimeout(&mu_, absl::Condition(&none), timeout);
  return running_.size();
}

size_t TurnTable::open_in_namespace(const std::string& namespace_id) const {
  absl::MutexLock lock(&mu_);
  auto it = open_by_namespace_.find(namespace_id);
  return it == open_by_namespace_.end() ? 0 : it->second;
}

size_t TurnTable::open_of_host(const std::string& host) const {
  absl::MutexLock lock(&mu_);
  auto it = open_by_host_.find(host);
  return it == open_by_host_.end() ? 0 : it->second;
}

}  // namespace sharedos::envelope::core
