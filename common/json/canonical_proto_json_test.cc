#include "common/json/canonical_proto_json.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "common/json/canonical_json.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/wrappers.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::common {
namespace {

using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

// The slow reference path the direct writer must equal byte for byte.
std::string ViaPrinter(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &json, options).ok());
  return CanonicalJson(nlohmann::json::parse(json));
}

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

void ExpectSameAsPrinter(const google::protobuf::Message& message) {
  auto direct = CanonicalProtoJson(message);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(*direct, ViaPrinter(message)) << message.DebugString();
}

TEST(CanonicalProtoJsonTest, MatchesThePrinterOnAFullAuditEvent) {
  ExpectSameAsPrinter(Parse<sharedos::protocol::v1::AuditEvent>(R"pb(
    version: "1"
    id: "e-1"
    type: AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
    outcome: AUDIT_OUTCOME_DENIED
    at { seconds: 1786438800 nanos: 120000000 }
    trace_id: "t"
    namespace_id: "w"
    actor { agent_id: "a" }
    authority { human_user_id: "h" }
    owner { human_user_id: "h" }
    purpose: "p\n\"q\"\x01 é 😀"
    resource {
      namespace: "files"
      path: "Workspace"
      path: "scratch"
      owner { human_user_id: "h" }
    }
    action: "read"
    grant_id: "g"
    authority_hash: "abc"
    operation_id: "op"
    tool: "files.read"
    reason: "no_matching_grant"
    source: AUDIT_SOURCE_KERNEL
    cause: "c"
    fail_closed: false
    consumed: true
    ended_by: ENDED_BY_RUNTIME
    requested_authority {
      id: "capreq-x"
      namespace_id: "w"
      requester { agent_id: "a" }
      owner { human_user_id: "h" }
      purpose: "p"
      requested_at { seconds: 5 nanos: 1000 }
      capabilities {
        resource { namespace: "files" }
        actions: "read"
        scope: SCOPE_EXACT
      }
      constraints { max_uses: 3 delegation_depth: 0 purposes: "x" }
    }
    metadata {
      fields {
        key: "zeta"
        value { number_value: 0.1 }
      }
      fields {
        key: "Alpha"
        value { number_value: 1e21 }
      }
      fields {
        key: "_under"
        value { number_value: -0.0 }
      }
      fields {
        key: "small"
        value { number_value: 1e-7 }
      }
      fields {
        key: "big"
        value { number_value: 1152921504606846976 }
      }
      fields {
        key: "int"
        value { number_value: 42 }
      }
      fields {
        key: "null"
        value { null_value: NULL_VALUE }
      }
      fields {
        key: "bool"
        value { bool_value: true }
      }
      fields {
        key: "emptyList"
        value { list_value {} }
      }
      fields {
        key: "emptyStruct"
        value { struct_value {} }
      }
      fields {
        key: "\xee\x80\x80"
        value { string_value: "private use" }
      }
      fields {
        key: "\xf0\x9f\x98\x80"
        value { string_value: "astral" }
      }
      fields {
        key: "list"
        value {
          list_value {
            values { string_value: "x" }
            values {
              struct_value {
                fields {
                  key: "b"
                  value { number_value: 2 }
                }
                fields {
                  key: "a"
                  value { number_value: 1 }
                }
              }
            }
          }
        }
      }
    })pb"));
}

TEST(CanonicalProtoJsonTest, MatchesThePrinterOnAnExecutionResult) {
  ExpectSameAsPrinter(Parse<sharedos::protocol::v1::ExecutionResult>(R"pb(
    version: "1"
    execution_id: "x"
    trace_id: "t"
    status: EXECUTION_STATUS_ESCALATED
    escalation {
      reason: "r"
      reviewer { human_user_id: "h" }
      status: ESCALATION_STATUS_PENDING
    }
    events {
      version: "1"
      event_id: "e"
      sequence: 7
      type: "turn.started"
      data { string_value: "d" }
      occurred_at { seconds: 1 }
    }
    events {
      version: "1"
      event_id: "f"
      sequence: 0
      type: "turn.escalated"
      data { null_value: NULL_VALUE }
    }
  )pb"));
}

TEST(CanonicalProtoJsonTest, MatchesThePrinterOnWellKnownTypes) {
  google::protobuf::Duration duration;
  duration.set_seconds(-3);
  duration.set_nanos(-500000000);
  ExpectSameAsPrinter(duration);
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(0);
  timestamp.set_nanos(123456789);
  ExpectSameAsPrinter(timestamp);
  google::protobuf::BytesValue bytes;
  bytes.set_value(std::string("\xfb\xff\x00", 3));
  ExpectSameAsPrinter(bytes);
  google::protobuf::Int64Value int64;
  int64.set_value(-9007199254740993LL);
  ExpectSameAsPrinter(int64);
  google::protobuf::FloatValue f;
  f.set_value(0.1f);
  ExpectSameAsPrinter(f);
}

// A Struct that is not protobuf's generated class (here a DynamicMessage) is written through
// reflection instead of its generated map; the text is the same, keys in UTF-16 code-unit order
// (U+1F600 before U+E000, the reverse of their UTF-8 bytes), nested objects and lists included.
TEST(CanonicalProtoJsonTest, StructGeneratedOrDynamicWritesTheSameText) {
  const auto generated = Parse<google::protobuf::Struct>(R"pb(
    fields {
      key: "\xee\x80\x80"
      value { string_value: "private use" }
    }
    fields {
      key: "\xf0\x9f\x98\x80"
      value { number_value: 1.5 }
    }
    fields {
      key: "b"
      value {
        struct_value {
          fields {
            key: "z"
            value { null_value: NULL_VALUE }
          }
          fields {
            key: "a"
            value {
              list_value {
                values { bool_value: true }
                values {
                  struct_value {
                    fields {
                      key: "y"
                      value { string_value: "\"q\"" }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    fields {
      key: "A"
      value { list_value {} }
    }
  )pb");
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<google::protobuf::Message> dynamic(
      factory.GetPrototype(google::protobuf::Struct::descriptor())->New());
  ASSERT_TRUE(dynamic->ParseFromString(generated.SerializeAsString()));
  ASSERT_EQ(google::protobuf::DynamicCastToGenerated<google::protobuf::Struct>(dynamic.get()),
            nullptr);
  const std::string expected =
      "{\"A\":[],\"b\":{\"a\":[true,{\"y\":\"\\\"q\\\"\"}],\"z\":null},"
      "\"\xf0\x9f\x98\x80\":1.5,\"\xee\x80\x80\":\"private use\"}";
  EXPECT_THAT(CanonicalProtoJson(generated), IsOkAndHolds(expected));
  EXPECT_THAT(CanonicalProtoJson(*dynamic), IsOkAndHolds(expected));
  ExpectSameAsPrinter(generated);
}

// Timestamps are formatted without a time zone lookup: the printer's text over the whole range,
// every fraction width, before 1970 and around leap days.
TEST(CanonicalProtoJsonTest, TimestampsMatchThePrinterOverTheirRange) {
  std::vector<int64_t> seconds = {-62135596800LL,
                                  -62135596799LL,
                                  -62135596800LL + 86400 * 59,
                                  -2208988800LL,
                                  -86401,
                                  -86400,
                                  -1,
                                  0,
                                  1,
                                  86399,
                                  951782400,
                                  951868799,
                                  951868800,
                                  4107542400LL,
                                  4107628800LL,
                                  253402300799LL,
                                  253402300799LL - 86400 * 365};
  std::mt19937_64 random(20261130);
  std::uniform_int_distribution<int64_t> any_second(-62135596800LL, 253402300799LL);
  for (int i = 0; i < 3000; ++i) seconds.push_back(any_second(random));
  const std::vector<int32_t> nanos = {0, 1, 999999999, 120000000, 123000, 5000000, 7};
  for (size_t i = 0; i < seconds.size(); ++i) {
    google::protobuf::Timestamp timestamp;
    timestamp.set_seconds(seconds[i]);
    timestamp.set_nanos(nanos[i % nanos.size()]);
    ExpectSameAsPrinter(timestamp);
  }
}

// Numbers in Struct/Value are doubles and render as ECMAScript does — also integral doubles
// beyond 2^53, where the printer path would print the integer digits exactly.
TEST(CanonicalProtoJsonTest, RendersDoublesAsEcmaScript) {
  std::mt19937_64 random(20261130);
  std::uniform_real_distribution<double> exponent(-30, 30);
  sharedos::protocol::v1::AuditEvent event;
  std::map<std::string, double> values;  // key order = code-unit order for these ASCII keys
  for (int i = 0; i < 2000; ++i) {
    const double value = (random() % 2 ? -1 : 1) * std::pow(10.0, exponent(random)) *
                         std::uniform_real_distribution<double>(1, 10)(random);
    const std::string key = "n" + std::to_string(i);
    values[key] = value;
    (*event.mutable_metadata()->mutable_fields())[key].set_number_value(value);
  }
  std::string expected = "{\"metadata\":{";
  for (const auto& [key, value] : values) {
    if (expected.back() != '{') expected += ",";
    expected += "\"" + key + "\":" + EcmaScriptNumberToString(value);
  }
  expected += "}}";
  auto direct = CanonicalProtoJson(event);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_TRUE(*direct == expected)
      << "first difference at byte "
      << std::mismatch(direct->begin(), direct->end(), expected.begin()).first - direct->begin();
}

TEST(CanonicalProtoJsonTest, RefusesWhatJsonCannotCarry) {
  sharedos::protocol::v1::AuditEvent event;
  (*event.mutable_metadata()->mutable_fields())["x"].set_number_value(std::nan(""));
  EXPECT_THAT(CanonicalProtoJson(event),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("$.metadata[x]")));
  sharedos::protocol::v1::AuditEvent bad_utf8;
  bad_utf8.set_purpose(std::string("\xc3", 1));
  EXPECT_THAT(CanonicalProtoJson(bad_utf8),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ill-formed UTF-8")));
}

}  // namespace
}  // namespace sharedos::common
