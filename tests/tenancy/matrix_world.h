// The world the tenancy matrix runs in: one deployment (sharedosd, the four services as separate
// processes, or two replicas of each on PostgreSQL), the roles of the matrix's columns with their
// credentials, and the targets A/x, A/y, B/x with their fixtures, armed once by the operator
// (tests/tenancy/tenancy_matrix.txt says what each is). Channels and stubs are made once and
// reused by every cell. Calls that consume what they name take a spare fixture, made when the
// previous one was spent. Not thread-safe: one test drives one world.

#ifndef SHAREDOS_TESTS_TENANCY_MATRIX_WORLD_H_
#define SHAREDOS_TESTS_TENANCY_MATRIX_WORLD_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::tenancy {

enum class DeploymentKind { kSharedosd, kFourProcesses, kReplicatedPostgres };
std::string DeploymentName(DeploymentKind kind);

// What one cell's call got: an outcome of the matrix ("ok", "empty", "denied", "hidden",
// "unauth"), or what else came back ("INVALID_ARGUMENT", "http 500", "UNIMPLEMENTED", "fixture",
// …), with the status or page message.
struct Got {
  std::string outcome;
  std::string detail;
};

// The outcome of a gRPC error (never OK): denied, hidden, unauth, or the code's name.
Got FromStatus(const grpc::Status& status);
// OK: ok when the target's data is in the answer, empty otherwise (`detail` says what was
// missing); an error: FromStatus.
Got Answered(const grpc::Status& status, bool has_target, const std::string& detail = "");

// A column of the matrix.
struct Role {
  std::string column;
  // The bearer token; empty for `none`.
  std::string token;
  // False where the deployment has no such credential (the service principals on sharedosd).
  bool exists = true;
  // A credential issued through the control plane: how to issue another like it (the `own`
  // target rotates one). Absent for the static credentials.
  std::optional<grantstore::v1::IssueCredentialRequest> issued;
  // A static credential's id (its name in the credentials file).
  std::string static_id;
};

// A target of the matrix and what was armed for it.
struct Target {
  std::string name;      // "A/x"
  std::string ns;        // "world-a"
  std::string owner_id;  // "user-x"
  std::string OwnerKey() const { return "human:" + owner_id; }
  protocol::v1::Address Owner() const;

  // The fixture host (a host credential of ns and the owner), which is also the target's
  // credential for the credential rows.
  std::string host_id, host_token;
  std::string grant_id;
  // A running turn, opened by the fixture host.
  std::string turn_id, turn_execution, turn_trace;
  // A pending escalation addressed to the owner, and the turn that escalated.
  std::string escalation_id, escalation_execution, escalation_trace;
  grantstore::v1::EscalationRecord escalation;
  // An authority lease of the target's context (opened with the envelope's credential; empty
  // where there is none).
  std::string lease_id;
  // Messages for agent-helper sent in the target's turns and not yet received.
  int inbox = 0;
};

// The reviewer console, spoken to over HTTP as a browser would (cookies, the sign-in token, the
// session's CSRF token).
struct HttpAnswer {
  int status = 0;
  std::string body;
  std::string location;
  std::vector<std::string> set_cookies;
};

class World {
 public:
  // Starts the deployment in `dir` (an existing directory of its own). Errors: those of the
  // deployment's start, naming it.
  static absl::StatusOr<std::unique_ptr<World>> Start(DeploymentKind kind, const std::string& dir);
  ~World();

  // Arms every fixture (credentials, grants, policies, workspaces, turns, escalations, route and
  // authority leases) and waits, reading the record as a stream, until each target's escalated
  // turn has its turn.ended record. Errors: the first call that failed, naming it.
  absl::Status Arm();

  DeploymentKind kind() const { return kind_; }
  // The envelopes are replicated (MessageTransport is served).
  bool replicas() const { return kind_ == DeploymentKind::kReplicatedPostgres; }

  std::vector<Role>& roles() { return roles_; }
  const Role& role(const std::string& column) const;
  const Role& operator_role() const { return role("operator"); }
  Target& target(const std::string& name);
  std::vector<Target>& targets() { return targets_; }

  // A context with `token` as bearer (none when empty) and a 10 s deadline.
  static std::unique_ptr<grpc::ClientContext> As(const std::string& token);

  envelope::v1::Envelope::Stub& envelope() { return *envelope_; }
  envelope::v1::MessageRoutes::Stub& routes() { return *routes_; }
  // One envelope replica (the peer transport keeps its messages per replica).
  envelope::v1::MessageTransport::Stub& peer_transport() { return *peer_transport_; }
  grantstore::v1::GrantStore::Stub& grants() { return *grants_; }
  audit::v1::AuditLog::Stub& audit() { return *audit_; }
  authorizer::v1::Authorizer::Stub& authorizer() { return *authorizer_; }
  // Every process of the deployment.
  std::vector<std::unique_ptr<status::v1::Status::Stub>>& statuses() { return statuses_; }

  // A fresh identifier with `prefix` ("<prefix>-<n>").
  std::string Fresh(const std::string& prefix);

  // The turn request of `target` (the demo turn's shape: agent-assistant for the owner, under the
  // owner's authority, files and sharedos enabled, limits at their maximum).
  envelope::v1::OpenTurnRequest TurnRequest(const Target& target, const std::string& execution_id,
                                            const std::string& trace_id) const;
  // A message of the target's running turn from agent-assistant to `receiver`.
  protocol::v1::MessageEnvelope Message(const Target& target, const std::string& receiver);
  // The target's context (as its turns have it).
  protocol::v1::AccessContext Context(const Target& target, const std::string& trace_id) const;
  // An ownerless capability of `resource_namespace`/`path` bound to the target's owner.
  protocol::v1::Capability Capability(const Target& target, const std::string& resource_namespace,
                                      const std::vector<std::string>& path,
                                      const std::string& action, protocol::v1::Scope scope) const;

  // Spare fixtures of `kind` for `target`: the same one until Spend. Kinds: "turn",
  // "escalation", "grant", "credential", "lease", "reply".
  absl::StatusOr<std::string> Spare(const std::string& kind, Target& target);
  void Spend(const std::string& kind, const Target& target);
  // A reply waiting at the peer transport for the request `Spare("reply", …)` names.
  const protocol::v1::MessageEnvelope& SpareRequest(const Target& target);

  // Sends one message of the target's turn to agent-helper (with its fixture host).
  absl::Status SendToHelper(Target& target);
  // The target whose running turn carries `trace_id`, or null.
  Target* TargetOfTrace(const std::string& trace_id);

  // Issues a credential as the operator: its id and secret.
  absl::StatusOr<std::pair<std::string, std::string>> Issue(
      const grantstore::v1::IssueCredentialRequest& request);

  // The console.
  HttpAnswer ConsoleGet(const std::string& path, const std::string& cookie);
  HttpAnswer ConsolePost(const std::string& path, const std::string& form,
                         const std::string& cookie);
  // Signs `role` in (once per world): its session cookie and CSRF token, or what refused it.
  struct Session {
    std::optional<Got> refused;
    std::string cookie;
    std::string csrf;
  };
  const Session& SignedIn(const Role& role);
  // Signs in with `secret` on a fresh sign-in form: the answer to the sign-in post.
  HttpAnswer SignIn(const std::string& secret);

 private:
  explicit World(DeploymentKind kind) : kind_(kind) {}
  absl::Status StartSharedosd(const std::string& dir);
  absl::Status StartFourProcesses(const std::string& dir);
  void Connect(const std::string& envelope, const std::string& grantstore, const std::string& audit,
               const std::string& authorizer, const std::string& peer_transport,
               const std::vector<std::string>& processes);
  absl::Status IssueRoles();
  absl::Status ArmTarget(Target& target);
  absl::StatusOr<std::string> OpenTurn(const Target& target, const std::string& execution_id,
                                       const std::string& trace_id);
  absl::StatusOr<std::string> NewEscalation(Target& target, std::string* execution_id,
                                            std::string* trace_id);
  absl::StatusOr<std::string> NewLease(const Target& target);
  absl::StatusOr<std::string> NewReply(const Target& target);
  absl::Status AwaitTurnEnded(const Target& target);

  const DeploymentKind kind_;
  std::string files_root_;
  testing::OwnedDatabase postgres_;  // kReplicatedPostgres only
  std::unique_ptr<testing::SharedosdDeployment> sharedosd_;
  std::unique_ptr<testing::FourProcessDeployment> four_;
  std::string console_url_;
  std::string envelope_token_;

  std::vector<Role> roles_;
  std::vector<Target> targets_;
  std::unique_ptr<envelope::v1::Envelope::Stub> envelope_;
  std::unique_ptr<envelope::v1::MessageRoutes::Stub> routes_;
  std::unique_ptr<envelope::v1::MessageTransport::Stub> peer_transport_;
  std::unique_ptr<grantstore::v1::GrantStore::Stub> grants_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
  std::unique_ptr<authorizer::v1::Authorizer::Stub> authorizer_;
  std::vector<std::unique_ptr<status::v1::Status::Stub>> statuses_;

  // The turns the fixtures opened (id, the host that opened it), cancelled at the end.
  std::vector<std::pair<std::string, std::string>> opened_;
  int next_id_ = 0;
  std::map<std::string, std::string> spares_;
  std::map<std::string, protocol::v1::MessageEnvelope> spare_requests_;
  std::map<std::string, Session> sessions_;
};

}  // namespace sharedos::tenancy

#endif  // SHAREDOS_TESTS_TENANCY_MATRIX_WORLD_H_
