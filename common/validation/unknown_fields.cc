#include "common/validation/unknown_fields.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/unknown_field_set.h"

namespace sharedos::common::validation {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::Reflection;

bool IsStruct(const Descriptor* d) { return d->full_name() == "google.protobuf.Struct"; }
bool IsValue(const Descriptor* d) { return d->full_name() == "google.protobuf.Value"; }
bool IsListValue(const Descriptor* d) { return d->full_name() == "google.protobuf.ListValue"; }

// Path of a singular message field. A Value's struct/list payload is the Value
// itself in JSON.
std::string SingularPath(const Descriptor* parent, const FieldDescriptor* field,
                         absl::string_view path) {
  if (IsValue(parent)) return std::string(path);
  return FieldPath(path, field->name());
}

// Path of a repeated field's element. A ListValue's elements are JSON array
// elements.
std::string ElementPath(const Descriptor* parent, const FieldDescriptor* field,
                        absl::string_view path, int index) {
  if (IsListValue(parent)) return IndexPath(path, index);
  return IndexPath(FieldPath(path, field->name()), index);
}

// One map entry, with its key in a comparable form.
struct MapEntry {
  const Message* entry;
  std::string string_key;
  int64_t signed_key = 0;
  uint64_t unsigned_key = 0;
  std::string display_key;
};

absl::Status Walk(const Message& message, absl::string_view path);

absl::Status WalkMap(const Message& message, const FieldDescriptor* field, absl::string_view path) {
  const Reflection* reflection = message.GetReflection();
  const FieldDescriptor* key_field = field->message_type()->map_key();
  const FieldDescriptor* value_field = field->message_type()->map_value();
  const int size = reflection->FieldSize(message, field);
  std::vector<MapEntry> entries;
  entries.reserve(size);
  for (int i = 0; i < size; ++i) {
    MapEntry e;
    e.entry = &reflection->GetRepeatedMessage(message, field, i);
    const Reflection* er = e.entry->GetReflection();
    switch (key_field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        e.string_key = er->GetString(*e.entry, key_field);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        e.signed_key = er->GetInt32(*e.entry, key_field);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        e.signed_key = er->GetInt64(*e.entry, key_field);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        e.unsigned_key = er->GetUInt32(*e.entry, key_field);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        e.unsigned_key = er->GetUInt64(*e.entry, key_field);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        e.unsigned_key = er->GetBool(*e.entry, key_field) ? 1 : 0;
        break;
      default:
        break;  // Map keys are integral, bool or string only.
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const MapEntry& a, const MapEntry& b) {
    if (a.string_key != b.string_key) return a.string_key < b.string_key;
    if (a.signed_key != b.signed_key) return a.signed_key < b.signed_key;
    return a.unsigned_key < b.unsigned_key;
  });

  const std::string map_path =
      IsStruct(message.GetDescriptor()) ? std::string(path) : FieldPath(path, field->name());
  for (const MapEntry& e : entries) {
    std::string entry_path;
    switch (key_field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        entry_path = KeyPath(map_path, e.string_key);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
        entry_path = absl::StrCat(map_path, "[", e.signed_key, "]");
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        entry_path = absl::StrCat(map_path, "[", e.unsigned_key ? "true" : "false", "]");
        break;
      default:
        entry_path = absl::StrCat(map_path, "[", e.unsigned_key, "]");
        break;
    }
    // The entry wrapper itself (protobuf normally discards unknown tags there).
    const auto& unknown = e.entry->GetReflection()->GetUnknownFields(*e.entry);
    if (!unknown.empty()) {
      return InvalidArgumentAt(entry_path,
                               absl::StrCat("unknown field ", unknown.field(0).number()));
    }
    if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const Reflection* er = e.entry->GetReflection();
      RETURN_IF_ERROR(Walk(er->GetMessage(*e.entry, value_field), entry_path));
    }
  }
  return absl::OkStatus();
}

absl::Status Walk(const Message& message, absl::string_view path) {
  const Reflection* reflection = message.GetReflection();
  const auto& unknown = reflection->GetUnknownFields(message);
  if (!unknown.empty()) {
    return InvalidArgumentAt(path, absl::StrCat("unknown field ", unknown.field(0).number()));
  }
  const Descriptor* descriptor = message.GetDescriptor();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // Set fields only, by number.
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_map()) {
      RETURN_IF_ERROR(WalkMap(message, field, path));
    } else if (field->is_repeated()) {
      const int size = reflection->FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        RETURN_IF_ERROR(Walk(reflection->GetRepeatedMessage(message, field, i),
                             ElementPath(descriptor, field, path, i)));
      }
    } else {
      RETURN_IF_ERROR(
          Walk(reflection->GetMessage(message, field), SingularPath(descriptor, field, path)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The common case — nothing unknown anywhere — answered without building a single path:
// only set fields are visited, and the path-naming walk runs only when something was found.
// ListFields' output, one vector per nesting depth, kept per thread: after the first message
// of a given depth and size, the scan allocates nothing. A deque, so growing it for a deeper
// level leaves the shallower levels' vectors (which callers are iterating) where they are.
std::vector<const FieldDescriptor*>& FieldsScratch(size_t depth) {
  thread_local std::deque<std::vector<const FieldDescriptor*>> scratch;
  if (scratch.size() <= depth) scratch.resize(depth + 1);
  scratch[depth].clear();
  return scratch[depth];
}

bool AnyUnknownFields(const Message& message, size_t depth = 0) {
  const Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty()) return true;
  // A Struct's map read directly: through reflection, protobuf would first copy every entry,
  // value and all, into a repeated field. (Unknown tags inside a map entry's own wrapper are
  // dropped when the map is parsed, so its values are all there is to look at.)
  if (const auto* generated =
          google::protobuf::DynamicCastToGenerated<google::protobuf::Struct>(&message)) {
    for (const auto& [key, value] : generated->fields()) {
      if (AnyUnknownFields(value, depth + 1)) return true;
    }
    return false;
  }
  std::vector<const FieldDescriptor*>& fields = FieldsScratch(depth);
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      const int size = reflection->FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        if (AnyUnknownFields(reflection->GetRepeatedMessage(message, field, i), depth + 1)) {
          return true;
        }
      }
    } else if (AnyUnknownFields(reflection->GetMessage(message, field), depth + 1)) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::Status RejectUnknownFields(const google::protobuf::Message& message, const PathRef& path) {
  if (!AnyUnknownFields(message)) return absl::OkStatus();
  return Walk(message, path.Render());
}

}  // namespace sharedos::common::validation
