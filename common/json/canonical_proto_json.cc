#include "common/json/canonical_proto_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/json/canonical_json.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/struct.pb.h"

namespace sharedos::common {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::Reflection;

// Per message type, its fields in output (json_name code-unit) order. Built once per type.
class FieldOrderCache {
 public:
  const std::vector<const FieldDescriptor*>& Get(const Descriptor* descriptor) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = cache_.find(descriptor);
      if (it != cache_.end()) return *it->second;
    }
    auto fields = std::make_unique<std::vector<const FieldDescriptor*>>();
    for (int i = 0; i < descriptor->field_count(); ++i) fields->push_back(descriptor->field(i));
    std::sort(fields->begin(), fields->end(),
              [](const FieldDescriptor* a, const FieldDescriptor* b) {
                return Utf16SortKey(a->json_name()) < Utf16SortKey(b->json_name());
              });
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = cache_.emplace(descriptor, std::move(fields));
    return *it->second;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<const Descriptor*, std::unique_ptr<std::vector<const FieldDescriptor*>>>
      cache_ ABSL_GUARDED_BY(mu_);
};

FieldOrderCache& Cache() {
  static auto* cache = new FieldOrderCache();
  return *cache;
}

// Where the writer is, kept as a stack of parts and rendered only for an error message, so the
// common case builds no path strings at all.
struct PathPart {
  enum class Kind { kField, kIndex, kKey } kind;
  absl::string_view name;  // field json_name or map key
  int index = 0;
};

class Writer {
 public:
  absl::StatusOr<std::string> Run(const Message& message) {
    if (!WriteMessage(message, Path())) return std::move(error_);
    return std::move(out_);
  }

 private:
  // A scope that pushes one path part and pops it on exit.
  class Path {
   public:
    Path() = default;
    Path(Writer* writer, PathPart part) : writer_(writer) { writer_->path_.push_back(part); }
    ~Path() {
      if (writer_ != nullptr) writer_->path_.pop_back();
    }
    Path(const Path&) = delete;
    Path& operator=(const Path&) = delete;

   private:
    Writer* writer_ = nullptr;
  };
  Path Field(absl::string_view name) { return Path(this, {PathPart::Kind::kField, name, 0}); }
  Path Index(int index) { return Path(this, {PathPart::Kind::kIndex, {}, index}); }
  Path Key(absl::string_view key) { return Path(this, {PathPart::Kind::kKey, key, 0}); }

  bool Fail(const Path&, absl::string_view problem) {
    std::string rendered = "$";
    for (const PathPart& part : path_) {
      switch (part.kind) {
        case PathPart::Kind::kField:
          absl::StrAppend(&rendered, ".", part.name);
          break;
        case PathPart::Kind::kIndex:
          absl::StrAppend(&rendered, "[", part.index, "]");
          break;
        case PathPart::Kind::kKey:
          absl::StrAppend(&rendered, "[", part.name, "]");
          break;
      }
    }
    error_ = absl::InvalidArgumentError(absl::StrCat(rendered, ": ", problem));
    return false;
  }

  bool WriteString(absl::string_view text, const Path& path) {
    if (!AppendJsonStringTo(text, &out_)) return Fail(path, "ill-formed UTF-8");
    return true;
  }

  bool WriteDouble(double value, const Path& path) {
    if (!std::isfinite(value)) return Fail(path, "not a finite number");
    out_.append(EcmaScriptNumberToString(value));
    return true;
  }

  bool WriteMessage(const Message& message, const Path& path) {
    const Descriptor* descriptor = message.GetDescriptor();
    switch (descriptor->well_known_type()) {
      case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
        return WriteTimestamp(message, path);
      case Descriptor::WELLKNOWNTYPE_DURATION:
        return WriteDuration(message, path);
      case Descriptor::WELLKNOWNTYPE_STRUCT:
        return WriteStruct(message, path);
      case Descriptor::WELLKNOWNTYPE_VALUE:
        return WriteValue(message, path);
      case Descriptor::WELLKNOWNTYPE_LISTVALUE:
        return WriteList(message, path);
      case Descriptor::WELLKNOWNTYPE_DOUBLEVALUE:
      case Descriptor::WELLKNOWNTYPE_FLOATVALUE:
      case Descriptor::WELLKNOWNTYPE_INT64VALUE:
      case Descriptor::WELLKNOWNTYPE_UINT64VALUE:
      case Descriptor::WELLKNOWNTYPE_INT32VALUE:
      case Descriptor::WELLKNOWNTYPE_UINT32VALUE:
      case Descriptor::WELLKNOWNTYPE_STRINGVALUE:
      case Descriptor::WELLKNOWNTYPE_BYTESVALUE:
      case Descriptor::WELLKNOWNTYPE_BOOLVALUE:
        return WriteSingular(message, descriptor->field(0), path);
      case Descriptor::WELLKNOWNTYPE_ANY:
      case Descriptor::WELLKNOWNTYPE_FIELDMASK:
        return Fail(path, "Any and FieldMask are not supported");
      default:
        break;
    }
    const Reflection* reflection = message.GetReflection();
    out_.push_back('{');
    bool first = true;
    for (const FieldDescriptor* field : Cache().Get(descriptor)) {
      if (field->is_repeated()) {
        if (reflection->FieldSize(message, field) == 0) continue;
      } else if (!reflection->HasField(message, field)) {
        // proto3 fields without presence are "set" only when not at their default; HasField
        // says exactly that for them, and presence for the others.
        continue;
      }
      if (!first) out_.push_back(',');
      first = false;
      if (!WriteString(field->json_name(), path)) return false;
      out_.push_back(':');
      const Path child = Field(field->json_name());
      bool ok = field->is_map()        ? WriteMap(message, field, child)
                : field->is_repeated() ? WriteRepeated(message, field, child)
                                       : WriteSingular(message, field, child);
      if (!ok) return false;
    }
    out_.push_back('}');
    return true;
  }

  bool WriteSingular(const Message& message, const FieldDescriptor* field, const Path& path) {
    const Reflection* r = message.GetReflection();
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&out_, r->GetInt32(message, field));
        return true;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&out_, r->GetUInt32(message, field));
        return true;
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(&out_, "\"", r->GetInt64(message, field), "\"");
        return true;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&out_, "\"", r->GetUInt64(message, field), "\"");
        return true;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return WriteDouble(r->GetDouble(message, field), path);
      case FieldDescriptor::CPPTYPE_FLOAT:
        return WriteFloat(r->GetFloat(message, field), path);
      case FieldDescriptor::CPPTYPE_BOOL:
        out_.append(r->GetBool(message, field) ? "true" : "false");
        return true;
      case FieldDescriptor::CPPTYPE_ENUM:
        return WriteEnum(field, r->GetEnumValue(message, field), path);
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& value = r->GetStringReference(message, field, &scratch);
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          absl::StrAppend(&out_, "\"", absl::Base64Escape(value), "\"");
          return true;
        }
        return WriteString(value, path);
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return WriteMessage(r->GetMessage(message, field), path);
    }
    return Fail(path, "unsupported field type");
  }

  bool WriteRepeated(const Message& message, const FieldDescriptor* field, const Path& path) {
    const Reflection* r = message.GetReflection();
    const int size = r->FieldSize(message, field);
    out_.push_back('[');
    for (int i = 0; i < size; ++i) {
      if (i > 0) out_.push_back(',');
      const Path child = Index(i);
      bool ok = true;
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
          absl::StrAppend(&out_, r->GetRepeatedInt32(message, field, i));
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          absl::StrAppend(&out_, r->GetRepeatedUInt32(message, field, i));
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          absl::StrAppend(&out_, "\"", r->GetRepeatedInt64(message, field, i), "\"");
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          absl::StrAppend(&out_, "\"", r->GetRepeatedUInt64(message, field, i), "\"");
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          ok = WriteDouble(r->GetRepeatedDouble(message, field, i), child);
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          ok = WriteFloat(r->GetRepeatedFloat(message, field, i), child);
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          out_.append(r->GetRepeatedBool(message, field, i) ? "true" : "false");
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          ok = WriteEnum(field, r->GetRepeatedEnumValue(message, field, i), child);
          break;
        case FieldDescriptor::CPPTYPE_STRING: {
          std::string scratch;
          const std::string& value = r->GetRepeatedStringReference(message, field, i, &scratch);
          if (field->type() == FieldDescriptor::TYPE_BYTES) {
            absl::StrAppend(&out_, "\"", absl::Base64Escape(value), "\"");
          } else {
            ok = WriteString(value, child);
          }
          break;
        }
        case FieldDescriptor::CPPTYPE_MESSAGE:
          ok = WriteMessage(r->GetRepeatedMessage(message, field, i), child);
          break;
      }
      if (!ok) return false;
    }
    out_.push_back(']');
    return true;
  }

  // One member of a JSON object: its key, and its value as `field` of `holder` (or, with no
  // field, `holder` itself, a google.protobuf.Value).
  struct Member {
    std::u16string sort_key;
    std::string key;
    const Message* holder;
    const FieldDescriptor* field;
  };

  // Writes the members as an object, in UTF-16 code-unit order of their keys.
  bool WriteMembers(std::vector<Member>& members, const Path& path) {
    std::sort(members.begin(), members.end(),
              [](const Member& a, const Member& b) { return a.sort_key < b.sort_key; });
    out_.push_back('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out_.push_back(',');
      const Member& member = members[i];
      if (!WriteString(member.key, path)) return false;
      out_.push_back(':');
      const Path child = Key(member.key);
      const bool ok = member.field != nullptr ? WriteSingular(*member.holder, member.field, child)
                                              : WriteValue(*member.holder, child);
      if (!ok) return false;
    }
    out_.push_back('}');
    return true;
  }

  bool WriteMap(const Message& message, const FieldDescriptor* field, const Path& path) {
    const Reflection* r = message.GetReflection();
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    std::vector<Member> members;
    for (int i = 0; i < r->FieldSize(message, field); ++i) {
      const Message& entry = r->GetRepeatedMessage(message, field, i);
      const Reflection* er = entry.GetReflection();
      std::string key;
      switch (key_field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING:
          key = er->GetString(entry, key_field);
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          key = absl::StrCat(er->GetInt32(entry, key_field));
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          key = absl::StrCat(er->GetUInt32(entry, key_field));
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          key = absl::StrCat(er->GetInt64(entry, key_field));
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          key = absl::StrCat(er->GetUInt64(entry, key_field));
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          key = er->GetBool(entry, key_field) ? "true" : "false";
          break;
        default:
          return Fail(path, "unsupported map key type");
      }
      members.push_back({Utf16SortKey(key), std::move(key), &entry, value_field});
    }
    return WriteMembers(members, path);
  }

  bool WriteEnum(const FieldDescriptor* field, int number, const Path& path) {
    if (field->enum_type()->full_name() == "google.protobuf.NullValue") {
      out_.append("null");
      return true;
    }
    const auto* value = field->enum_type()->FindValueByNumber(number);
    if (value == nullptr) {
      absl::StrAppend(&out_, number);
      return true;
    }
    return WriteString(value->name(), path);
  }

  bool WriteFloat(float value, const Path& path) {
    if (!std::isfinite(value)) return Fail(path, "not a finite number");
    // As the JSON printer does: the shortest decimal that reads back as the same float, then
    // that decimal read as a double.
    char buffer[32];
    for (int precision = 6; precision <= 9; ++precision) {
      std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(value));
      if (std::strtof(buffer, nullptr) == value) break;
    }
    return WriteDouble(std::strtod(buffer, nullptr), path);
  }

  bool WriteTimestamp(const Message& message, const Path& path) {
    const Reflection* r = message.GetReflection();
    const Descriptor* d = message.GetDescriptor();
    const int64_t seconds = r->GetInt64(message, d->FindFieldByName("seconds"));
    const int32_t nanos = r->GetInt32(message, d->FindFieldByName("nanos"));
    // 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z
    if (seconds < -62135596800LL || seconds > 253402300799LL || nanos < 0 || nanos > 999999999) {
      return Fail(path, "timestamp out of range");
    }
    const absl::CivilSecond civil =
        absl::ToCivilSecond(absl::FromUnixSeconds(seconds), absl::UTCTimeZone());
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "\"%04d-%02d-%02dT%02d:%02d:%02d",
                  static_cast<int>(civil.year()), civil.month(), civil.day(), civil.hour(),
                  civil.minute(), civil.second());
    out_.append(buffer);
    AppendFraction(nanos);
    out_.append("Z\"");
    return true;
  }

  bool WriteDuration(const Message& message, const Path& path) {
    const Reflection* r = message.GetReflection();
    const Descriptor* d = message.GetDescriptor();
    int64_t seconds = r->GetInt64(message, d->FindFieldByName("seconds"));
    int32_t nanos = r->GetInt32(message, d->FindFieldByName("nanos"));
    if (seconds < -315576000000LL || seconds > 315576000000LL || nanos < -999999999 ||
        nanos > 999999999 || (seconds < 0 && nanos > 0) || (seconds > 0 && nanos < 0)) {
      return Fail(path, "duration out of range");
    }
    out_.push_back('"');
    if (seconds < 0 || nanos < 0) {
      out_.push_back('-');
      seconds = -seconds;
      nanos = -nanos;
    }
    absl::StrAppend(&out_, seconds);
    AppendFraction(nanos);
    out_.append("s\"");
    return true;
  }

  // ".fff", ".ffffff" or ".fffffffff" as needed; nothing for zero.
  void AppendFraction(int32_t nanos) {
    if (nanos == 0) return;
    char buffer[16];
    if (nanos % 1000000 == 0) {
      std::snprintf(buffer, sizeof(buffer), ".%03d", nanos / 1000000);
    } else if (nanos % 1000 == 0) {
      std::snprintf(buffer, sizeof(buffer), ".%06d", nanos / 1000);
    } else {
      std::snprintf(buffer, sizeof(buffer), ".%09d", nanos);
    }
    out_.append(buffer);
  }

  bool WriteStruct(const Message& message, const Path& path) {
    const auto* generated =
        google::protobuf::DynamicCastToGenerated<google::protobuf::Struct>(&message);
    if (generated == nullptr) {
      return WriteMap(message, message.GetDescriptor()->FindFieldByName("fields"), path);
    }
    // The generated map read directly: through reflection, protobuf would first copy every
    // entry, value and all, into a repeated field.
    std::vector<Member> members;
    members.reserve(generated->fields().size());
    for (const auto& [key, value] : generated->fields()) {
      members.push_back({Utf16SortKey(key), key, &value, nullptr});
    }
    return WriteMembers(members, path);
  }

  bool WriteList(const Message& message, const Path& path) {
    return WriteRepeated(message, message.GetDescriptor()->FindFieldByName("values"), path);
  }

  bool WriteValue(const Message& message, const Path& path) {
    const Reflection* r = message.GetReflection();
    const Descriptor* d = message.GetDescriptor();
    const auto* oneof = d->FindOneofByName("kind");
    const FieldDescriptor* kind = r->GetOneofFieldDescriptor(message, oneof);
    if (kind == nullptr) return Fail(path, "Value with no kind");
    return WriteSingular(message, kind, path);
  }

  std::string out_;
  absl::Status error_;
  std::vector<PathPart> path_;
};

}  // namespace

absl::StatusOr<std::string> CanonicalProtoJson(const Message& message) {
  Writer writer;
  return writer.Run(message);
}

}  // namespace sharedos::common
