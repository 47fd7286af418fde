// Fuzzes the audit log's Query page tokens through AuditLog::Query itself (the token codec is
// private to audit_log.cc), over an in-memory store. Input byte 0 picks whether the rest is the
// token as sent (even) or the text inside its base64url (odd), whether the filter names a
// namespace, and the page size. Properties: nothing crashes; a refusal is INVALID_ARGUMENT
// naming page_token (a token is only accepted back with the filter it was issued for).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/memory_audit_store.h"
#include "common/crypto/base64url.h"
#include "common/time/clock.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace {

using ::sharedos::audit::core::AuditLog;

AuditLog& Log() {
  static AuditLog* log =
      new AuditLog(std::make_unique<sharedos::audit::storage::MemoryAuditStore>(),
                   sharedos::common::RealClock(), AuditLog::Options());
  return *log;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  sharedos::audit::v1::QueryRequest request;
  request.set_page_token((data[0] & 1) ? sharedos::common::Base64UrlEncode(rest)
                                       : std::string(rest));
  if (data[0] & 2) request.mutable_filter()->set_namespace_id("world-1");
  request.set_limit(data[0] >> 4);
  absl::StatusOr<sharedos::audit::v1::QueryResponse> response = Log().Query(request);
  if (response.ok()) return 0;
  if (response.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
  if (!absl::StrContains(response.status().message(), "page_token")) std::abort();
  return 0;
}
