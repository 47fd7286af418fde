#include "common/json/proto_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "common/json/canonical_json.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::google::protobuf::ListValue;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using Json = nlohmann::json;

template <typename Message>
Message ParseTextProtoOrDie(const std::string& text) {
  Message message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

Value NumberValue(double number) {
  Value value;
  value.set_number_value(number);
  return value;
}

TEST(ProtoValueToJsonTest, ConvertsEveryKind) {
  const Struct proto = ParseTextProtoOrDie<Struct>(R"pb(
    fields {
      key: "null"
      value { null_value: NULL_VALUE }
    }
    fields {
      key: "int"
      value { number_value: 1 }
    }
    fields {
      key: "float"
      value { number_value: 1.5 }
    }
    fields {
      key: "string"
      value { string_value: "caf\303\251" }
    }
    fields {
      key: "bool"
      value { bool_value: true }
    }
    fields {
      key: "list"
      value {
        list_value {
          values { number_value: -2 }
          values { struct_value {} }
          values { list_value {} }
        }
      }
    }
    fields {
      key: "object"
      value {
        struct_value {
          fields {
            key: "nested"
            value { bool_value: false }
          }
        }
      }
    }
  )pb");
  const absl::StatusOr<Json> json = ProtoStructToJson(proto);
  ASSERT_OK(json);
  EXPECT_EQ(CanonicalJson(*json),
            "{\"bool\":true,\"float\":1.5,\"int\":1,\"list\":[-2,{},[]],"
            "\"null\":null,\"object\":{\"nested\":false},\"string\":"
            "\"caf\xc3\xa9\"}");
  EXPECT_EQ(json->dump(),
            "{\"bool\":true,\"float\":1.5,\"int\":1,\"list\":[-2,{},[]],"
            "\"null\":null,\"object\":{\"nested\":false},\"string\":"
            "\"caf\xc3\xa9\"}");
}

TEST(ProtoValueToJsonTest, IntegralDoublesBecomeIntegersUpTo2To53) {
  absl::StatusOr<Json> json = ProtoValueToJson(NumberValue(1.0));
  ASSERT_OK(json);
  EXPECT_TRUE(json->is_number_integer());
  EXPECT_EQ(json->dump(), "1");

  json = ProtoValueToJson(NumberValue(-0.0));
  ASSERT_OK(json);
  EXPECT_EQ(json->dump(), "0");

  json = ProtoValueToJson(NumberValue(9007199254740992.0));
  ASSERT_OK(json);
  EXPECT_TRUE(json->is_number_integer());
  EXPECT_EQ(json->dump(), "9007199254740992");

  // Above 2^53 the double stays a double, so canonical text matches JavaScript.
  json = ProtoValueToJson(NumberValue(1152921504606846976.0));  // 2^60
  ASSERT_OK(json);
  EXPECT_TRUE(json->is_number_float());
  EXPECT_EQ(CanonicalJson(*json), "1152921504606847000");
}

TEST(ProtoValueToJsonTest, RefusesNonFiniteNumbersAndUnsetKinds) {
  EXPECT_THAT(ProtoValueToJson(NumberValue(std::nan(""))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "google.protobuf.Value number is NaN or infinite at \"\""));
  const ListValue list = ParseTextProtoOrDie<ListValue>(R"pb(
    values { number_value: 1 }
    values {
      struct_value {
        fields {
          key: "a/b"
          value { number_value: inf }
        }
      }
    }
  )pb");
  EXPECT_THAT(ProtoListValueToJson(list),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "google.protobuf.Value number is NaN or infinite at "
                       "\"/1/a~1b\""));
  EXPECT_THAT(ProtoValueToJson(Value()), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  "google.protobuf.Value has no kind set at \"\""));
}

TEST(JsonToProtoTest, ConvertsEveryKind) {
  const Json json = Json::parse(R"({"a": [1, -2.5, "s", true, null, {}], "b": {"c": 4294967296}})");
  const absl::StatusOr<Struct> proto = JsonToProtoStruct(json);
  ASSERT_OK(proto);
  const Value& a = proto->fields().at("a");
  ASSERT_EQ(a.list_value().values_size(), 6);
  EXPECT_EQ(a.list_value().values(0).number_value(), 1.0);
  EXPECT_EQ(a.list_value().values(1).number_value(), -2.5);
  EXPECT_EQ(a.list_value().values(2).string_value(), "s");
  EXPECT_TRUE(a.list_value().values(3).bool_value());
  EXPECT_EQ(a.list_value().values(4).kind_case(), Value::kNullValue);
  EXPECT_EQ(a.list_value().values(5).kind_case(), Value::kStructValue);
  EXPECT_EQ(proto->fields().at("b").struct_value().fields().at("c").number_value(), 4294967296.0);
}

TEST(JsonToProtoTest, RoundTripsThroughCanonicalJson) {
  const Json json =
      Json::parse(R"({"z": [1, 2.25, "x\n", false, null], "a": {"k": {"deep": [[]]}},)"
                  R"( "n": -7})");
  const absl::StatusOr<Value> proto = JsonToProtoValue(json);
  ASSERT_OK(proto);
  const absl::StatusOr<Json> back = ProtoValueToJson(*proto);
  ASSERT_OK(back);
  EXPECT_EQ(*back, json);
  EXPECT_EQ(CanonicalJson(*back), CanonicalJson(json));
}

TEST(JsonToProtoTest, IntegersMustBeExactDoubles) {
  EXPECT_THAT(JsonToProtoValue(Json::parse("9007199254740992")), IsOk());
  EXPECT_THAT(JsonToProtoValue(Json::parse("-9223372036854775808")), IsOk());
  EXPECT_THAT(JsonToProtoValue(Json(std::uint64_t{1} << 63)), IsOk());
  EXPECT_THAT(JsonToProtoValue(Json::parse("[9007199254740993]")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "integer is not exactly representable as a double at "
                       "\"/0\""));
  EXPECT_THAT(JsonToProtoValue(Json(std::numeric_limits<std::uint64_t>::max())),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(JsonToProtoValue(Json(std::numeric_limits<std::int64_t>::max())),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JsonToProtoTest, RefusesWhatProtobufCannotHold) {
  Json json = Json::object();
  json["x~"] = Json::array({1, std::numeric_limits<double>::quiet_NaN()});
  EXPECT_THAT(JsonToProtoStruct(json), StatusIs(absl::StatusCode::kInvalidArgument,
                                                "JSON number is NaN or infinite at \"/x~0/1\""));
  EXPECT_THAT(
      JsonToProtoValue(Json(-std::numeric_limits<double>::infinity())),
      StatusIs(absl::StatusCode::kInvalidArgument, "JSON number is NaN or infinite at \"\""));
  EXPECT_THAT(JsonToProtoValue(Json::binary({1, 2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "JSON binary values have no protobuf form at \"\""));
  EXPECT_THAT(JsonToProtoValue(Json(Json::value_t::discarded)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "JSON discarded values have no protobuf form at \"\""));
  EXPECT_THAT(JsonToProtoStruct(Json::array()),
              StatusIs(absl::StatusCode::kInvalidArgument, "expected a JSON object at \"\""));
  EXPECT_THAT(JsonToProtoListValue(Json::object()),
              StatusIs(absl::StatusCode::kInvalidArgument, "expected a JSON array at \"\""));
  EXPECT_THAT(JsonToProtoListValue(Json::parse("[1, {}]")), IsOk());
}

TEST(JsonToProtoTest, RefusesExcessiveNesting) {
  const std::string ok_text =
      std::string(kMaxProtoJsonDepth + 1, '[') + std::string(kMaxProtoJsonDepth + 1, ']');
  EXPECT_THAT(JsonToProtoValue(Json::parse(ok_text)), IsOk());
  const std::string deep_text = std::string(10000, '[') + std::string(10000, ']');
  EXPECT_THAT(JsonToProtoValue(Json::parse(deep_text)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       testing::HasSubstr("JSON array nested too deeply at \"/0/0/")));

  Value deep;
  Value* cursor = &deep;
  for (int i = 0; i < 200; ++i) {
    cursor = cursor->mutable_list_value()->add_values();
  }
  cursor->set_null_value(google::protobuf::NULL_VALUE);
  EXPECT_THAT(ProtoValueToJson(deep),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       testing::HasSubstr("google.protobuf.ListValue nested too deeply")));
}

}  // namespace
}  // namespace sharedos::common
