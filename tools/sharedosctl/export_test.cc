#include "tools/sharedosctl/export.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/sharedosctl/export_schemas_testing.h"

namespace sharedos::sharedosctl {
namespace {

namespace av1 = ::sharedos::audit::v1;
using testing::ExportSchema;
using ::testing::HasSubstr;

av1::AuditRecord Record(const std::string& text) {
  av1::AuditRecord record;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &record)) << text;
  return record;
}

constexpr char kHash[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

// A record of each shape the log holds: decisions allowed and denied (fail closed too), a tool
// refusal by the envelope, an escalated turn, and every kind of control-plane record.
std::vector<av1::AuditRecord> Records() {
  const std::string chain = std::string("hash: \"") + std::string(kHash, 64) + "\" prev_hash: \"" +
                            std::string(kHash, 64) +
                            "\" recorded_at { seconds: 1786438801 nanos: 5000000 } ";
  std::vector<av1::AuditRecord> records;
  records.push_back(Record("sequence: 1 " + chain + R"pb(
    event {
      version: "1"
      id: "e-1"
      type: AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
      outcome: AUDIT_OUTCOME_DENIED
      at { seconds: 1786438800 nanos: 123456789 }
      trace_id: "t-1"
      namespace_id: "world-demo"
      actor { agent_id: "agent-assistant" }
      authority { human_user_id: "user-alice" }
      owner { human_user_id: "user-alice" }
      purpose: "keep notes"
      resource { namespace: "files" path: "Workspace" path: "summary.txt" }
      action: "create"
      operation_id: "call-write"
      tool: "files.create"
      reason: "no_matching_grant"
      source: AUDIT_SOURCE_KERNEL
      consumed: false
      metadata {
        fields {
          key: "grantsResolved"
          value { number_value: 1 }
        }
      }
    })pb"));
  records.push_back(Record("sequence: 2 " + chain + R"pb(
    event {
      version: "1"
      id: "e-2"
      type: AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
      outcome: AUDIT_OUTCOME_ALLOWED
      at { seconds: 1786438800 }
      namespace_id: "world-demo"
      actor { agent_id: "agent-assistant" }
      resource { namespace: "files" path: "Workspace" }
      action: "read"
      grant_id: "grant-demo"
      source: AUDIT_SOURCE_KERNEL
    })pb"));
  records.push_back(Record("sequence: 3 " + chain + R"pb(
    event {
      version: "1"
      id: "e-3"
      type: AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
      outcome: AUDIT_OUTCOME_DENIED
      at { seconds: 1786438800 }
      namespace_id: "world-demo"
      reason: "authority_unavailable"
      fail_closed: true
      source: AUDIT_SOURCE_KERNEL
    })pb"));
  records.push_back(Record("sequence: 4 " + chain + R"pb(
    event {
      version: "1"
      id: "e-4"
      type: AUDIT_EVENT_TYPE_TOOL_INVOKED
      outcome: AUDIT_OUTCOME_DENIED
      at { seconds: 1786438800 }
      namespace_id: "world-demo"
      actor { agent_id: "a\x1b[31m" }
      tool: "files.nope\xc2\x9b"
      reason: "tool_unavailable"
      cause: "not_offered"
      source: AUDIT_SOURCE_ENVELOPE
    })pb"));
  records.push_back(Record("sequence: 5 " + chain + R"pb(
    event {
      version: "1"
      id: "e-5"
      type: AUDIT_EVENT_TYPE_TURN_ENDED
      outcome: AUDIT_OUTCOME_ESCALATED
      at { seconds: 1786438800 }
      namespace_id: "world-demo"
      operation_id: "exec-1"
      reason: "escalation_requested"
    })pb"));
  const char* control_plane[] = {
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED
           grant_id: "g-1"
           metadata {
             fields {
               key: "subject"
               value { string_value: "agent:agent-assistant" }
             }
           })pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED
           grant_id: "g-2"
           metadata {
             fields {
               key: "subject"
               value { string_value: "agent:helper" }
             }
           })pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED
           grant_id: "g-1"
           metadata {
             fields {
               key: "subject"
               value { string_value: "agent:agent-assistant" }
             }
           })pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED)pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED
           operation_id: "exec-1"
           metadata {
             fields {
               key: "escalationId"
               value { string_value: "esc-1" }
             }
           })pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED
           grant_id: "g-3"
           metadata {
             fields {
               key: "escalationId"
               value { string_value: "esc-1" }
             }
           })pb",
      R"pb(type: CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED
           metadata {
             fields {
               key: "credentialId"
               value { string_value: "cred-1" }
             }
             fields {
               key: "change"
               value { string_value: "revoked" }
             }
           })pb",
  };
  int sequence = 6;
  for (const char* body : control_plane) {
    records.push_back(Record("sequence: " + std::to_string(sequence) + " " + chain +
                             "control_plane { id: \"c-" + std::to_string(sequence) +
                             "\" outcome: AUDIT_OUTCOME_SUCCEEDED at { seconds: 1786438802 } "
                             "trace_id: \"grantstore-r1\" namespace_id: \"world-demo\" "
                             "actor { human_user_id: \"user-alice\" } purpose: "
                             "\"sharedos.control-plane\" " +
                             body + "}"));
    ++sequence;
  }
  return records;
}

av1::SignedCheckpoint Checkpoint() {
  av1::SignedCheckpoint checkpoint;
  checkpoint.set_sequence(12);
  checkpoint.set_head_hash(std::string(kHash, 64));
  checkpoint.mutable_at()->set_seconds(1786438900);
  checkpoint.set_key_id("0123456789abcdef");
  checkpoint.set_signature(std::string(64, 's'));
  return checkpoint;
}

TEST(ExportTest, EveryJsonlLineIsValidAgainstTheSchemaAndCarriesItsSequence) {
  const std::unique_ptr<ExportSchema> schema = ExportSchema::Load("audit-export-v1.schema.json");
  for (const av1::AuditRecord& record : Records()) {
    const std::string line = ExportRecordLine(record, ExportFormat::kJsonl);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(schema->Violations(line), "") << line;
    const nlohmann::json parsed = nlohmann::json::parse(line);
    EXPECT_EQ(parsed["schema"], "sharedos.audit.export/1");
    EXPECT_EQ(parsed["sequence"], record.sequence());
  }
  const std::string checkpoint = ExportCheckpointLine(Checkpoint(), ExportFormat::kJsonl);
  EXPECT_EQ(schema->Violations(checkpoint), "") << checkpoint;
}

TEST(ExportTest, EveryOcsfLineIsValidAndNamesItsClassAndActivity) {
  const std::unique_ptr<ExportSchema> schema =
      ExportSchema::Load("audit-export-ocsf-v1.schema.json");
  std::vector<int> classes;
  for (const av1::AuditRecord& record : Records()) {
    const std::string line = ExportRecordLine(record, ExportFormat::kOcsf);
    EXPECT_EQ(schema->Violations(line), "") << line;
    const nlohmann::json parsed = nlohmann::json::parse(line);
    EXPECT_EQ(parsed["type_uid"].get<int64_t>(),
              parsed["class_uid"].get<int64_t>() * 100 + parsed["activity_id"].get<int64_t>());
    EXPECT_EQ(parsed["metadata"]["sequence"], record.sequence());
    classes.push_back(parsed["class_uid"].get<int>());
  }
  EXPECT_THAT(classes, ::testing::ElementsAre(6003, 6003, 6003, 6003, 6003, 3005, 3005, 3005, 3004,
                                              3004, 3004, 3004));
  const std::string checkpoint = ExportCheckpointLine(Checkpoint(), ExportFormat::kOcsf);
  EXPECT_EQ(schema->Violations(checkpoint), "") << checkpoint;
}

TEST(ExportTest, OcsfCarriesTheDecisionAsStatusAndTheRecordUnmapped) {
  const nlohmann::json denied =
      nlohmann::json::parse(ExportRecordLine(Records()[0], ExportFormat::kOcsf));
  EXPECT_EQ(denied["activity_name"], "Create");
  EXPECT_EQ(denied["status"], "Failure");
  EXPECT_EQ(denied["status_code"], "no_matching_grant");
  EXPECT_EQ(denied["severity_id"], 3);
  EXPECT_EQ(denied["time"], 1786438800123);
  EXPECT_EQ(denied["actor"]["user"]["uid"], "agent:agent-assistant");
  EXPECT_EQ(denied["api"]["operation"], "files.create");
  EXPECT_EQ(denied["resources"][0]["uid"], "files:Workspace/summary.txt");
  EXPECT_EQ(denied["metadata"]["correlation_uid"], "t-1");
  EXPECT_EQ(denied["unmapped"]["sharedos"]["event"]["reason"], "no_matching_grant");
  const nlohmann::json fail_closed =
      nlohmann::json::parse(ExportRecordLine(Records()[2], ExportFormat::kOcsf));
  EXPECT_EQ(fail_closed["severity_id"], 4);
  const nlohmann::json revoked =
      nlohmann::json::parse(ExportRecordLine(Records()[7], ExportFormat::kOcsf));
  EXPECT_EQ(revoked["activity_name"], "Revoke Privileges");
  EXPECT_EQ(revoked["user"]["uid"], "agent:agent-assistant");
}

TEST(ExportTest, ControlCharactersStayEscapedInBothFormats) {
  for (ExportFormat format : {ExportFormat::kJsonl, ExportFormat::kOcsf}) {
    const std::string line = ExportRecordLine(Records()[3], format);
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << line;
    EXPECT_THAT(line, HasSubstr("\\u001b[31m"));
    EXPECT_THAT(line, HasSubstr("\\u009b"));
  }
}

TEST(ExportTest, FormatsAreNamed) {
  EXPECT_EQ(*ParseExportFormat("jsonl"), ExportFormat::kJsonl);
  EXPECT_EQ(*ParseExportFormat("ocsf"), ExportFormat::kOcsf);
  EXPECT_THAT(ParseExportFormat("csv").status().message(), HasSubstr("--format"));
}

}  // namespace
}  // namespace sharedos::sharedosctl
