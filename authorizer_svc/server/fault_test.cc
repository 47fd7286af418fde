// Faults with real processes: audit_svc, grantstore_svc and two authorizer_svc binaries on SQLite
// files under TEST_TMPDIR, talking over loopback. Each fault must fail closed, distinguishably in
// audit (failClosed and the reason), and no path may answer allow while a dependency it needs is
// down. Synchronisation is by each child's "listening on" line and by synchronous RPCs (remote
// audit mode makes every pre-effect record durable in audit_svc before the answer): no sleeps.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/test_builders.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/process.h"

namespace sharedos::authorizer::server {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace av = ::sharedos::audit::v1;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::common::IsOk;
using ::sharedos::testing::Process;
using ::sharedos::testing::WriteFile;

constexpr char kAdminToken[] = "fault-admin-token";
constexpr char kAuthorizerToken[] = "fault-authorizer-token";
constexpr char kEnvelopeToken[] = "fault-envelope-token";

std::unique_ptr<grpc::ClientContext> Call(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return context;
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "' && mkdir -p '", dir_, "'").c_str()), 0);
    using common::server::TokenDigestHex;
    ASSERT_THAT(WriteFile(Path("credentials.json"),
                          absl::StrCat(R"({"credentials": [
      {"name": "ops", "role": "admin", "token_sha256": ")",
                                       TokenDigestHex(kAdminToken), R"("},
      {"name": "authorizer", "role": "service", "token_sha256": ")",
                                       TokenDigestHex(kAuthorizerToken), R"("},
      {"name": "envelope", "role": "service", "token_sha256": ")",
                                       TokenDigestHex(kEnvelopeToken), R"("}]})")),
                IsOk());
    ASSERT_THAT(WriteFile(Path("authorizer.token"), absl::StrCat(kAuthorizerToken, "\n")), IsOk());
    ASSERT_THAT(WriteFile(Path("lease.secret"), "fault-test-lease-secret-0123456789abcdef"),
                IsOk());

    audit_ = Start("audit_svc/server/audit_svc", "audit_svc",
                   {"--port=0", "--db=" + Path("audit.db"), "--durability=normal",
                    "--credentials=" + Path("credentials.json")});
    grantstore_ = Start("grantstore_svc/server/grantstore_svc", "grantstore_svc",
                        {"--port=0", "--db=" + Path("grantstore.db"),
                         "--credentials=" + Path("credentials.json"), "--audit=discard"});
    ASSERT_NE(audit_, nullptr);
    ASSERT_NE(grantstore_, nullptr);
    authorizer_a_ = StartAuthorizer("a");
    authorizer_b_ = StartAuthorizer("b");
    ASSERT_NE(authorizer_a_, nullptr);
    ASSERT_NE(authorizer_b_, nullptr);
    a_ = v1::Authorizer::NewStub(Channel(authorizer_a_->address()));
    b_ = v1::Authorizer::NewStub(Channel(authorizer_b_->address()));
    store_ = gs::GrantStore::NewStub(Channel(grantstore_->address()));
    log_ = av::AuditLog::NewStub(Channel(audit_->address()));

    Issue(GrantBuilder("g-read").WithCapability(Cap("files", {"projects"}, {"read"})));
    Issue(GrantBuilder("g-write").MaxUses(3).WithCapability(Cap("files", {"projects"}, {"write"})));
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  static std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  std::unique_ptr<Process> Start(const std::string& runfile, const std::string& name,
                                 const std::vector<std::string>& args) {
    auto child = Process::StartService(runfile, args, name);
    EXPECT_THAT(child, IsOk());
    return child.ok() ? *std::move(child) : nullptr;
  }

  std::unique_ptr<Process> StartAuthorizer(const std::string& replica) {
    return Start(
        "authorizer_svc/server/authorizer_svc", "authorizer_svc",
        {"--port=0", "--credentials=" + Path("credentials.json"),
         "--grantstore_target=" + grantstore_->address(),
         "--grantstore_token_file=" + Path("authorizer.token"),
         "--lease_secret_file=" + Path("lease.secret"), "--audit=remote",
         "--audit_target=" + audit_->address(), "--audit_token_file=" + Path("authorizer.token"),
         "--audit_outbox=" + Path("outbox-" + replica + ".db")});
  }

  void Issue(pb::CapabilityGrant grant) {
    gs::IssueGrantRequest request;
    *request.mutable_grant() = std::move(grant);
    gs::IssueGrantResponse response;
    const grpc::Status status = store_->IssueGrant(Call(kAdminToken).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  int64_t Uses(const std::string& grant_id) {
    gs::GetUsageRequest request;
    request.set_namespace_id("world-1");
    request.set_grant_id(grant_id);
    gs::GetUsageResponse response;
    EXPECT_TRUE(store_->GetUsage(Call(kAuthorizerToken).get(), request, &response).ok());
    return response.uses();
  }

  v1::OpenTurnAuthorityResponse Open(v1::Authorizer::Stub& authorizer,
                                     const std::string& turn_id = "turn-1") {
    v1::OpenTurnAuthorityRequest request;
    *request.mutable_context() = MakeContext();
    request.set_turn_id(turn_id);
    v1::OpenTurnAuthorityResponse response;
    const grpc::Status status =
        authorizer.OpenTurnAuthority(Call(kEnvelopeToken).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::AuthorizeResponse Authorize(v1::Authorizer::Stub& authorizer, const std::string& lease_id,
                                  const std::string& action, bool consume) {
    v1::AuthorizeRequest request;
    request.set_lease_id(lease_id);
    *request.mutable_requirement() = Req("files", {"projects", "notes.md"}, action);
    request.set_consume(consume);
    request.set_operation_id(absl::StrCat("call-", ++calls_));
    v1::AuthorizeResponse response;
    const grpc::Status status =
        authorizer.Authorize(Call(kEnvelopeToken).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // Every event of `type` in the log, in order.
  std::vector<pb::AuditEvent> Audited(pb::AuditEventType type) {
    av::QueryRequest request;
    request.mutable_filter()->set_type(type);
    request.set_limit(1000);
    av::QueryResponse response;
    const grpc::Status status = log_->Query(Call(kAdminToken).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<pb::AuditEvent> events;
    for (const av::AuditRecord& record : response.records()) events.push_back(record.event());
    return events;
  }

  std::string dir_;
  int calls_ = 0;
  std::unique_ptr<Process> audit_;
  std::unique_ptr<Process> grantstore_;
  std::unique_ptr<Process> authorizer_a_;
  std::unique_ptr<Process> authorizer_b_;
  std::unique_ptr<v1::Authorizer::Stub> a_;
  std::unique_ptr<v1::Authorizer::Stub> b_;
  std::unique_ptr<gs::GrantStore::Stub> store_;
  std::unique_ptr<av::AuditLog::Stub> log_;
};

TEST_F(FaultTest, GrantStoreDownAtOpenIsAuthorityUnavailable) {
  grantstore_->Stop(SIGKILL);
  const v1::OpenTurnAuthorityResponse lease = Open(*a_);
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_UNAVAILABLE);
  EXPECT_EQ(lease.code(), "authority_unavailable");
  for (bool consume : {false, true}) {
    const v1::AuthorizeResponse answer = Authorize(*a_, lease.lease_id(), "read", consume);
    EXPECT_FALSE(answer.decision().allowed());
    EXPECT_EQ(answer.decision().reason_code(), "authority_unavailable");
    EXPECT_TRUE(answer.fail_closed());
  }
  // The other replica answers the same lease the same way.
  EXPECT_EQ(Authorize(*b_, lease.lease_id(), "read", false).decision().reason_code(),
            "authority_unavailable");

  const auto resolved = Audited(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(resolved[0].reason(), "authority_unavailable");
  EXPECT_TRUE(resolved[0].fail_closed());
  EXPECT_EQ(resolved[0].metadata().fields().at("authority").string_value(), "grant_source_failed");
  const auto checked = Audited(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_EQ(checked.size(), 3u);
  for (const pb::AuditEvent& event : checked) {
    EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
    EXPECT_EQ(event.reason(), "authority_unavailable");
    EXPECT_TRUE(event.fail_closed());
  }
}

TEST_F(FaultTest, GrantStoreDownMidTurnAnswersFromTheLeaseButNotBoundedUses) {
  const v1::OpenTurnAuthorityResponse lease = Open(*a_);
  ASSERT_EQ(lease.status(), v1::LEASE_STATUS_RESOLVED);
  ASSERT_EQ(lease.grant_count(), 2);
  EXPECT_TRUE(Authorize(*a_, lease.lease_id(), "write", true).consumed());
  grantstore_->Stop(SIGKILL);

  const v1::AuthorizeResponse read = Authorize(*a_, lease.lease_id(), "read", true);
  EXPECT_TRUE(read.decision().allowed()) << "an unbounded grant needs nothing but the lease";
  const v1::AuthorizeResponse write = Authorize(*a_, lease.lease_id(), "write", true);
  EXPECT_FALSE(write.decision().allowed());
  EXPECT_EQ(write.decision().reason_code(), "usage_store_unavailable");
  EXPECT_TRUE(write.fail_closed());
  EXPECT_FALSE(write.consumed());
  // A non-consuming check of a bounded grant needs the counter too.
  EXPECT_EQ(Authorize(*a_, lease.lease_id(), "write", false).decision().reason_code(),
            "usage_store_unavailable");
  // Replica B cannot rebuild the lease without the store: fail closed, not allow.
  const v1::AuthorizeResponse rebuilt = Authorize(*b_, lease.lease_id(), "read", false);
  EXPECT_FALSE(rebuilt.decision().allowed());
  EXPECT_EQ(rebuilt.decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(rebuilt.fail_closed());

  const auto checked = Audited(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_EQ(checked.size(), 5u);
  EXPECT_FALSE(checked[1].has_fail_closed());  // The unbounded read.
  EXPECT_EQ(checked[1].outcome(), pb::AUDIT_OUTCOME_ALLOWED);
  EXPECT_EQ(checked[2].reason(), "usage_store_unavailable");
  EXPECT_TRUE(checked[2].fail_closed());
  EXPECT_EQ(checked[4].reason(), "authority_unavailable");
  EXPECT_TRUE(checked[4].fail_closed());
}

TEST_F(FaultTest, AuditDownIsAuditUnavailableAndSpendsNoUse) {
  const v1::OpenTurnAuthorityResponse lease = Open(*a_);
  ASSERT_EQ(lease.status(), v1::LEASE_STATUS_RESOLVED);
  audit_->Stop(SIGKILL);
  for (const std::string action : {"read", "write"}) {
    const v1::AuthorizeResponse answer = Authorize(*a_, lease.lease_id(), action, true);
    EXPECT_FALSE(answer.decision().allowed()) << action;
    EXPECT_EQ(answer.decision().reason_code(), "audit_unavailable");
    EXPECT_TRUE(answer.fail_closed());
    EXPECT_FALSE(answer.consumed());
  }
  EXPECT_EQ(Uses("g-write"), 0) << "no use is consumed when audit cannot take the record";
  // A new turn cannot start either: its authority cannot be put on record.
  const v1::OpenTurnAuthorityResponse other = Open(*b_, "turn-2");
  EXPECT_EQ(other.status(), v1::LEASE_STATUS_UNAVAILABLE);
  EXPECT_EQ(other.code(), "audit_unavailable");
  EXPECT_EQ(Authorize(*b_, other.lease_id(), "read", false).decision().reason_code(),
            "audit_unavailable");
}

TEST_F(FaultTest, ALeaseOpenedOnOneReplicaIsAnsweredByAnother) {
  const v1::OpenTurnAuthorityResponse lease = Open(*a_);
  ASSERT_EQ(lease.status(), v1::LEASE_STATUS_RESOLVED);
  // Issued after the lease: part of no replica's answer for this turn.
  Issue(GrantBuilder("g-delete").WithCapability(Cap("files", {"projects"}, {"delete"})));

  EXPECT_TRUE(Authorize(*b_, lease.lease_id(), "read", false).decision().allowed());
  const v1::AuthorizeResponse write = Authorize(*b_, lease.lease_id(), "write", true);
  EXPECT_TRUE(write.decision().allowed());
  EXPECT_TRUE(write.consumed());
  EXPECT_EQ(Authorize(*b_, lease.lease_id(), "delete", false).decision().reason_code(),
            "no_matching_grant");
  EXPECT_EQ(Uses("g-write"), 1);

  const auto resolved = Audited(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  ASSERT_EQ(resolved.size(), 1u) << "B rebuilt the snapshot; it did not resolve a new one";
  const auto checked = Audited(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_EQ(checked.size(), 3u);
  for (const pb::AuditEvent& event : checked) {
    EXPECT_EQ(event.authority_hash(), lease.authority_hash());
    EXPECT_EQ(event.authority_hash(), resolved[0].authority_hash());
  }

  // A tampered lease is refused by both.
  std::string tampered = lease.lease_id();
  tampered[tampered.size() - 2] = tampered[tampered.size() - 2] == 'A' ? 'B' : 'A';
  v1::AuthorizeRequest request;
  request.set_lease_id(tampered);
  *request.mutable_requirement() = Req("files", {"projects"}, "read");
  v1::AuthorizeResponse answer;
  EXPECT_EQ(b_->Authorize(Call(kEnvelopeToken).get(), request, &answer).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace sharedos::authorizer::server
