#include "common/json/proto_json.h"

#include <google/protobuf/struct.pb.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/status/status_macros.h"

namespace sharedos::common {
namespace {

using ::google::protobuf::ListValue;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using Json = nlohmann::json;

constexpr double kMaxSafeInteger = 9007199254740992.0;  // 2^53
constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

// The JSON pointer of the value being converted, maintained while recursing.
class Pointer {
 public:
  // Appends a segment for the scope of the returned guard.
  class Segment {
   public:
    Segment(Pointer* pointer, absl::string_view key)
        : pointer_(pointer), size_(pointer->text_.size()) {
      pointer_->text_.push_back('/');
      pointer_->text_.append(absl::StrReplaceAll(key, {{"~", "~0"}, {"/", "~1"}}));
    }
    Segment(Pointer* pointer, size_t index) : Segment(pointer, absl::StrCat(index)) {}
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;
    ~Segment() { pointer_->text_.resize(size_); }

   private:
    Pointer* pointer_;
    size_t size_;
  };

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " at \"", text_, "\""));
  }

 private:
  std::string text_;
};

absl::StatusOr<Json> ToJson(const Value& value, Pointer* pointer, int depth);

absl::StatusOr<Json> ToJson(const Struct& value, Pointer* pointer, int depth) {
  if (depth > kMaxProtoJsonDepth) {
    return pointer->Error("google.protobuf.Struct nested too deeply");
  }
  Json result = Json::object();
  for (const auto& [key, field] : value.fields()) {
    Pointer::Segment segment(pointer, key);
    ASSIGN_OR_RETURN(result[key], ToJson(field, pointer, depth + 1));
  }
  return result;
}

absl::StatusOr<Json> ToJson(const ListValue& value, Pointer* pointer, int depth) {
  if (depth > kMaxProtoJsonDepth) {
    return pointer->Error("google.protobuf.ListValue nested too deeply");
  }
  Json result = Json::array();
  for (int i = 0; i < value.values_size(); ++i) {
    Pointer::Segment segment(pointer, static_cast<size_t>(i));
    ASSIGN_OR_RETURN(Json element, ToJson(value.values(i), pointer, depth + 1));
    result.push_back(std::move(element));
  }
  return result;
}

absl::StatusOr<Json> ToJson(const Value& value, Pointer* pointer, int depth) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return Json(nullptr);
    case Value::kNumberValue: {
      const double number = value.number_value();
      if (!std::isfinite(number)) {
        return pointer->Error("google.protobuf.Value number is NaN or infinite");
      }
      if (std::trunc(number) == number && std::fabs(number) <= kMaxSafeInteger) {
        return Json(static_cast<std::int64_t>(number));
      }
      return Json(number);
    }
    case Value::kStringValue:
      return Json(value.string_value());
    case Value::kBoolValue:
      return Json(value.bool_value());
    case Value::kStructValue:
      return ToJson(value.struct_value(), pointer, depth);
    case Value::kListValue:
      return ToJson(value.list_value(), pointer, depth);
    case Value::KIND_NOT_SET:
      break;
  }
  return pointer->Error("google.protobuf.Value has no kind set");
}

// Returns `number` as a double if the double holds it exactly.
absl::StatusOr<double> ExactDouble(const Json& number, const Pointer& pointer) {
  bool exact;
  double result;
  if (number.is_number_unsigned()) {
    const std::uint64_t integer = number.get<std::uint64_t>();
    result = static_cast<double>(integer);
    exact = result < kTwoTo64 && static_cast<std::uint64_t>(result) == integer;
  } else {
    const std::int64_t integer = number.get<std::int64_t>();
    result = static_cast<double>(integer);
    exact = result < kTwoTo63 && static_cast<std::int64_t>(result) == integer;
  }
  if (!exact) {
    return pointer.Error("integer is not exactly representable as a double");
  }
  return result;
}

absl::Status FromJson(const Json& json, Pointer* pointer, int depth, Value* out);

absl::Status FromJson(const Json& json, Pointer* pointer, int depth, Struct* out) {
  if (!json.is_object()) return pointer->Error("expected a JSON object");
  if (depth > kMaxProtoJsonDepth) {
    return pointer->Error("JSON object nested too deeply");
  }
  auto& fields = *out->mutable_fields();
  for (auto it = json.cbegin(); it != json.cend(); ++it) {
    Pointer::Segment segment(pointer, it.key());
    RETURN_IF_ERROR(FromJson(it.value(), pointer, depth + 1, &fields[it.key()]));
  }
  return absl::OkStatus();
}

absl::Status FromJson(const Json& json, Pointer* pointer, int depth, ListValue* out) {
  if (!json.is_array()) return pointer->Error("expected a JSON array");
  if (depth > kMaxProtoJsonDepth) {
    return pointer->Error("JSON array nested too deeply");
  }
  for (size_t i = 0; i < json.size(); ++i) {
    Pointer::Segment segment(pointer, i);
    RETURN_IF_ERROR(FromJson(json[i], pointer, depth + 1, out->add_values()));
  }
  return absl::OkStatus();
}

absl::Status FromJson(const Json& json, Pointer* pointer, int depth, Value* out) {
  switch (json.type()) {
    case Json::value_t::null:
      out->set_null_value(google::protobuf::NULL_VALUE);
      return absl::OkStatus();
    case Json::value_t::boolean:
      out->set_bool_value(json.get<bool>());
      return absl::OkStatus();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      ASSIGN_OR_RETURN(const double number, ExactDouble(json, *pointer));
      out->set_number_value(number);
      return absl::OkStatus();
    }
    case Json::value_t::number_float: {
      const double number = json.get<double>();
      if (!std::isfinite(number)) {
        return pointer->Error("JSON number is NaN or infinite");
      }
      out->set_number_value(number);
      return absl::OkStatus();
    }
    case Json::value_t::string:
      out->set_string_value(json.get_ref<const std::string&>());
      return absl::OkStatus();
    case Json::value_t::object:
      return FromJson(json, pointer, depth, out->mutable_struct_value());
    case Json::value_t::array:
      return FromJson(json, pointer, depth, out->mutable_list_value());
    case Json::value_t::binary:
      return pointer->Error("JSON binary values have no protobuf form");
    case Json::value_t::discarded:
      break;
  }
  return pointer->Error("JSON discarded values have no protobuf form");
}

}  // namespace

absl::StatusOr<nlohmann::json> ProtoValueToJson(const Value& value) {
  Pointer pointer;
  return ToJson(value, &pointer, 0);
}

absl::StatusOr<nlohmann::json> ProtoStructToJson(const Struct& value) {
  Pointer pointer;
  return ToJson(value, &pointer, 0);
}

absl::StatusOr<nlohmann::json> ProtoListValueToJson(const ListValue& value) {
  Pointer pointer;
  return ToJson(value, &pointer, 0);
}

absl::StatusOr<Value> JsonToProtoValue(const nlohmann::json& json) {
  Pointer pointer;
  Value result;
  RETURN_IF_ERROR(FromJson(json, &pointer, 0, &result));
  return result;
}

absl::StatusOr<Struct> JsonToProtoStruct(const nlohmann::json& json) {
  Pointer pointer;
  Struct result;
  RETURN_IF_ERROR(FromJson(json, &pointer, 0, &result));
  return result;
}

absl::StatusOr<ListValue> JsonToProtoListValue(const nlohmann::json& json) {
  Pointer pointer;
  ListValue result;
  RETURN_IF_ERROR(FromJson(json, &pointer, 0, &result));
  return result;
}

}  // namespace sharedos::common
