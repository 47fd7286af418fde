#include "authorizer_svc/core/authorizer_core.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "authorizer_svc/core/host_policy.h"
#include "capability/address.h"
#include "capability/capability_request.h"
#include "capability/errors.h"
#include "capability/reason_codes.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"
#include "common/json/canonical_proto_json.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::authorizer::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace validation = ::sharedos::common::validation;
using ::sharedos::grantstore::client::CallOptions;

constexpr size_t kMaxDiscoverTools = 4096;
constexpr absl::string_view kReserved = "reserved";

CallOptions Deadline(absl::Duration deadline) {
  CallOptions options;
  options.deadline = deadline;
  return options;
}

std::string AuthorityUnavailableCode() {
  return std::string(capability::Name(capability::ReasonCode::kAuthorityUnavailable));
}

std::optional<capability::AuthorityCode> AuthorityCodeNamed(absl::string_view name) {
  for (capability::AuthorityCode code : {capability::AuthorityCode::kGrantSourceFailed,
                                         capability::AuthorityCode::kInvalidGrantMaterial,
                                         capability::AuthorityCode::kGrantScopeMismatch,
                                         capability::AuthorityCode::kGrantLimitExceeded,
                                         capability::AuthorityCode::kRevocationUnavailable}) {
    if (capability::Name(code) == name) return code;
  }
  return std::nullopt;
}

// The turn's host policy from the store's answer. A policy of another namespace, or an answer
// without a resolution, cannot be used: unavailable (fail closed), never absent.
HostPolicyState HostPolicyStateOf(const gs::HostPolicyResolution& resolution,
                                  absl::string_view namespace_id) {
  switch (resolution.resolution_case()) {
    case gs::HostPolicyResolution::kAbsent:
      return HostPolicyState::Absent();
    case gs::HostPolicyResolution::kLoaded: {
      const gs::HostPolicy& loaded = resolution.loaded();
      if (loaded.namespace_id() != namespace_id) return HostPolicyState::Unavailable();
      HostPolicy policy;
      policy.version = loaded.version();
      policy.rules.reserve(loaded.rules_size());
      for (const gs::HostPolicyRule& rule : loaded.rules()) {
        HostPolicyRule& out = policy.rules.emplace_back();
        out.id = rule.id();
        out.resource_namespace = rule.resource_namespace();
        out.path.assign(rule.path().begin(), rule.path().end());
        out.scope = rule.scope();
        out.actions.assign(rule.actions().begin(), rule.actions().end());
        out.actors.assign(rule.actors().begin(), rule.actors().end());
        out.purposes.assign(rule.purposes().begin(), rule.purposes().end());
      }
      return HostPolicyState::Loaded(std::move(policy));
    }
    case gs::HostPolicyResolution::kUnavailable:
    case gs::HostPolicyResolution::RESOLUTION_NOT_SET:
      break;
  }
  return HostPolicyState::Unavailable();
}

v1::HostPolicyStatus HostPolicyStatusOf(std::optional<HostPolicyState::Status> status) {
  if (!status.has_value()) return v1::HOST_POLICY_STATUS_UNAVAILABLE;
  switch (*status) {
    case HostPolicyState::Status::kLoaded:
      return v1::HOST_POLICY_STATUS_LOADED;
    case HostPolicyState::Status::kAbsent:
      return v1::HOST_POLICY_STATUS_ABSENT;
    case HostPolicyState::Status::kUnavailable:
      break;
  }
  return v1::HOST_POLICY_STATUS_UNAVAILABLE;
}

// The operation instant of a request, when it carries one.
absl::StatusOr<std::optional<absl::Time>> OperationInstant(
    bool present, const google::protobuf::Timestamp& instant) {
  if (!present) return std::optional<absl::Time>();
  RETURN_IF_ERROR(validation::CheckTimestamp(instant, "operation_instant"));
  ASSIGN_OR_RETURN(absl::Time time, common::FromProtoTimestamp(instant));
  return std::optional<absl::Time>(time);
}

absl::Status CheckOptionalId(const std::string& value, absl::string_view path) {
  std::string copy = value;
  RETURN_IF_ERROR(validation::CheckOptionalIdentifier(&copy, path));
  if (copy != value) return validation::InvalidArgumentAt(path, "surrounding whitespace");
  return absl::OkStatus();
}

}  // namespace

struct AuthorizerCore::Lease {
  // Empty for a turn of one operation (never held).
  std::string id;
  std::string key;
  LeaseClaims claims;
  // Set when resolved.
  std::shared_ptr<const ResolvedAuthority> authority;
  std::unique_ptr<RevisionDelegationResolver> resolver;
  // Bounded grants of the authority: id → maxUses.
  absl::flat_hash_map<std::string, int64_t> bounded;
  std::optional<HostPolicyState::Status> host_policy;
  // When not resolved: the code every decision gets, and the internal authority code.
  std::string code;
  std::optional<capability::AuthorityCode> authority_code;

  bool resolved() const { return authority != nullptr; }
  const pb::AccessContext& context() const {
    return resolved() ? authority->context() : claims.context;
  }

  void MakeUnavailable(std::string new_code, std::optional<capability::AuthorityCode> internal) {
    authority.reset();
    resolver.reset();
    bounded.clear();
    code = std::move(new_code);
    authority_code = internal;
  }
};

AuthorizerCore::AuthorizerCore(grantstore::client::GrantStoreClient& grantstore,
                               audit::client::AuditWriter& audit, const common::Clock& clock,
                               std::string lease_secret, Options options)
    : grantstore_(grantstore),
      audit_(audit),
      clock_(clock),
      codec_(std::move(lease_secret)),
      options_(options),
      metrics_(options.metrics, capability::kDecisionReasonCodes),
      usage_(grantstore, Deadline(options.usage_deadline)),
      revocations_(grantstore, Deadline(options.usage_deadline)) {}

// ---------------------------------------------------------------------------------------------
// Leases

std::shared_ptr<AuthorizerCore::Lease> AuthorizerCore::Load(const pb::AccessContext& context,
                                                            std::optional<int64_t> at_revision,
                                                            ResolutionFacts* facts) {
  auto lease = std::make_shared<Lease>();
  lease->claims.context = context;
  gs::LoadAuthorityRequest request;
  request.set_namespace_id(context.namespace_id());
  *request.mutable_actor() = context.actor();
  *request.mutable_authority() = context.authority();
  if (at_revision.has_value()) request.set_at_revision(*at_revision);
  absl::StatusOr<gs::LoadAuthorityResponse> loaded =
      grantstore_.LoadAuthority(request, Deadline(options_.load_deadline));
  if (!loaded.ok()) {
    // The store enforces the 256 bound itself (RESOURCE_EXHAUSTED); anything else is an outage.
    facts->code = loaded.status().code() == absl::StatusCode::kResourceExhausted
                      ? capability::AuthorityCode::kGrantLimitExceeded
                      : capability::AuthorityCode::kGrantSourceFailed;
    lease->MakeUnavailable(AuthorityUnavailableCode(), facts->code);
    // The lease's record names only the code; the log says why the store did not answer.
    common::logging::Log(common::logging::Level::kWarning, "authority.load_failed",
                         context.trace_id(),
                         {{"code", absl::StatusCodeToString(loaded.status().code())},
                          {"message", loaded.status().message().substr(0, 200)}});
    return lease;
  }
  HostPolicyState policy = HostPolicyStateOf(loaded->host_policy(), context.namespace_id());
  facts->host_policy = policy.status();
  lease->host_policy = policy.status();
  std::vector<pb::CapabilityGrant> grants(
      std::make_move_iterator(loaded->mutable_grants()->begin()),
      std::make_move_iterator(loaded->mutable_grants()->end()));
  AuthorityResolution resolution =
      AuthorityResolution::Resolve(context, std::move(grants), std::move(policy));
  if (!resolution.resolved()) {
    facts->code = resolution.code();
    lease->MakeUnavailable(AuthorityUnavailableCode(), resolution.code());
    return lease;
  }
  lease->authority = resolution.authority();
  lease->claims.status = LeaseClaims::Status::kResolved;
  lease->claims.revision = loaded->revision();
  lease->claims.authority_hash = lease->authority->snapshot().hash;
  lease->resolver = std::make_unique<RevisionDelegationResolver>(
      grantstore_, loaded->revision(), Deadline(options_.resolve_deadline));
  for (const pb::CapabilityGrant& grant : lease->authority->grants()) {
    if (grant.constraints().has_max_uses()) {
      lease->bounded.emplace(grant.id(), grant.constraints().max_uses());
    }
  }
  facts->snapshot = &lease->authority->snapshot();
  return lease;
}

std::shared_ptr<const AuthorizerCore::Lease> AuthorizerCore::Hold(std::shared_ptr<Lease> lease) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = leases_.try_emplace(lease->id, lease);
  if (inserted) {
    expiries_.emplace(lease->claims.expires_at, lease->id);
    by_key_.try_emplace(lease->key, lease->id);
  }
  return it->second;
}

void AuthorizerCore::Sweep(absl::Time now) {
  while (!expiries_.empty() && expiries_.begin()->first <= now) {
    const std::string& id = expiries_.begin()->second;
    if (auto it = leases_.find(id); it != leases_.end()) {
      if (auto key = by_key_.find(it->second->key); key != by_key_.end() && key->second == id) {
        by_key_.erase(key);
      }
      leases_.erase(it);
    }
    closed_.erase(id);
    expiries_.erase(expiries_.begin());
  }
}

int AuthorizerCore::held_leases() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(leases_.size());
}

absl::StatusOr<std::shared_ptr<const AuthorizerCore::Lease>> AuthorizerCore::FindLease(
    const std::string& lease_id) {
  const absl::Time now = clock_.Now();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (auto it = leases_.find(lease_id); it != leases_.end()) {
      if (now >= it->second->claims.expires_at) return capability::errors::LeaseExpired();
      return it->second;
    }
    if (closed_.contains(lease_id)) return capability::errors::LeaseClosed();
  }
  // Not held here: another replica opened it (or this one restarted). Verify, then rebuild.
  ASSIGN_OR_RETURN(LeaseClaims claims, codec_.Decode(lease_id));
  if (now >= claims.expires_at) return capability::errors::LeaseExpired();
  std::shared_ptr<Lease> lease;
  if (claims.status == LeaseClaims::Status::kUnavailable) {
    lease = std::make_shared<Lease>();
    lease->MakeUnavailable(claims.code, AuthorityCodeNamed(claims.internal_code));
  } else {
    ResolutionFacts facts;
    lease = Load(claims.context, claims.revision, &facts);
    if (lease->resolved() && lease->authority->snapshot().hash != claims.authority_hash) {
      // The store answered another snapshot for the same revision: never decide from it.
      lease->MakeUnavailable(AuthorityUnavailableCode(),
                             capability::AuthorityCode::kGrantSourceFailed);
    }
    if (!lease->resolved()) {
      // Transient: not held, so the next decision tries the store again.
      lease->claims = std::move(claims);
      return std::shared_ptr<const Lease>(std::move(lease));
    }
  }
  lease->key = LeaseKey(claims.context, claims.turn_id);
  lease->claims = std::move(claims);
  lease->id = lease_id;
  return Hold(std::move(lease));
}

absl::StatusOr<v1::OpenTurnAuthorityResponse> AuthorizerCore::OpenTurnAuthority(
    const v1::OpenTurnAuthorityRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  pb::AccessContext context = request.context();
  RETURN_IF_ERROR(
      validation::ValidateAccessContext(request.has_context() ? &context : nullptr, "context"));
  std::string turn_id = request.turn_id();
  RETURN_IF_ERROR(validation::CheckIdentifier(&turn_id, "turn_id"));
  absl::Duration timeout = options_.default_lease_timeout;
  if (request.has_timeout()) {
    absl::StatusOr<absl::Duration> requested = common::FromProtoDuration(request.timeout());
    if (!requested.ok()) return capability::errors::BadTimeout("not a valid duration");
    if (*requested <= absl::ZeroDuration())
      return capability::errors::BadTimeout("must be positive");
    if (*requested > options_.max_lease_timeout) {
      return capability::errors::BadTimeout(
          absl::StrCat("above the maximum of ", absl::FormatDuration(options_.max_lease_timeout)));
    }
    timeout = *requested;
  }

  const pb::AccessContext lease_context = LeaseContext(context);
  std::string key = LeaseKey(lease_context, turn_id);
  const absl::Time now = clock_.Now();
  std::shared_ptr<const Lease> held;
  {
    absl::MutexLock lock(&mu_);
    Sweep(now);
    if (auto it = by_key_.find(key); it != by_key_.end()) held = leases_.at(it->second);
  }
  if (held == nullptr) {
    ResolutionFacts facts;
    std::shared_ptr<Lease> lease = Load(lease_context, std::nullopt, &facts);
    // authority.resolved is pre-effect: a turn whose authority is not on record decides nothing.
    if (!audit_.RecordPreEffect(AuthorityResolvedEvent(lease_context, turn_id, facts)).ok()) {
      lease->MakeUnavailable(std::string(capability::kAuditUnavailable), std::nullopt);
    }
    LeaseClaims& claims = lease->claims;
    claims.context = lease_context;
    claims.turn_id = std::move(turn_id);
    claims.expires_at = now + timeout;
    if (!lease->resolved()) {
      claims.status = LeaseClaims::Status::kUnavailable;
      claims.code = lease->code;
      claims.internal_code = lease->authority_code.has_value()
                                 ? std::string(capability::Name(*lease->authority_code))
                                 : "";
    }
    lease->key = std::move(key);
    lease->id = codec_.Encode(claims);
    held = Hold(std::move(lease));
  }

  v1::OpenTurnAuthorityResponse response;
  response.set_lease_id(held->id);
  response.set_host_policy_status(HostPolicyStatusOf(held->host_policy));
  if (held->resolved()) {
    const ResolvedAuthority& authority = *held->authority;
    response.set_status(v1::LEASE_STATUS_RESOLVED);
    response.set_authority_hash(authority.snapshot().hash);
    response.set_revision(held->claims.revision);
    response.set_grant_count(authority.snapshot().grant_count);
    if (authority.host_policy().status() == HostPolicyState::Status::kLoaded) {
      response.set_host_policy_version(authority.host_policy().policy().version);
    }
  } else {
    response.set_status(v1::LEASE_STATUS_UNAVAILABLE);
    response.set_code(held->code);
  }
  return response;
}

absl::StatusOr<v1::CloseTurnAuthorityResponse> AuthorizerCore::CloseTurnAuthority(
    const v1::CloseTurnAuthorityRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  const std::string& id = request.lease_id();
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    Sweep(now);
    if (closed_.contains(id)) return v1::CloseTurnAuthorityResponse();
    if (auto it = leases_.find(id); it != leases_.end()) {
      if (auto key = by_key_.find(it->second->key); key != by_key_.end() && key->second == id) {
        by_key_.erase(key);
      }
      // Its entry in expiries_ stays: the closed id is forgotten at the lease's expiry.
      closed_.emplace(id, it->second->claims.expires_at);
      leases_.erase(it);
      return v1::CloseTurnAuthorityResponse();
    }
  }
  ASSIGN_OR_RETURN(const LeaseClaims claims, codec_.Decode(id));
  if (now < claims.expires_at) {
    absl::MutexLock lock(&mu_);
    if (closed_.emplace(id, claims.expires_at).second) expiries_.emplace(claims.expires_at, id);
  }
  return v1::CloseTurnAuthorityResponse();
}

// ---------------------------------------------------------------------------------------------
// Decisions

CapabilityAuthorizer AuthorizerCore::AuthorizerFor(const Lease& lease, UsageCounter* usage) {
  CapabilityAuthorizer::Options options;
  options.usage_counter = usage;
  options.delegation_resolver = lease.resolver.get();
  options.revocation_source = options_.live_revocation ? &revocations_ : nullptr;
  options.max_delegation_chain_length = options_.max_delegation_chain_length;
  return CapabilityAuthorizer(options);
}

Verdict AuthorizerCore::Record(const CheckFacts& facts, Verdict verdict) {
  if (audit_.RecordPreEffect(AuthorizationCheckedEvent(facts, verdict)).ok()) return verdict;
  return FailClosedVerdict(capability::kAuditUnavailable, std::nullopt);
}

Verdict AuthorizerCore::Decide(const Lease& lease, const pb::CapabilityRequirement& requirement,
                               bool consume, std::optional<absl::Time> now,
                               absl::string_view operation_id, absl::string_view tool) {
  const pb::AccessContext& context = lease.context();
  CheckFacts facts;
  facts.context = &context;
  facts.requirement = &requirement;
  facts.operation_id = operation_id;
  facts.tool = tool;
  facts.at = context.now();
  if (now.has_value()) {
    if (absl::StatusOr<google::protobuf::Timestamp> at = common::ToProtoTimestamp(*now); at.ok()) {
      facts.at = *at;
    }
  }
  if (!lease.resolved()) return Record(facts, FailClosedVerdict(lease.code, lease.authority_code));
  facts.authority_hash = lease.authority->snapshot().hash;

  const CapabilityAuthorizer authorizer = AuthorizerFor(lease, &usage_);
  CapabilityAuthorizer::AuthorizeOptions decide;
  decide.now = now;
  decide.consume = false;  // Step 1 never consumes: see the class comment.
  std::string released;
  // Each lost race leaves one more bounded grant exhausted for good, so this ends.
  for (size_t round = 0; round <= lease.bounded.size(); ++round) {
    AuthorizationResult result = authorizer.Authorize(*lease.authority, requirement, decide);
    int64_t max_uses = 0;
    if (consume && result.allowed) {
      if (auto it = lease.bounded.find(result.matched_grant_id); it != lease.bounded.end()) {
        max_uses = it->second;
      }
    }
    const bool reserve = max_uses > 0;
    const std::string grant_id = result.matched_grant_id;
    facts.usage_state = reserve ? kReserved : absl::string_view();
    facts.released_grant_id = released;
    Verdict verdict = Record(facts, VerdictOf(std::move(result)));
    if (!reserve || !verdict.decision.allowed()) return verdict;

    absl::StatusOr<bool> consumed = usage_.TryConsume(context.namespace_id(), grant_id, max_uses);
    if (consumed.ok() && *consumed) {
      verdict.consumed = true;
      return verdict;
    }
    released = grant_id;
    if (!consumed.ok()) {
      facts.usage_state = absl::string_view();
      facts.released_grant_id = released;
      return Record(
          facts, FailClosedVerdict(capability::Name(capability::ReasonCode::kUsageStoreUnavailable),
                                   std::nullopt));
    }
  }
  // Unreachable in practice (more lost races than bounded grants); deny rather than loop.
  facts.usage_state = absl::string_view();
  facts.released_grant_id = released;
  AuthorizationResult exhausted;
  exhausted.reason_code = capability::ReasonCode::kGrantExhausted;
  exhausted.matched_grant_id = released;
  return Record(facts, VerdictOf(std::move(exhausted)));
}

absl::StatusOr<v1::AuthorizeResponse> AuthorizerCore::Authorize(
    const v1::AuthorizeRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  pb::CapabilityRequirement requirement = request.requirement();
  RETURN_IF_ERROR(validation::ValidateCapabilityRequirement(
      request.has_requirement() ? &requirement : nullptr, "requirement"));
  RETURN_IF_ERROR(CheckOptionalId(request.operation_id(), "operation_id"));
  RETURN_IF_ERROR(CheckOptionalId(request.tool(), "tool"));
  std::optional<pb::CapabilityRequirement> ceiling;
  if (request.has_declared_ceiling()) {
    ceiling = request.declared_ceiling();
    RETURN_IF_ERROR(validation::ValidateCapabilityRequirement(&*ceiling, "declared_ceiling"));
  }
  ASSIGN_OR_RETURN(const std::optional<absl::Time> now,
                   OperationInstant(request.has_operation_instant(), request.operation_instant()));

  std::shared_ptr<const Lease> lease;
  switch (request.subject_case()) {
    case v1::AuthorizeRequest::kLeaseId: {
      ASSIGN_OR_RETURN(lease, FindLease(request.lease_id()));
      break;
    }
    case v1::AuthorizeRequest::kContext: {
      // A turn of one operation: its own load, its own authority.resolved.
      pb::AccessContext context = request.context();
      RETURN_IF_ERROR(validation::ValidateAccessContext(&context, "context"));
      const pb::AccessContext lease_context = LeaseContext(context);
      ResolutionFacts facts;
      std::shared_ptr<Lease> one = Load(lease_context, std::nullopt, &facts);
      if (!audit_.RecordPreEffect(AuthorityResolvedEvent(lease_context, "", facts)).ok()) {
        one->MakeUnavailable(std::string(capability::kAuditUnavailable), std::nullopt);
      }
      lease = std::move(one);
      break;
    }
    case v1::AuthorizeRequest::SUBJECT_NOT_SET:
      return capability::errors::NoSubject();
  }

  v1::AuthorizeResponse response;
  if (ceiling.has_value()) {
    // Discoverability first (what a separate Discover of this one tool answers): a tool the
    // authority cannot discover is withheld, and nothing is decided or recorded here.
    v1::DiscoveryEntry* entry = response.mutable_discovery();
    entry->set_name(request.tool());
    if (!lease->resolved()) {
      entry->set_reason_code(lease->code);
      entry->set_fail_closed(true);
    } else {
      BatchUsageCounter usage(usage_);
      const AuthorizationResult result =
          AuthorizerFor(*lease, &usage).Discover(*lease->authority, *ceiling, now);
      entry->set_discoverable(result.allowed);
      entry->set_reason_code(std::string(capability::Name(result.reason_code)));
      entry->set_fail_closed(result.fail_closed());
    }
    if (!entry->discoverable()) return response;
  }
  Verdict verdict =
      Decide(*lease, requirement, request.consume(), now, request.operation_id(), request.tool());
  metrics_.Decided(common::metrics::DecisionMetrics::Operation::kAuthorize,
                   verdict.decision.reason_code(), verdict.fail_closed);
  *response.mutable_decision() = std::move(verdict.decision);
  response.set_consumed(verdict.consumed);
  response.set_fail_closed(verdict.fail_closed);
  return response;
}

absl::StatusOr<v1::DiscoverResponse> AuthorizerCore::Discover(const v1::DiscoverRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  if (request.tools().empty()) return capability::errors::BadTools("tools", "empty");
  if (request.tools_size() > static_cast<int>(kMaxDiscoverTools)) {
    return capability::errors::BadTools("tools", absl::StrCat("more than ", kMaxDiscoverTools));
  }
  std::vector<pb::CapabilityRequirement> requirements;
  requirements.reserve(request.tools_size());
  absl::flat_hash_set<absl::string_view> names;
  for (int i = 0; i < request.tools_size(); ++i) {
    const v1::ToolRequirement& tool = request.tools(i);
    const std::string path = validation::IndexPath("tools", i);
    RETURN_IF_ERROR(validation::CheckToolName(tool.name(), validation::FieldPath(path, "name")));
    if (!names.insert(tool.name()).second) {
      return capability::errors::BadTools(validation::FieldPath(path, "name"),
                                          absl::StrCat("duplicate \"", tool.name(), "\""));
    }
    pb::CapabilityRequirement& requirement = requirements.emplace_back(tool.requirement());
    RETURN_IF_ERROR(
        validation::ValidateCapabilityRequirement(tool.has_requirement() ? &requirement : nullptr,
                                                  validation::FieldPath(path, "requirement")));
  }
  ASSIGN_OR_RETURN(const std::optional<absl::Time> now,
                   OperationInstant(request.has_operation_instant(), request.operation_instant()));
  ASSIGN_OR_RETURN(const std::shared_ptr<const Lease> lease, FindLease(request.lease_id()));

  v1::DiscoverResponse response;
  int withheld = 0;
  BatchUsageCounter usage(usage_);
  const CapabilityAuthorizer authorizer = AuthorizerFor(*lease, &usage);
  for (int i = 0; i < request.tools_size(); ++i) {
    v1::DiscoveryEntry* entry = response.add_entries();
    entry->set_name(request.tools(i).name());
    if (!lease->resolved()) {
      entry->set_reason_code(lease->code);
      entry->set_fail_closed(true);
    } else {
      const AuthorizationResult result =
          authorizer.Discover(*lease->authority, requirements[i], now);
      entry->set_discoverable(result.allowed);
      entry->set_reason_code(std::string(capability::Name(result.reason_code)));
      entry->set_fail_closed(result.fail_closed());
    }
    if (!entry->discoverable()) ++withheld;
  }
  response.set_withheld_count(withheld);
  return response;
}

absl::StatusOr<v1::AdmitTurnResponse> AuthorizerCore::AdmitTurn(
    const v1::AdmitTurnRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  pb::Address agent = request.agent();
  RETURN_IF_ERROR(validation::ValidateAddress(request.has_agent() ? &agent : nullptr, "agent"));
  ASSIGN_OR_RETURN(const std::optional<absl::Time> now,
                   OperationInstant(request.has_operation_instant(), request.operation_instant()));
  ASSIGN_OR_RETURN(const std::shared_ptr<const Lease> lease, FindLease(request.lease_id()));

  // admitTurn (§3.9): sharedos.execution / addressPath(agent) / the context owner / invoke.
  pb::CapabilityRequirement requirement;
  pb::ResourceRef* resource = requirement.mutable_resource();
  resource->set_namespace_("sharedos.execution");
  for (std::string& segment : capability::AddressPath(agent))
    resource->add_path(std::move(segment));
  *resource->mutable_owner() = lease->context().owner();
  requirement.set_action("invoke");
  Verdict verdict = Decide(*lease, requirement, /*consume=*/true, now, "", "");
  metrics_.Decided(common::metrics::DecisionMetrics::Operation::kAdmitTurn,
                   verdict.decision.reason_code(), verdict.fail_closed);
  v1::AdmitTurnResponse response;
  *response.mutable_decision() = std::move(verdict.decision);
  response.set_fail_closed(verdict.fail_closed);
  response.set_consumed(verdict.consumed);
  return response;
}

absl::StatusOr<v1::ReachResponse> AuthorizerCore::Reach(const v1::ReachRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  ASSIGN_OR_RETURN(const std::shared_ptr<const Lease> lease, FindLease(request.lease_id()));
  v1::ReachResponse response;
  if (!lease->resolved()) {
    response.mutable_reach()->set_status(pb::REACH_STATUS_UNAVAILABLE);
    response.mutable_reach()->set_reason_code(AuthorityUnavailableCode());
    return response;
  }
  BatchUsageCounter usage(usage_);
  *response.mutable_reach() = AuthorizerFor(*lease, &usage).Reach(*lease->authority);
  return response;
}

// ---------------------------------------------------------------------------------------------
// Escalation

absl::StatusOr<v1::RecordEscalationResponse> AuthorizerCore::RecordEscalation(
    const v1::RecordEscalationRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, ""));
  std::string execution_id = request.execution_id();
  RETURN_IF_ERROR(validation::CheckIdentifier(&execution_id, "execution_id"));
  std::string reason = request.reason();
  RETURN_IF_ERROR(
      validation::CheckTrimmedString(&reason, validation::kMaxEscalationReasonLength, "reason"));
  std::string requested_event_id = request.requested_event_id();
  RETURN_IF_ERROR(validation::CheckOptionalIdentifier(&requested_event_id, "requested_event_id"));
  ASSIGN_OR_RETURN(const std::optional<absl::Time> instant,
                   OperationInstant(request.has_operation_instant(), request.operation_instant()));
  ASSIGN_OR_RETURN(const std::shared_ptr<const Lease> lease, FindLease(request.lease_id()));

  // The trusted context at the escalation instant: requestedAt = now.
  pb::AccessContext context = lease->context();
  ASSIGN_OR_RETURN(*context.mutable_now(),
                   common::ToProtoTimestamp(instant.value_or(clock_.Now())));

  pb::Escalation escalation;
  escalation.set_reason(reason);
  *escalation.mutable_reviewer() = context.owner();
  *escalation.mutable_requested_at() = context.now();
  escalation.set_status(pb::ESCALATION_STATUS_PENDING);
  if (request.has_requested_authority_ask()) {
    const v1::AuthorityAsk& ask = request.requested_authority_ask();
    // Only the ask is read; identity (id, namespace, requester, owner, requestedAt) is minted.
    pb::CapabilityRequest wanted;
    *wanted.mutable_capabilities() = ask.capabilities();
    wanted.set_purpose(ask.purpose());
    if (ask.has_constraints()) *wanted.mutable_constraints() = ask.constraints();
    if (ask.has_metadata()) *wanted.mutable_metadata() = ask.metadata();
    absl::StatusOr<pb::CapabilityRequest> minted =
        capability::MintCapabilityRequest(context, wanted);
    if (!minted.ok()) return capability::errors::BadAsk(minted.status().message());
    *escalation.mutable_requested_authority() = *std::move(minted);
  }

  // Deterministic: the same escalation of the same turn (same instant) is stored once.
  ASSIGN_OR_RETURN(const std::string content, common::CanonicalProtoJson(escalation));
  const std::string escalation_id = absl::StrCat(
      "esc-", common::Sha256Hex(common::CanonicalJson(
                  nlohmann::json::array({context.namespace_id(), execution_id, content}))));
  gs::RecordEscalationRequest store;
  *store.mutable_escalation() = escalation;
  store.set_namespace_id(context.namespace_id());
  store.set_execution_id(execution_id);
  store.set_escalation_id(escalation_id);
  *store.mutable_authority() = context.authority();
  absl::StatusOr<gs::RecordEscalationResponse> stored =
      grantstore_.RecordEscalation(store, Deadline(options_.escalation_deadline));
  if (!stored.ok()) return capability::errors::EscalationNotStored(stored.status().code());
  metrics_.EscalationRequested();

  // Post-effect: the escalation is stored; an audit outage delays the record, never the answer.
  // Under the caller's id when it gave one: a retry of the same escalation is the same record.
  pb::AuditEvent requested =
      EscalationRequestedEvent(context, escalation, execution_id, stored->escalation_id());
  if (!requested_event_id.empty()) requested.set_id(requested_event_id);
  (void)audit_.RecordPostEffect(std::move(requested));

  v1::RecordEscalationResponse response;
  *response.mutable_escalation() = std::move(escalation);
  response.set_escalation_id(stored->escalation_id());
  return response;
}

}  // namespace sharedos::authorizer::core
