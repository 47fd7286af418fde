// descriptor_digest: prints a normalized, sorted text image of one proto package — every message
// and enum in it, and every type outside it that they reference, transitively — read from a
// FileDescriptorSet (protoc --include_imports --descriptor_set_out). The image names, for each
// message, every field's number, name, json_name, label, type, real oneof and proto3 `optional`;
// for each enum, every value. Two descriptor sets that a strict reader would parse the same way
// give the same image, byte for byte: the freeze check diffs it against proto/frozen/.
//
// Usage: descriptor_digest [--package=sharedos.protocol.v1] DESCRIPTOR_SET
// Exit codes: 0 image printed, 2 usage or input error.

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/descriptor_database.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FieldDescriptorProto;
using google::protobuf::FileDescriptor;
using google::protobuf::FileDescriptorProto;
using google::protobuf::FileDescriptorSet;
using google::protobuf::OneofDescriptor;
using google::protobuf::SimpleDescriptorDatabase;

constexpr char kDefaultPackage[] = "sharedos.protocol.v1";

// Collects the messages and enums of the image, keyed (and so ordered) by full name.
class Collector {
 public:
  explicit Collector(std::string package) : package_(std::move(package)) {}

  void AddFile(const FileDescriptor& file) {
    if (file.package() != package_) return;
    for (int i = 0; i < file.message_type_count(); ++i) AddMessage(*file.message_type(i));
    for (int i = 0; i < file.enum_type_count(); ++i) AddEnum(*file.enum_type(i));
  }

  const std::map<std::string, const Descriptor*>& messages() const { return messages_; }
  const std::map<std::string, const EnumDescriptor*>& enums() const { return enums_; }

 private:
  // Adds a message, its nested types and, transitively, every type its fields reference.
  void AddMessage(const Descriptor& message) {
    if (!messages_.emplace(message.full_name(), &message).second) return;
    for (int i = 0; i < message.nested_type_count(); ++i) AddMessage(*message.nested_type(i));
    for (int i = 0; i < message.enum_type_count(); ++i) AddEnum(*message.enum_type(i));
    for (int i = 0; i < message.field_count(); ++i) {
      const FieldDescriptor& field = *message.field(i);
      if (field.message_type() != nullptr) AddMessage(*field.message_type());
      if (field.enum_type() != nullptr) AddEnum(*field.enum_type());
    }
  }

  void AddEnum(const EnumDescriptor& enum_type) {
    enums_.emplace(enum_type.full_name(), &enum_type);
  }

  const std::string package_;
  std::map<std::string, const Descriptor*> messages_;
  std::map<std::string, const EnumDescriptor*> enums_;
};

std::string Label(const FieldDescriptor& field) {
  switch (field.label()) {
    case FieldDescriptor::LABEL_OPTIONAL:
      return "optional";
    case FieldDescriptor::LABEL_REQUIRED:
      return "required";
    case FieldDescriptor::LABEL_REPEATED:
      return "repeated";
  }
  return "unknown";
}

std::string Type(const FieldDescriptor& field) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_MESSAGE:
      return "message:" + field.message_type()->full_name();
    case FieldDescriptor::TYPE_GROUP:
      return "group:" + field.message_type()->full_name();
    case FieldDescriptor::TYPE_ENUM:
      return "enum:" + field.enum_type()->full_name();
    default:
      return field.type_name();
  }
}

void PrintMessage(const Descriptor& message, std::ostream& out) {
  out << "message " << message.full_name();
  if (message.options().map_entry()) out << " map_entry";
  out << "\n";
  // Real oneofs by name; proto3 `optional` shows on its field instead of as a synthetic oneof.
  std::set<std::string> oneofs;
  for (int i = 0; i < message.oneof_decl_count(); ++i) {
    const OneofDescriptor& oneof = *message.oneof_decl(i);
    if (!oneof.is_synthetic()) oneofs.insert(oneof.name());
  }
  for (const std::string& name : oneofs) out << "  oneof " << name << "\n";
  std::map<int, const FieldDescriptor*> fields;
  for (int i = 0; i < message.field_count(); ++i) {
    fields.emplace(message.field(i)->number(), message.field(i));
  }
  for (const auto& [number, field] : fields) {
    out << "  field " << number << " " << field->name() << " json=" << field->json_name() << " "
        << Label(*field) << " " << Type(*field);
    if (field->real_containing_oneof() != nullptr) {
      out << " oneof=" << field->real_containing_oneof()->name();
    }
    const OneofDescriptor* oneof = field->containing_oneof();
    if (oneof != nullptr && oneof->is_synthetic()) out << " proto3_optional";
    if (field->options().has_packed()) {
      out << " packed=" << (field->options().packed() ? "true" : "false");
    }
    if (field->has_default_value()) {
      FieldDescriptorProto proto;
      field->CopyTo(&proto);
      out << " default=" << proto.default_value();
    }
    out << "\n";
  }
}

void PrintEnum(const EnumDescriptor& enum_type, std::ostream& out) {
  out << "enum " << enum_type.full_name();
  if (enum_type.options().allow_alias()) out << " allow_alias";
  out << "\n";
  std::set<std::pair<int, std::string>> values;
  for (int i = 0; i < enum_type.value_count(); ++i) {
    const EnumValueDescriptor& value = *enum_type.value(i);
    values.emplace(value.number(), value.name());
  }
  for (const auto& [number, name] : values) out << "  value " << number << " " << name << "\n";
}

int Usage() {
  std::cerr << "usage: descriptor_digest [--package=PACKAGE] DESCRIPTOR_SET\n"
            << "  PACKAGE defaults to " << kDefaultPackage << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string package = kDefaultPackage;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string flag = "--package=";
    if (arg.rfind(flag, 0) == 0) {
      package = arg.substr(flag.size());
    } else if (path.empty() && !arg.empty() && arg[0] != '-') {
      path = arg;
    } else {
      return Usage();
    }
  }
  if (path.empty() || package.empty()) return Usage();

  std::ifstream in(path, std::ios::binary);
  FileDescriptorSet set;
  if (!in || !set.ParseFromIstream(&in)) {
    std::cerr << "descriptor_digest: cannot read a FileDescriptorSet from " << path << "\n";
    return 2;
  }
  SimpleDescriptorDatabase database;
  for (const FileDescriptorProto& file : set.file()) {
    if (!database.Add(file)) {
      std::cerr << "descriptor_digest: duplicate or invalid file " << file.name() << "\n";
      return 2;
    }
  }
  DescriptorPool pool(&database);
  Collector collector(package);
  for (const FileDescriptorProto& file : set.file()) {
    const FileDescriptor* built = pool.FindFileByName(file.name());
    if (built == nullptr) {
      std::cerr << "descriptor_digest: cannot build " << file.name()
                << " (is the set missing imports? use protoc --include_imports)\n";
      return 2;
    }
    collector.AddFile(*built);
  }
  if (collector.messages().empty() && collector.enums().empty()) {
    std::cerr << "descriptor_digest: no message or enum of package " << package << " in " << path
              << "\n";
    return 2;
  }

  std::ostringstream out;
  out << "# Frozen image of package " << package
      << " and every type it references (generated by //proto:descriptor_digest).\n"
      << "# Do not edit: see proto/frozen/README.md.\n";
  for (const auto& [name, enum_type] : collector.enums()) {
    out << "\n";
    PrintEnum(*enum_type, out);
  }
  for (const auto& [name, message] : collector.messages()) {
    out << "\n";
    PrintMessage(*message, out);
  }
  std::cout << out.str();
  return std::cout.good() ? 0 : 2;
}
