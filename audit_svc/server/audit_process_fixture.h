// What the integration tests of audit_svc as a process share (checkpoints, the witness): a call
// context carrying a bearer token, the denied tool call they fill a log with, appended through a
// real client as the envelope, and the credentials file naming an admin and that writer.
// Header-only, for tests.
#ifndef SHAREDOS_AUDIT_SVC_SERVER_AUDIT_PROCESS_FIXTURE_H_
#define SHAREDOS_AUDIT_SVC_SERVER_AUDIT_PROCESS_FIXTURE_H_

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/server/auth.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::server::testing {

// A client context presenting `token`, with a deadline `seconds` from now.
inline std::unique_ptr<grpc::ClientContext> As(const std::string& token, int seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

// The i-th event of a test's log: agent:mallory's tool call, denied tool_unavailable by the
// envelope, in namespace "world" under `trace_id`.
inline protocol::v1::AuditEvent Denied(int i, const std::string& trace_id,
                                       const std::string& purpose) {
  protocol::v1::AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("denied-", i));
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_DENIED);
  event.mutable_at()->set_seconds(1786438800 + i);
  event.set_trace_id(trace_id);
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose(purpose);
  event.set_reason("tool_unavailable");
  event.set_source(protocol::v1::AUDIT_SOURCE_ENVELOPE);
  return event;
}

// Appends Denied(from) … Denied(to - 1), one call each, as the envelope (`writer_token`).
inline void AppendDenied(v1::AuditLog::Stub& stub, const std::string& writer_token, int from,
                         int to, const std::string& trace_id, const std::string& purpose) {
  for (int i = from; i < to; ++i) {
    v1::AppendRequest request;
    *request.add_events() = Denied(i, trace_id, purpose);
    v1::AppendResponse response;
    const grpc::Status status = stub.Append(As(writer_token, 30).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
}

// Writes `content` to `path` (replacing it) and returns `path`.
inline std::string Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::trunc) << content;
  return path;
}

// A credentials file (--credentials) naming "ops" (admin, `admin_token`) and "envelope" (the
// writer, `writer_token`), as digests; returns `path`.
inline std::string WriteAdminAndWriterCredentials(const std::string& path,
                                                  const std::string& admin_token,
                                                  const std::string& writer_token) {
  return Write(
      path, absl::StrCat(R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")",
                         common::server::TokenDigestHex(admin_token),
                         R"("}, {"name": "envelope", "role": "service", "token_sha256": ")",
                         common::server::TokenDigestHex(writer_token), R"("}]})"));
}

}  // namespace sharedos::audit::server::testing

#endif  // SHAREDOS_AUDIT_SVC_SERVER_AUDIT_PROCESS_FIXTURE_H_
