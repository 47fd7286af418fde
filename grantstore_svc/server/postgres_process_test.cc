// grantstore_svc on PostgreSQL, as real processes: `--db=postgresql://...` selects the
// PostgreSQL store; two replicas on one database serve IssueGrant and LoadAuthority, a grant
// issued through one is loaded through the other at the same revision, and a restarted replica
// finds it.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"

namespace sharedos::grantstore::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::testing::CreateClusterWithDatabase;
using ::sharedos::testing::OwnedDatabase;
using ::sharedos::testing::Process;

constexpr char kAdminToken[] = "admin-token-postgres";
constexpr char kServiceToken[] = "service-token-postgres";

std::string Credentials() {
  const std::string path = sharedos::testing::TempPath("credentials.json");
  const std::string json =
      absl::StrCat(R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")",
                   common::server::TokenDigestHex(kAdminToken),
                   R"("}, {"name": "authorizer", "role": "service", "token_sha256": ")",
                   common::server::TokenDigestHex(kServiceToken), R"("}]})");
  EXPECT_THAT(sharedos::testing::WriteFile(path, json), IsOk());
  return path;
}

absl::StatusOr<std::unique_ptr<Process>> StartReplica(const std::string& uri,
                                                      const std::string& credentials) {
  return Process::StartService("grantstore_svc/server/grantstore_svc",
                               {"--port=0", absl::StrCat("--db=", uri),
                                absl::StrCat("--credentials=", credentials), "--audit=discard"},
                               "grantstore_svc");
}

std::unique_ptr<v1::GrantStore::Stub> Stub(const Process& process) {
  return v1::GrantStore::NewStub(
      grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials()));
}

std::unique_ptr<grpc::ClientContext> As(const char* token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return context;
}

protocol::v1::CapabilityGrant Grant(const std::string& id) {
  protocol::v1::CapabilityGrant grant;
  grant.set_id(id);
  grant.set_namespace_id("world");
  grant.mutable_subject()->set_agent_id("assistant");
  grant.mutable_issuer()->set_human_user_id("alice");
  auto* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path("doc");
  capability->add_actions("read");
  capability->set_scope(protocol::v1::SCOPE_EXACT);
  // Owned by its human issuer, as the store would pin it (ADR 0014): stored and loaded as issued.
  capability->mutable_resource()->mutable_owner()->set_human_user_id("alice");
  grant.mutable_constraints();
  grant.mutable_issued_at()->set_seconds(1700000000);
  return grant;
}

absl::StatusOr<v1::LoadAuthorityResponse> Load(v1::GrantStore::Stub& stub,
                                               std::optional<int64_t> at_revision) {
  v1::LoadAuthorityRequest request;
  request.set_namespace_id("world");
  request.mutable_actor()->set_agent_id("assistant");
  request.mutable_authority()->set_human_user_id("alice");
  if (at_revision.has_value()) request.set_at_revision(*at_revision);
  v1::LoadAuthorityResponse response;
  const grpc::Status status = stub.LoadAuthority(As(kServiceToken).get(), request, &response);
  if (!status.ok()) return absl::UnavailableError(status.error_message());
  return response;
}

TEST(GrantStorePostgresProcessTest, ReplicasOnOneDatabaseServeIssueGrantAndLoadAuthority) {
  absl::StatusOr<OwnedDatabase> postgres = CreateClusterWithDatabase("grants");
  ASSERT_THAT(postgres, IsOk());
  const std::string& uri = postgres->uri;
  ASSERT_EQ(uri.rfind("postgresql://", 0), 0u) << "the test relies on a URI --db";
  const std::string credentials = Credentials();
  absl::StatusOr<std::unique_ptr<Process>> first = StartReplica(uri, credentials);
  ASSERT_THAT(first, IsOk());
  absl::StatusOr<std::unique_ptr<Process>> second = StartReplica(uri, credentials);
  ASSERT_THAT(second, IsOk());
  auto one = Stub(**first);
  auto two = Stub(**second);

  int64_t revisions[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    v1::IssueGrantRequest request;
    *request.mutable_grant() = Grant(absl::StrCat("g", i + 1));
    v1::IssueGrantResponse response;
    const grpc::Status status =
        (i == 0 ? *one : *two).IssueGrant(As(kAdminToken).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    revisions[i] = response.revision();
  }
  EXPECT_EQ(revisions[0], 1);
  EXPECT_EQ(revisions[1], 2);  // the next revision, though through the other replica

  // Each replica loads what the other issued; at revision 1 both see g1 alone.
  for (v1::GrantStore::Stub* stub : {one.get(), two.get()}) {
    absl::StatusOr<v1::LoadAuthorityResponse> latest = Load(*stub, std::nullopt);
    ASSERT_THAT(latest, IsOk());
    EXPECT_EQ(latest->revision(), 2);
    ASSERT_EQ(latest->grants_size(), 2);
    EXPECT_EQ(latest->grants(0).id(), "g1");
    EXPECT_EQ(latest->grants(1).id(), "g2");
    absl::StatusOr<v1::LoadAuthorityResponse> at_one = Load(*stub, 1);
    ASSERT_THAT(at_one, IsOk());
    ASSERT_EQ(at_one->grants_size(), 1);
    EXPECT_EQ(at_one->grants(0).SerializeAsString(), Grant("g1").SerializeAsString());
  }

  // A replica started afresh (no local state) serves the same authority.
  (*first)->Kill();
  absl::StatusOr<std::unique_ptr<Process>> restarted = StartReplica(uri, credentials);
  ASSERT_THAT(restarted, IsOk());
  absl::StatusOr<v1::LoadAuthorityResponse> again = Load(*Stub(**restarted), std::nullopt);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->revision(), 2);
  EXPECT_EQ(again->grants_size(), 2);
}

// A URI of another scheme is refused at start, naming --db, instead of becoming a SQLite file.
TEST(GrantStorePostgresProcessTest, AnotherUriSchemeIsRefusedAtStart) {
  absl::StatusOr<std::unique_ptr<Process>> process =
      StartReplica("mysql://root@localhost/grants", Credentials());
  ASSERT_FALSE(process.ok());
  EXPECT_THAT(std::string(process.status().message()), ::testing::HasSubstr("--db"));
}

}  // namespace
}  // namespace sharedos::grantstore::server
