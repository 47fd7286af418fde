#include "tools/sharedosctl/export.h"

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text/terminal_safe.h"
#include "google/protobuf/util/json_util.h"
#include "grantstore_svc/client/operator_names.h"
#include "nlohmann/json.hpp"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::AuditEventTypeName;
using ::sharedos::grantstore::client::AuditOutcomeName;
using ::sharedos::grantstore::client::AuditSourceName;
using ::sharedos::grantstore::client::ControlPlaneEventTypeName;
using ::sharedos::grantstore::client::FormatAddress;
using ::sharedos::grantstore::client::FormatTimestamp;

namespace {

namespace av1 = ::sharedos::audit::v1;
namespace pb = ::sharedos::protocol::v1;
using Json = nlohmann::ordered_json;

// OCSF 1.3.0 classes, categories and enumerations used here.
constexpr int kApiActivity = 6003;
constexpr int kApplicationActivity = 6;
constexpr int kUserAccessManagement = 3005;
constexpr int kEntityManagement = 3004;
constexpr int kIdentityAndAccess = 3;
constexpr int kActivityOther = 99;

// A message as protobuf JSON, every object's keys sorted (so the same record is the same line).
Json ProtoJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) {
    return Json::object();
  }
  // Through nlohmann::json, whose objects sort their keys: protobuf prints a Struct's fields in
  // its map's order, which differs between runs, and an exported line must not.
  const nlohmann::json sorted = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return sorted.is_discarded() ? Json::object() : Json(sorted);
}

int64_t Millis(const google::protobuf::Timestamp& at) {
  return at.seconds() * 1000 + at.nanos() / 1000000;
}

std::string Dump(const Json& line) {
  return common::text::JsonTerminalSafe(
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The jsonl line of a record (also the ocsf lines' unmapped.sharedos).
Json JsonlRecord(const av1::AuditRecord& record) {
  Json line;
  line["schema"] = kExportSchema;
  line["kind"] = "record";
  line["sequence"] = record.sequence();
  line["hash"] = record.hash();
  line["prevHash"] = record.prev_hash();
  line["recordedAt"] = FormatTimestamp(record.recorded_at());
  if (record.has_control_plane()) {
    line["type"] = ControlPlaneEventTypeName(record.control_plane().type());
    line["controlPlane"] = ProtoJson(record.control_plane());
  } else {
    line["type"] = AuditEventTypeName(record.event().type());
    line["event"] = ProtoJson(record.event());
  }
  return line;
}

Json JsonlCheckpoint(const av1::SignedCheckpoint& checkpoint) {
  Json line;
  line["schema"] = kExportSchema;
  line["kind"] = "checkpoint";
  line["sequence"] = checkpoint.sequence();
  line["checkpoint"] = ProtoJson(checkpoint);
  return line;
}

// ---- OCSF ----

// An OCSF User for a SharedOS address (type_id: 1 User, 3 System, 99 Other).
Json OcsfUser(const pb::Address& address) {
  Json user;
  user["uid"] = FormatAddress(address);
  user["name"] = FormatAddress(address);
  if (address.has_human_user_id()) {
    user["type_id"] = 1, user["type"] = "User";
  } else if (address.has_service_id()) {
    user["type_id"] = 3, user["type"] = "System";
  } else {
    user["type_id"] = kActivityOther;
    user["type"] = address.has_agent_id() ? "Agent" : "Group";
  }
  return user;
}

// The base attributes every OCSF event carries.
Json OcsfBase(int class_uid, const char* class_name, int category_uid, const char* category_name,
              int activity_id, const std::string& activity_name, int64_t time_ms) {
  Json event;
  event["class_uid"] = class_uid;
  event["class_name"] = class_name;
  event["category_uid"] = category_uid;
  event["category_name"] = category_name;
  event["activity_id"] = activity_id;
  event["activity_name"] = activity_name;
  event["type_uid"] = static_cast<int64_t>(class_uid) * 100 + activity_id;
  event["type_name"] = absl::StrCat(class_name, ": ", activity_name);
  event["time"] = time_ms;
  return event;
}

Json OcsfMetadata(const std::string& uid, int64_t sequence, int64_t logged_ms,
                  const std::string& correlation) {
  Json metadata;
  metadata["version"] = kOcsfVersion;
  metadata["product"] = {{"name", "SharedOS"}, {"vendor_name", "SharedOS"}};
  metadata["uid"] = uid;
  metadata["sequence"] = sequence;
  metadata["log_name"] = "sharedos.audit";
  if (logged_ms > 0) metadata["logged_time"] = logged_ms;
  if (!correlation.empty()) metadata["correlation_uid"] = correlation;
  return metadata;
}

struct Status {
  int id;
  const char* name;
  int severity_id;
  const char* severity;
};

// OCSF status (1 Success, 2 Failure, 99 Other) and severity (1 Informational, 2 Low, 3 Medium,
// 4 High) of an outcome; a fail-closed refusal is High.
Status OcsfStatus(pb::AuditOutcome outcome, bool fail_closed) {
  switch (outcome) {
    case pb::AUDIT_OUTCOME_ALLOWED:
    case pb::AUDIT_OUTCOME_SUCCEEDED:
      return {1, "Success", 1, "Informational"};
    case pb::AUDIT_OUTCOME_ESCALATED:
      return {kActivityOther, "Escalated", 2, "Low"};
    case pb::AUDIT_OUTCOME_INTERRUPTED:
      return {2, "Failure", 4, "High"};
    case pb::AUDIT_OUTCOME_DENIED:
    case pb::AUDIT_OUTCOME_FAILED:
      return fail_closed ? Status{2, "Failure", 4, "High"} : Status{2, "Failure", 3, "Medium"};
    default:
      return {0, "Unknown", 0, "Unknown"};
  }
}

void SetStatus(Json& event, const Status& status) {
  event["severity_id"] = status.severity_id;
  event["severity"] = status.severity;
  event["status_id"] = status.id;
  event["status"] = status.name;
}

// API Activity's activity from the action a call performed (1 Create, 2 Read, 3 Update,
// 4 Delete, 99 Other).
std::pair<int, std::string> ApiActivity(const std::string& action) {
  const std::string a = absl::AsciiStrToLower(action);
  if (a == "read" || a == "list" || a == "search" || a == "grep" || a == "stat") {
    return {2, "Read"};
  }
  if (a == "create" || a == "write" || a == "send") return {1, "Create"};
  if (a == "update" || a == "edit" || a == "append" || a == "move" || a == "rename") {
    return {3, "Update"};
  }
  if (a == "delete" || a == "remove") return {4, "Delete"};
  return {kActivityOther, "Other"};
}

Json OcsfProtocolEvent(const av1::AuditRecord& record) {
  const pb::AuditEvent& e = record.event();
  const std::string type = AuditEventTypeName(e.type());
  auto [activity_id, activity_name] = ApiActivity(e.action());
  Json event = OcsfBase(kApiActivity, "API Activity", kApplicationActivity, "Application Activity",
                        activity_id, activity_name, Millis(e.at()));
  SetStatus(event, OcsfStatus(e.outcome(), e.fail_closed()));
  if (!e.reason().empty()) event["status_code"] = e.reason();
  if (!e.cause().empty()) event["status_detail"] = e.cause();
  event["message"] = absl::StrCat(type, " ", AuditOutcomeName(e.outcome()),
                                  e.reason().empty() ? "" : absl::StrCat(" ", e.reason()));
  event["metadata"] =
      OcsfMetadata(e.id(), record.sequence(), Millis(record.recorded_at()), e.trace_id());
  // OCSF requires an actor: the record's, else the SharedOS component itself.
  event["actor"] =
      e.has_actor() ? Json{{"user", OcsfUser(e.actor())}} : Json{{"app_name", "SharedOS"}};
  const std::string service =
      e.has_source() ? absl::StrCat("sharedos.", AuditSourceName(e.source())) : "sharedos";
  Json api;
  api["operation"] = !e.tool().empty() ? e.tool() : (!e.action().empty() ? e.action() : type);
  api["service"] = {{"name", service}};
  event["api"] = api;
  event["src_endpoint"] = {{"svc_name", service}};
  if (e.has_resource()) {
    Json resource;
    resource["uid"] =
        absl::StrCat(e.resource().namespace_(), ":", absl::StrJoin(e.resource().path(), "/"));
    resource["type"] = e.resource().namespace_();
    const pb::Address& owner = e.resource().has_owner() ? e.resource().owner() : e.owner();
    if (owner.kind_case() != pb::Address::KIND_NOT_SET) {
      resource["owner"] = OcsfUser(owner);
    }
    event["resources"] = Json::array({resource});
  }
  event["unmapped"] = {{"sharedos", JsonlRecord(record)}};
  return event;
}

std::string MetadataText(const av1::ControlPlaneEvent& e, const std::string& key) {
  const auto& fields = e.metadata().fields();
  auto it = fields.find(key);
  return it != fields.end() && it->second.has_string_value() ? it->second.string_value() : "";
}

Json OcsfControlPlaneEvent(const av1::AuditRecord& record) {
  const av1::ControlPlaneEvent& e = record.control_plane();
  const std::string type = ControlPlaneEventTypeName(e.type());
  Json event;
  if (e.type() == av1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED ||
      e.type() == av1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED ||
      e.type() == av1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED) {
    const bool revoked = e.type() == av1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED;
    event = OcsfBase(kUserAccessManagement, "User Access Management", kIdentityAndAccess,
                     "Identity & Access Management", revoked ? 2 : 1,
                     revoked ? "Revoke Privileges" : "Assign Privileges", Millis(e.at()));
    const std::string subject = MetadataText(e, "subject");
    event["user"] = {{"uid", subject.empty() ? "unknown" : subject},
                     {"name", subject.empty() ? "unknown" : subject}};
    event["privileges"] = Json::array({absl::StrCat("grant:", e.grant_id())});
  } else {
    int activity_id = 3;
    std::string activity_name = "Update";
    Json entity;
    if (e.type() == av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED) {
      activity_id = 1, activity_name = "Create";
      entity = {{"type", "escalation"}, {"uid", MetadataText(e, "escalationId")}};
    } else if (e.type() == av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED) {
      entity = {{"type", "escalation"}, {"uid", MetadataText(e, "escalationId")}};
    } else if (e.type() == av1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED) {
      entity = {{"type", "host_policy"}, {"uid", e.namespace_id()}};
    } else {
      const std::string change = MetadataText(e, "change");
      if (change == "issued") activity_id = 1, activity_name = "Create";
      if (change == "revoked") activity_id = 4, activity_name = "Delete";
      entity = {{"type", "credential"}, {"uid", MetadataText(e, "credentialId")}};
    }
    entity["name"] =
        absl::StrCat(entity["type"].get<std::string>(), " ", entity["uid"].get<std::string>());
    event = OcsfBase(kEntityManagement, "Entity Management", kIdentityAndAccess,
                     "Identity & Access Management", activity_id, activity_name, Millis(e.at()));
    event["entity"] = entity;
  }
  SetStatus(event, OcsfStatus(e.outcome(), false));
  event["message"] = absl::StrCat(type, " ", AuditOutcomeName(e.outcome()));
  event["metadata"] =
      OcsfMetadata(e.id(), record.sequence(), Millis(record.recorded_at()), e.trace_id());
  if (e.has_actor()) event["actor"] = {{"user", OcsfUser(e.actor())}};
  event["unmapped"] = {{"sharedos", JsonlRecord(record)}};
  return event;
}

}  // namespace

absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view text) {
  if (text == "jsonl") return ExportFormat::kJsonl;
  if (text == "ocsf") return ExportFormat::kOcsf;
  return absl::InvalidArgumentError("--format must be jsonl or ocsf");
}

std::string ExportRecordLine(const av1::AuditRecord& record, ExportFormat format) {
  if (format == ExportFormat::kJsonl) return Dump(JsonlRecord(record));
  return Dump(record.has_control_plane() ? OcsfControlPlaneEvent(record)
                                         : OcsfProtocolEvent(record));
}

std::string ExportCheckpointLine(const av1::SignedCheckpoint& checkpoint, ExportFormat format) {
  if (format == ExportFormat::kJsonl) return Dump(JsonlCheckpoint(checkpoint));
  Json event = OcsfBase(kApiActivity, "API Activity", kApplicationActivity, "Application Activity",
                        kActivityOther, "Checkpoint", Millis(checkpoint.at()));
  SetStatus(event, {1, "Success", 1, "Informational"});
  event["message"] = absl::StrCat("audit head ", checkpoint.sequence(), " signed");
  event["metadata"] =
      OcsfMetadata(absl::StrCat("checkpoint-", checkpoint.sequence(), "-", checkpoint.key_id()),
                   checkpoint.sequence(), 0, "");
  event["actor"] = {
      {"user",
       {{"uid", "service:audit"}, {"name", "service:audit"}, {"type_id", 3}, {"type", "System"}}}};
  event["api"] = {{"operation", "Checkpoint"}, {"service", {{"name", "sharedos.audit"}}}};
  event["src_endpoint"] = {{"svc_name", "sharedos.audit"}};
  event["unmapped"] = {{"sharedos", JsonlCheckpoint(checkpoint)}};
  return Dump(event);
}

}  // namespace sharedos::sharedosctl
