#include "audit_svc/core/witness.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capability/address.h"
#include "common/json/json_nesting.h"
#include "common/logging/log.h"
#include "common/server/access_policy.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"

namespace sharedos::audit::core {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::audit::v1::ControlPlaneEvent;
using ::sharedos::audit::v1::SignedCheckpoint;

namespace {

namespace pb = ::sharedos::protocol::v1;

// The fields a checkpoint's JSON line has (CheckpointJson writes them so); anything else is
// refused, naming it.
constexpr absl::string_view kCheckpointFields[] = {"sequence", "headHash", "at", "keyId",
                                                   "signature"};
// Records read per page while looking for a signer's last witnessed checkpoint (newest first:
// the first record found is normally it).
constexpr int kLoadPage = 16;

void SetString(ControlPlaneEvent& event, const char* key, const std::string& value) {
  (*event.mutable_metadata()->mutable_fields())[key].set_string_value(value);
}

// The last checkpoint.witnessed record of `key_id` in `log`: the newest of the signer's trace
// (an index walked from the head), skipping any record of that trace that is not one.
absl::StatusOr<std::optional<SignedCheckpoint>> LoadLast(AuditLog& log, const std::string& key_id) {
  v1::AuditFilter filter;
  filter.set_trace_id(WitnessTraceId(key_id));
  filter.set_control_plane_type(v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED);
  int64_t before = storage::kFromTheHead;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<AuditRecord> records,
                     log.ReadNewestFirst(filter, before, kLoadPage));
    for (const AuditRecord& record : records) {
      std::optional<SignedCheckpoint> held = WitnessedCheckpointOf(record);
      if (held && held->key_id() == key_id) return held;
    }
    if (static_cast<int>(records.size()) < kLoadPage) return std::nullopt;
    before = records.back().sequence();
  }
}

}  // namespace

std::string WitnessTraceId(absl::string_view key_id) { return absl::StrCat("witness-", key_id); }

std::optional<SignedCheckpoint> WitnessedCheckpointOf(const AuditRecord& record) {
  if (!record.has_control_plane()) return std::nullopt;
  const ControlPlaneEvent& event = record.control_plane();
  if (event.type() != v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED ||
      capability::AddressKey(event.writer()) != common::server::kAuditService) {
    return std::nullopt;
  }
  const auto& fields = event.metadata().fields();
  auto text = [&fields](const char* key) -> std::optional<std::string> {
    auto it = fields.find(key);
    if (it == fields.end() || !it->second.has_string_value()) return std::nullopt;
    return it->second.string_value();
  };
  const auto key_id = text("keyId");
  const auto sequence = text("sequence");
  const auto head_hash = text("headHash");
  const auto signed_at = text("signedAt");
  const auto signature = text("signature");
  if (!key_id || !sequence || !head_hash || !signed_at || !signature) return std::nullopt;
  SignedCheckpoint checkpoint;
  int64_t number = 0;
  std::string raw_signature;
  google::protobuf::Timestamp at;
  if (!absl::SimpleAtoi(*sequence, &number) || !TimeUtil::FromString(*signed_at, &at) ||
      !absl::Base64Unescape(*signature, &raw_signature)) {
    return std::nullopt;
  }
  checkpoint.set_sequence(number);
  checkpoint.set_head_hash(*head_hash);
  *checkpoint.mutable_at() = at;
  checkpoint.set_key_id(*key_id);
  checkpoint.set_signature(raw_signature);
  return checkpoint;
}

absl::StatusOr<std::unique_ptr<Witness>> Witness::Create(
    AuditLog& log, std::vector<std::unique_ptr<CheckpointKey>> keys, const common::Clock& clock,
    common::metrics::Metrics* metrics) {
  if (keys.empty()) {
    return absl::InvalidArgumentError("--witness_public_key: at least one signer's public key");
  }
  std::map<std::string, int> seen;
  for (const auto& key : keys) {
    if (key == nullptr || key->key_id().empty()) {
      return absl::InvalidArgumentError("--witness_public_key: not an Ed25519 public key");
    }
    if (seen[key->key_id()]++ > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--witness_public_key: key ", key->key_id(), " given twice"));
    }
  }
  std::unique_ptr<Witness> witness(new Witness(log, std::move(keys), clock, metrics));
  for (const auto& [key_id, key] : witness->keys_) {
    absl::StatusOr<std::optional<SignedCheckpoint>> last = LoadLast(log, key_id);
    if (!last.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "witness: the checkpoints held cannot be read from the log: ", last.status().message()));
    }
    if (last->has_value()) {
      absl::MutexLock lock(&witness->mu_);
      witness->last_[key_id] = **last;
    }
  }
  return witness;
}

Witness::Witness(AuditLog& log, std::vector<std::unique_ptr<CheckpointKey>> keys,
                 const common::Clock& clock, common::metrics::Metrics* metrics)
    : log_(log), clock_(clock), metrics_(metrics) {
  for (auto& key : keys) {
    std::string id = key->key_id();
    keys_.emplace(std::move(id), std::move(key));
  }
}

std::vector<std::string> Witness::key_ids() const {
  std::vector<std::string> ids;
  for (const auto& [key_id, key] : keys_) ids.push_back(key_id);
  return ids;
}

std::optional<SignedCheckpoint> Witness::Last(const std::string& key_id) const {
  absl::MutexLock lock(&mu_);
  auto it = last_.find(key_id);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<SignedCheckpoint> Witness::Parse(absl::string_view body) const {
  if (body.size() > kMaxWitnessBodyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: larger than ", kMaxWitnessBodyBytes, " bytes"));
  }
  RETURN_IF_ERROR(common::CheckJsonNesting(body, "body"));
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError(
        "body: not a JSON object (a signed checkpoint's JSON line, as `sharedosctl audit "
        "checkpoint` prints it)");
  }
  for (auto it = parsed.begin(); it != parsed.end(); ++it) {
    const std::string& name = it.key();
    if (std::find(std::begin(kCheckpointFields), std::end(kCheckpointFields), name) ==
        std::end(kCheckpointFields)) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint.", name.substr(0, 64), ": not a field of a signed checkpoint"));
    }
  }
  // proto3 JSON leaves out a sequence of 0 (the empty log's checkpoint); every other field is
  // never empty in a signed checkpoint.
  for (absl::string_view name : kCheckpointFields) {
    if (name != "sequence" && !parsed.contains(std::string(name))) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint.", name, ": required"));
    }
  }
  SignedCheckpoint checkpoint;
  const std::string json(body);
  if (!google::protobuf::util::JsonStringToMessage(json, &checkpoint).ok()) {
    // Which field: the first whose value alone does not convert.
    for (absl::string_view name : kCheckpointFields) {
      if (!parsed.contains(std::string(name))) continue;
      nlohmann::json one = {{std::string(name), parsed[std::string(name)]}};
      SignedCheckpoint probe;
      if (!google::protobuf::util::JsonStringToMessage(one.dump(), &probe).ok()) {
        return absl::InvalidArgumentError(absl::StrCat("checkpoint.", name, ": malformed"));
      }
    }
    return absl::InvalidArgumentError("checkpoint: not a signed checkpoint");
  }
  RETURN_IF_ERROR(ValidateSignedCheckpoint(checkpoint, "checkpoint"));
  auto key = keys_.find(checkpoint.key_id());
  if (key == keys_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint.key_id: ", checkpoint.key_id().substr(0, 16),
                     " is not a signer this witness pins (--witness_public_key)"));
  }
  const std::string fault = key->second->CheckSignature(checkpoint);
  if (!fault.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint.signature: ", fault));
  }
  return checkpoint;
}

absl::StatusOr<Witness::Receipt> Witness::Receive(absl::string_view body) {
  ASSIGN_OR_RETURN(const SignedCheckpoint checkpoint, Parse(body));
  absl::MutexLock lock(&mu_);
  auto held = last_.find(checkpoint.key_id());
  if (held != last_.end()) {
    const SignedCheckpoint& last = held->second;
    std::string conflict;
    if (checkpoint.sequence() < last.sequence()) {
      conflict = absl::StrCat("checkpoint.sequence: ", checkpoint.sequence(),
                              " is older than the last checkpoint held for key ",
                              checkpoint.key_id(), " (sequence ", last.sequence(),
                              "): the signer's log was rolled back (or this is a replay)");
    } else if (checkpoint.sequence() == last.sequence() &&
               checkpoint.head_hash() != last.head_hash()) {
      conflict = absl::StrCat("checkpoint.head_hash: sequence ", checkpoint.sequence(),
                              " is held with head hash ", last.head_hash(),
                              ": the signer's log was rewritten");
    } else if (checkpoint.sequence() == last.sequence()) {
      return Receipt{};  // The very head held already (signed again): nothing new.
    }
    if (!conflict.empty()) {
      metrics_.Conflict();
      common::logging::Log(
          common::logging::Level::kError, "audit.witness.conflict", "",
          {{"key_id", checkpoint.key_id()},
           {"sequence", static_cast<long long>(checkpoint.sequence())},
           {"head_hash", checkpoint.head_hash()},
           {"held_sequence", static_cast<long long>(last.sequence())},
           {"held_head_hash", last.head_hash()},
           {kCheckpointLogField, CheckpointJson(checkpoint)},
           {"alarm", "a signed checkpoint older than or inconsistent with the one held"}});
      return absl::AbortedError(conflict);
    }
  }
  ASSIGN_OR_RETURN(const int64_t record_sequence, Record(checkpoint));
  last_[checkpoint.key_id()] = checkpoint;
  return Receipt{true, record_sequence};
}

absl::StatusOr<int64_t> Witness::Record(const SignedCheckpoint& checkpoint) {
  ControlPlaneEvent event;
  // One id per signer and sequence: a record repeated after a crash is a duplicate the log keeps
  // once.
  event.set_id(absl::StrCat("witnessed-", checkpoint.key_id(), "-", checkpoint.sequence()));
  event.set_type(v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED);
  event.set_outcome(pb::AUDIT_OUTCOME_SUCCEEDED);
  ASSIGN_OR_RETURN(const google::protobuf::Timestamp at, common::ToProtoTimestamp(clock_.Now()));
  *event.mutable_at() = at;
  event.set_trace_id(WitnessTraceId(checkpoint.key_id()));
  event.set_namespace_id("*");
  const std::optional<pb::Address> self = capability::AddressFromKey(common::server::kAuditService);
  if (!self.has_value()) return absl::InternalError("witness: service:audit is not an address");
  *event.mutable_actor() = *self;
  *event.mutable_authority() = *self;
  *event.mutable_owner() = *self;
  event.set_purpose(kWitnessPurpose);
  // The checkpoint's fields and nothing else.
  SetString(event, "keyId", checkpoint.key_id());
  SetString(event, "sequence", absl::StrCat(checkpoint.sequence()));
  SetString(event, "headHash", checkpoint.head_hash());
  SetString(event, "signedAt", TimeUtil::ToString(checkpoint.at()));
  SetString(event, "signature", absl::Base64Escape(checkpoint.signature()));
  absl::StatusOr<v1::AppendResponse> appended =
      log_.AppendControlPlane(std::move(event), common::server::kAuditService);
  if (!appended.ok()) {
    return absl::UnavailableError(
        absl::StrCat("witness: the checkpoint cannot be recorded: ", appended.status().message()));
  }
  return appended->head_sequence();
}

}  // namespace sharedos::audit::core
