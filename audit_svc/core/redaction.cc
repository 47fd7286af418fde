#include "audit_svc/core/redaction.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"

namespace sharedos::audit::core {
namespace {

// Normalized (lowercase, no '_' or '-') keys that name data the audit log never holds.
constexpr absl::string_view kRedactedKeys[] = {
    // Tool arguments and results, message payloads (semantics §5.3).
    "arguments",
    "args",
    "payload",
    "content",
    "output",
    "result",
    "results",
    "structuredcontent",
    "goldfacts",
    "verdict",
    // Thrown or provider error text.
    "errormessage",
    "stack",
    "stacktrace",
    "exception",
    // Credentials and secrets.
    "secret",
    "secrets",
    "password",
    "passwd",
    "token",
    "accesstoken",
    "refreshtoken",
    "bearertoken",
    "credential",
    "credentials",
    "authorization",
    "apikey",
    "privatekey",
    "clientsecret",
    "cookie",
};

std::string Normalize(absl::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '_' || c == '-') continue;
    out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

absl::Status CheckValue(const google::protobuf::Value& value, const std::string& path);

absl::Status CheckStruct(const google::protobuf::Struct& object, const std::string& path) {
  for (const auto& [key, value] : object.fields()) {
    const std::string child = absl::StrCat(path, ".", key);
    if (IsRedactedKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          child, ": key \"", key,
          "\" is never recorded (tool arguments, results, payloads, error text and credentials "
          "stay out of audit)"));
    }
    absl::Status status = CheckValue(value, child);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status CheckValue(const google::protobuf::Value& value, const std::string& path) {
  if (value.has_struct_value()) return CheckStruct(value.struct_value(), path);
  if (value.has_list_value()) {
    const auto& values = value.list_value().values();
    for (int i = 0; i < values.size(); ++i) {
      absl::Status status = CheckValue(values[i], absl::StrCat(path, "[", i, "]"));
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsRedactedKey(absl::string_view key) {
  const std::string normalized = Normalize(key);
  for (absl::string_view redacted : kRedactedKeys) {
    if (normalized == redacted) return true;
  }
  return false;
}

absl::Status CheckRedaction(const sharedos::protocol::v1::AuditEvent& event,
                            absl::string_view path) {
  std::string base(path);
  if (event.has_metadata()) {
    absl::Status status = CheckStruct(event.metadata(), base + ".metadata");
    if (!status.ok()) return status;
  }
  if (event.has_requested_authority() && event.requested_authority().has_metadata()) {
    return CheckStruct(event.requested_authority().metadata(),
                       base + ".requested_authority.metadata");
  }
  return absl::OkStatus();
}

absl::Status CheckRedaction(const sharedos::audit::v1::ControlPlaneEvent& event,
                            absl::string_view path) {
  if (!event.has_metadata()) return absl::OkStatus();
  return CheckStruct(event.metadata(), std::string(path) + ".metadata");
}

}  // namespace sharedos::audit::core
