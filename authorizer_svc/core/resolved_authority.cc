#include "authorizer_svc/core/resolved_authority.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "capability/address.h"
#include "capability/matching.h"
#include "capability/reason_codes.h"
#include "common/json/code_unit_sort.h"
#include "common/json/hashes.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"

namespace sharedos::authorizer::core {
namespace {

namespace validation = ::sharedos::common::validation;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;

// A process-wide map of shared, immutable values, bounded by count and by the bytes its users
// account for each value; emptied when an insertion would pass either bound. Thread-safe.
template <typename Key, typename Value>
class BoundedCache {
 public:
  struct Added {
    Key key;
    std::shared_ptr<const Value> value;
    size_t bytes = 0;
  };

  BoundedCache(size_t max_entries, size_t max_bytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  std::shared_ptr<const Value> Find(const Key& key) {
    absl::MutexLock lock(&mu_);
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }

  // (*found)[i] = the value of keys[i], or null; under one lock.
  void FindAll(const std::vector<Key>& keys, std::vector<std::shared_ptr<const Value>>* found) {
    found->assign(keys.size(), nullptr);
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = entries_.find(keys[i]);
      if (it != entries_.end()) (*found)[i] = it->second;
    }
  }

  // Under one lock; a key already present keeps its value.
  void InsertAll(std::vector<Added> added) {
    absl::MutexLock lock(&mu_);
    for (Added& one : added) {
      if (entries_.size() >= max_entries_ || bytes_ + one.bytes > max_bytes_) {
        entries_.clear();
        bytes_ = 0;
      }
      if (entries_.try_emplace(std::move(one.key), std::move(one.value)).second) {
        bytes_ += one.bytes;
      }
    }
  }

  size_t size() {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }

  void Clear() {
    absl::MutexLock lock(&mu_);
    entries_.clear();
    bytes_ = 0;
  }

 private:
  const size_t max_entries_;
  const size_t max_bytes_;
  absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<const Value>> entries_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Grants this process has already checked strictly and rendered for authorityHash, keyed by
// their exact serialized bytes as the grant source returned them. Checking
// (ValidateCapabilityGrant) and rendering (GrantHashTextOf) are functions of the grant alone,
// and equal bytes parse to equal grants, so an entry is what checking and rendering those bytes
// again would give; different bytes (a changed value, an unknown field) are a different key.
// Only grants that passed both are kept. Bounded: 16,384 grants or 64 MiB.
struct MemoEntry {
  CapabilityGrant checked;  // As validated (trimmed).
  bool trimmed = false;     // `checked` differs from the grant the key was serialized from.
  common::GrantHashText text;
};
using GrantMemo = BoundedCache<std::string, MemoEntry>;

GrantMemo& Memo() {
  static GrantMemo* const memo = new GrantMemo(16384, size_t{64} << 20);
  return *memo;
}

// Grant sets already resolved, keyed by the memo entries they were built from (in order) and
// the owner's serialized address (the index leaves out capabilities of other owners). A set is
// a function of exactly that: its grants are the entries' checked grants, its hash and sorted
// ids come from their texts, and its index from the grants and the owner. The set pins its
// entries, so an entry's address names the same entry for as long as the set can be found.
// Bounded: 1,024 sets or about 128 MiB.
struct GrantSetKey {
  std::vector<const void*> entries;
  std::string owner;
  bool operator==(const GrantSetKey& other) const {
    return entries == other.entries && owner == other.owner;
  }
  template <typename H>
  friend H AbslHashValue(H state, const GrantSetKey& key) {
    return H::combine(std::move(state), key.entries, key.owner);
  }
};
using GrantSetCache = BoundedCache<GrantSetKey, internal::GrantSet>;

GrantSetCache& GrantSets() {
  static GrantSetCache* const sets = new GrantSetCache(1024, size_t{128} << 20);
  return *sets;
}

uint32_t Intern(absl::flat_hash_map<absl::string_view, uint32_t>& table, absl::string_view value) {
  return table.try_emplace(value, static_cast<uint32_t>(table.size())).first->second;
}

std::optional<capability::RejectionReason> ScopeRejection(const CapabilityGrant& grant,
                                                          const AccessContext& context) {
  if (!capability::AddressEquals(grant.issuer(), context.authority()))
    return capability::RejectionReason::kIssuer;
  if (!capability::AddressEquals(grant.subject(), context.actor()))
    return capability::RejectionReason::kSubject;
  if (grant.namespace_id() != context.namespace_id())
    return capability::RejectionReason::kNamespace;
  return std::nullopt;
}

// Interns and indexes every capability of `grants` that could ever match a request of a context
// with this owner. The tables view the strings of `grants`, which must outlive the result
// unchanged.
internal::CompiledIndex CompileIndex(const protocol::v1::Address& owner,
                                     const std::vector<CapabilityGrant>& grants) {
  internal::CompiledIndex index;
  size_t capabilities = 0;
  for (const CapabilityGrant& grant : grants) capabilities += grant.capabilities_size();
  index.capabilities.reserve(capabilities);
  index.segments.reserve(capabilities * 2);
  for (uint32_t g = 0; g < grants.size(); ++g) {
    for (const Capability& capability : grants[g].capabilities()) {
      const auto& resource = capability.resource();
      // A request's owner is always the context owner once it is valid (§2.5), so a
      // capability owned by anyone else can never match it.
      if (resource.has_owner() && !capability::AddressEquals(resource.owner(), owner)) continue;
      if (capability.scope() != SCOPE_EXACT && capability.scope() != SCOPE_DESCENDANTS) continue;

      const uint32_t position = static_cast<uint32_t>(index.capabilities.size());
      internal::CompiledCapability& compiled_capability = index.capabilities.emplace_back();
      compiled_capability.grant = g;
      compiled_capability.descendants = capability.scope() == SCOPE_DESCENDANTS;
      compiled_capability.path_begin = static_cast<uint32_t>(index.segments.size());
      compiled_capability.path_size = static_cast<uint32_t>(resource.path_size());
      for (const std::string& segment : resource.path()) {
        index.segments.push_back(Intern(index.segment_ids, segment));
      }
      if (!resource.path().empty()) {
        compiled_capability.first_segment = index.segments[compiled_capability.path_begin];
      }

      const uint32_t ns = Intern(index.namespace_ids, resource.namespace_());
      if (capability::ActionsCover(capability.actions(), capability::kWildcardAction)) {
        index.wildcard[ns].push_back(position);
        continue;
      }
      for (const std::string& action : capability.actions()) {
        const uint64_t key = (uint64_t{ns} << 32) | Intern(index.action_ids, action);
        std::vector<uint32_t>& list = index.by_action[key];
        if (list.empty() || list.back() != position) list.push_back(position);  // Repeated.
      }
    }
  }
  return index;
}

// The per-turn part: each grant judged against this context (scope, activity at admission),
// and the host policy's rules for it.
internal::CompiledAuthority CompileForContext(const AccessContext& context, bool context_usable,
                                              const internal::GrantSet& set,
                                              const HostPolicyState& host_policy) {
  internal::CompiledAuthority compiled;
  compiled.context_usable = context_usable;
  if (context_usable) compiled.admitted_ms = *capability::TimestampMillis(context.now());
  compiled.index = &set.index;
  compiled.grants.reserve(set.grants.size());
  for (const CapabilityGrant& grant : set.grants) {
    internal::CompiledGrant& out = compiled.grants.emplace_back();
    out.scope_rejection = ScopeRejection(grant, context);
    out.activity = capability::AssessGrantActivity(grant, context.purpose(), compiled.admitted_ms);
    out.eligible_at_admission = !out.scope_rejection.has_value() &&
                                !out.activity.window_closed_at_admission &&
                                !out.activity.purpose_excluded;
    out.has_parent = !grant.parent_grant_id().empty();
    if (grant.constraints().has_max_uses()) out.max_uses = grant.constraints().max_uses();
  }
  if (host_policy.status() == HostPolicyState::Status::kLoaded) {
    for (const HostPolicyRule& rule : host_policy.policy().rules) {
      if (RuleAppliesTo(rule, context)) compiled.rules.push_back(&rule);
    }
  }
  return compiled;
}

// Grant ids sorted by UTF-16 code unit (byte order when all are ASCII).
std::vector<std::string> SortedIds(const std::vector<CapabilityGrant>& grants) {
  std::vector<std::string> ids;
  ids.reserve(grants.size());
  bool ascii = true;
  for (const CapabilityGrant& grant : grants) {
    ids.push_back(grant.id());
    for (const char c : grant.id()) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  }
  if (ascii) {
    std::sort(ids.begin(), ids.end());
  } else {
    common::SortByCodeUnits(&ids);
  }
  return ids;
}

}  // namespace

namespace internal {
size_t GrantMemoSizeForTesting() { return Memo().size(); }
size_t GrantSetCacheSizeForTesting() { return GrantSets().size(); }
void ClearGrantMemoForTesting() {
  GrantSets().Clear();
  Memo().Clear();
}
}  // namespace internal

AuthorityResolution AuthorityResolution::Unavailable(capability::AuthorityCode code,
                                                     std::string detail) {
  AuthorityResolution resolution;
  resolution.code_ = code;
  resolution.detail_ = std::move(detail);
  return resolution;
}

AuthorityResolution AuthorityResolution::Resolve(const AccessContext& context,
                                                 std::vector<CapabilityGrant> grants,
                                                 HostPolicyState host_policy) {
  if (grants.size() > validation::kMaxResolvedGrants) {
    return Unavailable(
        capability::AuthorityCode::kGrantLimitExceeded,
        absl::StrCat(grants.size(), " grants, more than ", validation::kMaxResolvedGrants));
  }
  // Strict validation of each grant, unless these exact bytes already passed it here.
  GrantMemo& memo = Memo();
  std::vector<std::string> keys(grants.size());
  for (size_t i = 0; i < grants.size(); ++i) grants[i].SerializeToString(&keys[i]);
  std::vector<std::shared_ptr<const MemoEntry>> known;
  memo.FindAll(keys, &known);
  bool all_known = true;
  const validation::PathRef grants_path("grants");
  for (size_t i = 0; i < grants.size(); ++i) {
    if (known[i] != nullptr) continue;
    all_known = false;
    absl::Status status = validation::ValidateCapabilityGrant(&grants[i], grants_path.Index(i));
    if (!status.ok()) {
      return Unavailable(capability::AuthorityCode::kInvalidGrantMaterial,
                         std::string(status.message()));
    }
  }
  // The context is judged per decision (invalid_context); a copy is validated here only to
  // trim it the way grants are trimmed.
  auto authority = std::shared_ptr<ResolvedAuthority>(new ResolvedAuthority());
  authority->context_ = context;
  const bool context_usable =
      validation::ValidateAccessContext(&authority->context_, "context").ok();
  if (!context_usable) authority->context_ = context;
  // A known grant's checked form is its entry's (when validation trimmed it) or the grant as
  // given.
  const auto checked = [&](size_t i) -> const CapabilityGrant& {
    return known[i] != nullptr && known[i]->trimmed ? known[i]->checked : grants[i];
  };
  for (size_t i = 0; i < grants.size(); ++i) {
    if (std::optional<capability::RejectionReason> mismatch =
            ScopeRejection(checked(i), authority->context_)) {
      return Unavailable(
          capability::AuthorityCode::kGrantScopeMismatch,
          absl::StrCat("grants[", i, "] (", checked(i).id(), "): ", Name(*mismatch)));
    }
  }

  // The grant set: found again when every grant was known and these grants were resolved for
  // this owner before; else built (each grant not yet known rendered, in order so that the first
  // failing grant is named, and kept).
  GrantSetCache& sets = GrantSets();
  GrantSetKey set_key;
  set_key.owner = authority->context_.owner().SerializeAsString();
  std::shared_ptr<const internal::GrantSet> set;
  if (all_known) {
    set_key.entries.reserve(known.size());
    for (const auto& entry : known) set_key.entries.push_back(entry.get());
    set = sets.Find(set_key);
  }
  if (set == nullptr) {
    std::vector<GrantMemo::Added> added;
    for (size_t i = 0; i < grants.size(); ++i) {
      if (known[i] != nullptr) {
        if (known[i]->trimmed) grants[i] = known[i]->checked;
        continue;
      }
      absl::StatusOr<common::GrantHashText> text = common::GrantHashTextOf(grants[i]);
      if (!text.ok()) {
        return Unavailable(capability::AuthorityCode::kInvalidGrantMaterial,
                           std::string(text.status().message()));
      }
      auto entry = std::make_shared<MemoEntry>();
      entry->text = *std::move(text);
      std::string checked_bytes;
      grants[i].SerializeToString(&checked_bytes);
      entry->trimmed = checked_bytes != keys[i];
      if (entry->trimmed) entry->checked = grants[i];
      const size_t bytes = keys[i].size() + entry->text.canonical.size() +
                           entry->text.quoted.size() + entry->checked.SpaceUsedLong();
      known[i] = entry;
      added.push_back({std::move(keys[i]), std::move(entry), bytes});
    }
    if (!added.empty()) memo.InsertAll(std::move(added));

    auto built = std::make_shared<internal::GrantSet>();
    std::vector<const common::GrantHashText*> texts(grants.size());
    size_t bytes = sizeof(internal::GrantSet);
    built->pins.reserve(known.size());
    set_key.entries.clear();
    set_key.entries.reserve(known.size());
    for (size_t i = 0; i < grants.size(); ++i) {
      texts[i] = &known[i]->text;
      bytes += known[i]->text.canonical.size() + known[i]->text.quoted.size();
      set_key.entries.push_back(known[i].get());
      built->pins.push_back(known[i]);
    }
    built->hash = common::AuthorityHashOfTexts(std::move(texts));
    built->grants = std::move(grants);
    built->sorted_ids = SortedIds(built->grants);
    built->index = CompileIndex(authority->context_.owner(), built->grants);
    for (const CapabilityGrant& grant : built->grants) bytes += grant.SpaceUsedLong();
    bytes += built->index.capabilities.capacity() * sizeof(internal::CompiledCapability) +
             built->index.segments.capacity() * sizeof(uint32_t);
    set = std::move(built);
    sets.InsertAll({{std::move(set_key), set, bytes}});
  }

  AuthoritySnapshot& snapshot = authority->snapshot_;
  snapshot.hash = set->hash;
  snapshot.grant_ids = set->sorted_ids;
  snapshot.grant_count = static_cast<int>(set->grants.size());
  snapshot.loaded_at = authority->context_.now();

  authority->host_policy_ = std::move(host_policy);
  authority->compiled_ =
      CompileForContext(authority->context_, context_usable, *set, authority->host_policy_);
  authority->set_ = std::move(set);

  AuthorityResolution resolution;
  resolution.authority_ = std::move(authority);
  return resolution;
}

}  // namespace sharedos::authorizer::core
