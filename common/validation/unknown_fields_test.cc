#include "common/validation/unknown_fields.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common::validation {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;

// ---- Wire-format helpers: what a newer writer would send ----

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
std::string Tag(int number, int wire_type) {
  return Varint((static_cast<uint64_t>(number) << 3) | wire_type);
}

std::string VarintField(int number, uint64_t value) { return Tag(number, 0) + Varint(value); }

std::string BytesField(int number, const std::string& bytes) {
  return Tag(number, 2) + Varint(bytes.size()) + bytes;
}

template <typename T>
T ParseText(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

template <typename T>
T ParseWire(const std::string& bytes) {
  T message;
  EXPECT_TRUE(message.ParseFromString(bytes));
  return message;
}

constexpr char kGrant[] = R"pb(
  id: "grant-1"
  namespace_id: "world"
  subject { agent_id: "alice" }
  issuer { human_user_id: "bob" }
  capabilities {
    resource { namespace: "files" path: "docs" }
    actions: "read"
    scope: SCOPE_EXACT
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";

TEST(RejectUnknownFieldsTest, AcceptsCleanMessages) {
  const auto grant = ParseText<pb::CapabilityGrant>(kGrant);
  EXPECT_THAT(RejectUnknownFields(grant, "grant"), IsOk());
  EXPECT_THAT(RejectUnknownFields(pb::ExecutionRequest(), "request"), IsOk());
}

TEST(RejectUnknownFieldsTest, TopLevelUnknownFieldOfEveryWireType) {
  const std::string call = ParseText<pb::ToolCall>(R"pb(id: "c" tool: "t")pb").SerializeAsString();
  const struct {
    std::string extra;
    int number;
  } cases[] = {
      {VarintField(99, 1), 99},
      {BytesField(20, "payload"), 20},
      {Tag(21, 5) + std::string(4, '\0'), 21},
      {Tag(22, 1) + std::string(8, '\0'), 22},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.number);
    const auto parsed = ParseWire<pb::ToolCall>(call + c.extra);
    EXPECT_THAT(RejectUnknownFields(parsed, "call"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "call: unknown field " + std::to_string(c.number)));
  }
}

TEST(RejectUnknownFieldsTest, NestedSingularField) {
  // request.context (4) .actor (2) carries field 9. A repeated occurrence of a
  // singular message field merges into it, as a newer writer's bytes would.
  pb::ExecutionRequest request;
  request.set_version("1");
  request.mutable_context()->mutable_actor()->set_agent_id("alice");
  const std::string actor = request.context().actor().SerializeAsString();
  const std::string extra = BytesField(4, BytesField(2, actor + VarintField(9, 1)));
  const auto parsed = ParseWire<pb::ExecutionRequest>(request.SerializeAsString() + extra);
  EXPECT_EQ(parsed.context().actor().agent_id(), "alice");
  EXPECT_THAT(
      RejectUnknownFields(parsed, "request"),
      StatusIs(absl::StatusCode::kInvalidArgument, "request.context.actor: unknown field 9"));
}

TEST(RejectUnknownFieldsTest, EmptyRootPathNamesTheFieldOnly) {
  const std::string extra = BytesField(4, BytesField(2, VarintField(9, 1)));
  const auto parsed = ParseWire<pb::ExecutionRequest>(extra);
  EXPECT_THAT(RejectUnknownFields(parsed, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "context.actor: unknown field 9"));
  EXPECT_THAT(RejectUnknownFields(ParseWire<pb::ExecutionRequest>(VarintField(77, 0)), ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown field 77"));
}

TEST(RejectUnknownFieldsTest, RepeatedElementIsIndexed) {
  auto grant = ParseText<pb::CapabilityGrant>(kGrant);
  *grant.add_capabilities() = grant.capabilities(0);
  const std::string capability = grant.capabilities(0).SerializeAsString();
  // A third capability (field 5) carrying unknown field 9.
  const auto parsed = ParseWire<pb::CapabilityGrant>(grant.SerializeAsString() +
                                                     BytesField(5, capability + VarintField(9, 3)));
  ASSERT_EQ(parsed.capabilities_size(), 3);
  EXPECT_THAT(
      RejectUnknownFields(parsed, "grant"),
      StatusIs(absl::StatusCode::kInvalidArgument, "grant.capabilities[2]: unknown field 9"));
}

TEST(RejectUnknownFieldsTest, DeepInsideGrantCapabilityResourceOwner) {
  const auto grant = ParseText<pb::CapabilityGrant>(kGrant);
  // capabilities[1] = { resource (1) { ..., owner (3) { agent_id, field 7 } },
  // actions, scope }.
  pb::Capability capability = grant.capabilities(0);
  const std::string resource = capability.resource().SerializeAsString();
  pb::Address owner;
  owner.set_agent_id("carol");
  const std::string owner_bytes = owner.SerializeAsString() + VarintField(7, 1);
  capability.clear_resource();
  const std::string capability_bytes =
      capability.SerializeAsString() + BytesField(1, resource + BytesField(3, owner_bytes));
  const auto parsed =
      ParseWire<pb::CapabilityGrant>(grant.SerializeAsString() + BytesField(5, capability_bytes));
  ASSERT_EQ(parsed.capabilities_size(), 2);
  EXPECT_EQ(parsed.capabilities(1).resource().owner().agent_id(), "carol");
  EXPECT_THAT(RejectUnknownFields(parsed, "grant"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "grant.capabilities[1].resource.owner: unknown field 7"));
}

TEST(RejectUnknownFieldsTest, OneofMember) {
  pb::ExecutionResult result;
  result.mutable_escalation()->set_reason("help");
  // escalation (7) .reviewer (2) with field 12.
  const auto parsed = ParseWire<pb::ExecutionResult>(
      result.SerializeAsString() + BytesField(7, BytesField(2, VarintField(12, 1))));
  EXPECT_THAT(
      RejectUnknownFields(parsed, "result"),
      StatusIs(absl::StatusCode::kInvalidArgument, "result.escalation.reviewer: unknown field 12"));
}

TEST(RejectUnknownFieldsTest, StructValueInMapOnTheWire) {
  // metadata (10) = Struct { fields (1): entry { key (1) "k", value (2) Value {
  // bool (4), field 9 } } }.
  const std::string value = VarintField(4, 1) + VarintField(9, 1);
  const std::string entry = BytesField(1, "k") + BytesField(2, value);
  const auto parsed =
      ParseWire<pb::CapabilityGrant>(ParseText<pb::CapabilityGrant>(kGrant).SerializeAsString() +
                                     BytesField(10, BytesField(1, entry)));
  ASSERT_TRUE(parsed.metadata().fields().at("k").bool_value());
  EXPECT_THAT(
      RejectUnknownFields(parsed, "grant"),
      StatusIs(absl::StatusCode::kInvalidArgument, "grant.metadata[\"k\"]: unknown field 9"));
}

// A Struct that is not protobuf's generated class (here a DynamicMessage) is walked through
// reflection instead of its generated map; both find the same unknown field.
TEST(RejectUnknownFieldsTest, StructOnTheWireGeneratedOrDynamic) {
  // Struct { fields (1): entry { key (1) "k", value (2) Value { struct_value (5) Struct {
  // fields: entry { key "in", value Value { bool (4), field 9 } } } } } }.
  const std::string inner_value = VarintField(4, 1) + VarintField(9, 1);
  const std::string inner = BytesField(1, BytesField(1, "in") + BytesField(2, inner_value));
  const std::string wire = BytesField(1, BytesField(1, "k") + BytesField(2, BytesField(5, inner)));
  google::protobuf::Struct generated;
  ASSERT_TRUE(generated.ParseFromString(wire));
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<google::protobuf::Message> dynamic(
      factory.GetPrototype(google::protobuf::Struct::descriptor())->New());
  ASSERT_TRUE(dynamic->ParseFromString(wire));
  ASSERT_EQ(google::protobuf::DynamicCastToGenerated<google::protobuf::Struct>(dynamic.get()),
            nullptr);
  for (const google::protobuf::Message* message :
       std::vector<const google::protobuf::Message*>{&generated, dynamic.get()}) {
    EXPECT_THAT(
        RejectUnknownFields(*message, "metadata"),
        StatusIs(absl::StatusCode::kInvalidArgument, "metadata[\"k\"][\"in\"]: unknown field 9"));
  }
  // Without the unknown field both are clean.
  const std::string clean_inner =
      BytesField(1, BytesField(1, "in") + BytesField(2, VarintField(4, 1)));
  const std::string clean =
      BytesField(1, BytesField(1, "k") + BytesField(2, BytesField(5, clean_inner)));
  ASSERT_TRUE(generated.ParseFromString(clean));
  ASSERT_TRUE(dynamic->ParseFromString(clean));
  EXPECT_THAT(RejectUnknownFields(generated, "metadata"), IsOk());
  EXPECT_THAT(RejectUnknownFields(*dynamic, "metadata"), IsOk());
}

TEST(RejectUnknownFieldsTest, DeepJsonContentsNamedAsJson) {
  auto grant = ParseText<pb::CapabilityGrant>(R"pb(
    metadata {
      fields {
        key: "b"
        value {
          struct_value {
            fields {
              key: "a"
              value {
                list_value {
                  values { number_value: 1 }
                  values { struct_value {} }
                }
              }
            }
          }
        }
      }
    }
  )pb");
  google::protobuf::Struct* inner = grant.mutable_metadata()
                                        ->mutable_fields()
                                        ->at("b")
                                        .mutable_struct_value()
                                        ->mutable_fields()
                                        ->at("a")
                                        .mutable_list_value()
                                        ->mutable_values(1)
                                        ->mutable_struct_value();
  inner->GetReflection()->MutableUnknownFields(inner)->AddVarint(5, 1);
  EXPECT_THAT(RejectUnknownFields(grant, "grant"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "grant.metadata[\"b\"][\"a\"][1]: unknown field 5"));
}

TEST(RejectUnknownFieldsTest, MapEntriesWalkedInKeyOrder) {
  google::protobuf::Struct metadata;
  for (const char* key : {"zeta", "alpha", "mid"}) {
    google::protobuf::Value& value = (*metadata.mutable_fields())[key];
    value.set_bool_value(true);
    value.GetReflection()->MutableUnknownFields(&value)->AddVarint(key[0] == 'a' ? 11 : 12, 1);
  }
  EXPECT_THAT(
      RejectUnknownFields(metadata, "metadata"),
      StatusIs(absl::StatusCode::kInvalidArgument, "metadata[\"alpha\"]: unknown field 11"));
}

TEST(RejectUnknownFieldsTest, KeysAreEscapedInPaths) {
  google::protobuf::Struct metadata;
  google::protobuf::Value& value = (*metadata.mutable_fields())["a\"b"];
  value.GetReflection()->MutableUnknownFields(&value)->AddVarint(3, 1);
  EXPECT_THAT(RejectUnknownFields(metadata, "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, "m[\"a\\\"b\"]: unknown field 3"));
}

TEST(RejectUnknownFieldsTest, ParentReportedBeforeChildren) {
  pb::ExecutionRequest request;
  request.mutable_context()
      ->mutable_actor()
      ->GetReflection()
      ->MutableUnknownFields(request.mutable_context()->mutable_actor())
      ->AddVarint(9, 1);
  request.GetReflection()->MutableUnknownFields(&request)->AddVarint(40, 1);
  EXPECT_THAT(RejectUnknownFields(request, "request"),
              StatusIs(absl::StatusCode::kInvalidArgument, "request: unknown field 40"));
}

}  // namespace
}  // namespace sharedos::common::validation
