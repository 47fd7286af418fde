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

// Grants this process has already checked strictly and rendered for authorityHash, keyed by
// their exact serialized bytes as the grant source returned them. Checking
// (ValidateCapabilityGrant) and rendering (GrantHashTextOf) are functions of the grant alone,
// and equal bytes parse to equal grants, so an entry is what checking and rendering those bytes
// again would give; different bytes (a changed value, an unknown field) are a different key.
// Only grants that passed both are kept. Bounded: emptied when full.
class GrantMemo {
 public:
  struct Entry {
    CapabilityGrant checked;  // As validated (trimmed).
    bool trimmed = false;     // `checked` differs from the grant the key was serialized from.
    common::GrantHashText text;
  };

  static GrantMemo& Instance() {
    static GrantMemo* const memo = new GrantMemo();
    return *memo;
  }

  // (*found)[i] = the entry of keys[i], or null.
  void Find(const std::vector<std::string>& keys,
            std::vector<std::shared_ptr<const Entry>>* found) {
    found->assign(keys.size(), nullptr);
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = entries_.find(keys[i]);
      if (it != entries_.end()) (*found)[i] = it->second;
    }
  }

  void Insert(std::vector<std::pair<std::string, std::shared_ptr<const Entry>>> added) {
    absl::MutexLock lock(&mu_);
    for (auto& [key, entry] : added) {
      const size_t bytes = key.size() + entry->text.canonical.size() + entry->text.quoted.size() +
                           entry->checked.SpaceUsedLong();
      if (entries_.size() >= kMaxEntries || bytes_ + bytes > kMaxBytes) {
        entries_.clear();
        bytes_ = 0;
      }
      if (entries_.try_emplace(std::move(key), std::move(entry)).second) bytes_ += bytes;
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
  static constexpr size_t kMaxEntries = 16384;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Entry>> entries_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

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

// Interns and indexes every capability that could ever match a request of this context. The
// tables view the strings of `grants`, which must outlive the result unchanged.
internal::CompiledAuthority Compile(const AccessContext& context, bool context_usable,
                                    const std::vector<CapabilityGrant>& grants,
                                    const HostPolicyState& host_policy) {
  internal::CompiledAuthority compiled;
  compiled.context_usable = context_usable;
  if (context_usable) compiled.admitted_ms = *capability::TimestampMillis(context.now());
  compiled.grants.reserve(grants.size());
  for (uint32_t g = 0; g < grants.size(); ++g) {
    const CapabilityGrant& grant = grants[g];
    internal::CompiledGrant& out = compiled.grants.emplace_back();
    out.scope_rejection = ScopeRejection(grant, context);
    out.activity = capability::AssessGrantActivity(grant, context.purpose(), compiled.admitted_ms);
    out.eligible_at_admission = !out.scope_rejection.has_value() &&
                                !out.activity.window_closed_at_admission &&
                                !out.activity.purpose_excluded;
    out.has_parent = !grant.parent_grant_id().empty();
    if (grant.constraints().has_max_uses()) out.max_uses = grant.constraints().max_uses();

    for (const Capability& capability : grant.capabilities()) {
      const auto& resource = capability.resource();
      // A request's owner is always the context owner once it is valid (§2.5), so a
      // capability owned by anyone else can never match it.
      if (resource.has_owner() && !capability::AddressEquals(resource.owner(), context.owner()))
        continue;
      if (capability.scope() != SCOPE_EXACT && capability.scope() != SCOPE_DESCENDANTS) continue;

      const uint32_t index = static_cast<uint32_t>(compiled.capabilities.size());
      internal::CompiledCapability& compiled_capability = compiled.capabilities.emplace_back();
      compiled_capability.grant = g;
      compiled_capability.descendants = capability.scope() == SCOPE_DESCENDANTS;
      compiled_capability.path_begin = static_cast<uint32_t>(compiled.segments.size());
      compiled_capability.path_size = static_cast<uint32_t>(resource.path_size());
      for (const std::string& segment : resource.path()) {
        compiled.segments.push_back(Intern(compiled.segment_ids, segment));
      }
      if (!resource.path().empty()) {
        compiled_capability.first_segment = compiled.segments[compiled_capability.path_begin];
      }

      const uint32_t ns = Intern(compiled.namespace_ids, resource.namespace_());
      if (capability::ActionsCover(capability.actions(), capability::kWildcardAction)) {
        compiled.wildcard[ns].push_back(index);
        continue;
      }
      for (const std::string& action : capability.actions()) {
        const uint64_t key = (uint64_t{ns} << 32) | Intern(compiled.action_ids, action);
        std::vector<uint32_t>& list = compiled.by_action[key];
        if (list.empty() || list.back() != index) list.push_back(index);  // Repeated action.
      }
    }
  }
  if (host_policy.status() == HostPolicyState::Status::kLoaded) {
    for (const HostPolicyRule& rule : host_policy.policy().rules) {
      if (RuleAppliesTo(rule, context)) compiled.rules.push_back(&rule);
    }
  }
  return compiled;
}

}  // namespace

namespace internal {
size_t GrantMemoSizeForTesting() { return GrantMemo::Instance().size(); }
void ClearGrantMemoForTesting() { GrantMemo::Instance().Clear(); }
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
  GrantMemo& memo = GrantMemo::Instance();
  std::vector<std::string> keys(grants.size());
  for (size_t i = 0; i < grants.size(); ++i) grants[i].SerializeToString(&keys[i]);
  std::vector<std::shared_ptr<const GrantMemo::Entry>> known;
  memo.Find(keys, &known);
  const validation::PathRef grants_path("grants");
  for (size_t i = 0; i < grants.size(); ++i) {
    if (known[i] != nullptr) {
      if (known[i]->trimmed) grants[i] = known[i]->checked;
      continue;
    }
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
  for (size_t i = 0; i < grants.size(); ++i) {
    if (std::optional<capability::RejectionReason> mismatch =
            ScopeRejection(grants[i], authority->context_)) {
      return Unavailable(capability::AuthorityCode::kGrantScopeMismatch,
                         absl::StrCat("grants[", i, "] (", grants[i].id(), "): ", Name(*mismatch)));
    }
  }

  AuthoritySnapshot& snapshot = authority->snapshot_;
  // authorityHash from each grant's kept part; the others are rendered (in order, so the first
  // failing grant is named) and kept.
  std::vector<const common::GrantHashText*> texts(grants.size());
  std::vector<std::pair<std::string, std::shared_ptr<const GrantMemo::Entry>>> added;
  for (size_t i = 0; i < grants.size(); ++i) {
    if (known[i] != nullptr) {
      texts[i] = &known[i]->text;
      continue;
    }
    absl::StatusOr<common::GrantHashText> text = common::GrantHashTextOf(grants[i]);
    if (!text.ok()) {
      return Unavailable(capability::AuthorityCode::kInvalidGrantMaterial,
                         std::string(text.status().message()));
    }
    auto entry = std::make_shared<GrantMemo::Entry>();
    entry->text = *std::move(text);
    std::string checked_bytes;
    grants[i].SerializeToString(&checked_bytes);
    entry->trimmed = checked_bytes != keys[i];
    if (entry->trimmed) entry->checked = grants[i];
    texts[i] = &entry->text;
    known[i] = entry;
    added.emplace_back(std::move(keys[i]), std::move(entry));
  }
  snapshot.hash = common::AuthorityHashOfTexts(std::move(texts));
  if (!added.empty()) memo.Insert(std::move(added));
  snapshot.grant_ids.reserve(grants.size());
  for (const CapabilityGrant& grant : grants) snapshot.grant_ids.push_back(grant.id());
  bool ascii_ids = true;
  for (const std::string& id : snapshot.grant_ids) {
    for (const char c : id) ascii_ids = ascii_ids && static_cast<unsigned char>(c) < 0x80;
  }
  if (ascii_ids) {
    std::sort(snapshot.grant_ids.begin(), snapshot.grant_ids.end());  // Code-unit order.
  } else {
    common::SortByCodeUnits(&snapshot.grant_ids);
  }
  snapshot.grant_count = static_cast<int>(grants.size());
  snapshot.loaded_at = authority->context_.now();

  authority->grants_ = std::move(grants);
  authority->host_policy_ = std::move(host_policy);
  authority->compiled_ = Compile(authority->context_, context_usable, authority->grants_,
                                 authority->host_policy_);

  AuthorityResolution resolution;
  resolution.authority_ = std::move(authority);
  return resolution;
}

}  // namespace sharedos::authorizer::core
