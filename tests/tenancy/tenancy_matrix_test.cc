// The tenancy matrix (issue 33, docs/adr/0014-tenants-apart.md): every RPC of every service
// SharedOS serves and every page of its reviewer console, called by every role against the
// resources of two namespaces and two owners, each answer classified and compared with the one
// declarative table tests/tenancy/tenancy_matrix.txt. Every mismatching cell is reported at once
// (method, target, role, expected, got, the answer's message), and the cells as observed are
// written to the test's undeclared outputs. Runs against sharedosd, the four services as
// separate processes and (tenancy_matrix_postgres_test) two replicas of each on PostgreSQL.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/server/access_policy.h"
#include "common/server/auth.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "tests/tenancy/matrix_table.h"
#include "tests/tenancy/matrix_world.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos::tenancy {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace av1 = ::sharedos::audit::v1;
namespace az = ::sharedos::authorizer::v1;
namespace st = ::sharedos::status::v1;
namespace demo = ::sharedos::testing::demo;

// ---------------------------------------------------------------- the table and the services

std::string MatrixText() {
  std::ifstream in(testing::RunfilePath("tests/tenancy/tenancy_matrix.txt"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The services SharedOS serves (ToolProvider and ResourceProvider are hosts' to serve).
std::vector<const google::protobuf::ServiceDescriptor*> ServedServices() {
  return {
      av1::AppendRequest::descriptor()->file()->FindServiceByName("AuditLog"),
      az::AuthorizeRequest::descriptor()->file()->FindServiceByName("Authorizer"),
      ev1::OpenTurnRequest::descriptor()->file()->FindServiceByName("Envelope"),
      ev1::ReceiveRequest::descriptor()->file()->FindServiceByName("MessageRoutes"),
      ev1::ReceiveRequest::descriptor()->file()->FindServiceByName("MessageTransport"),
      gs::IssueGrantRequest::descriptor()->file()->FindServiceByName("GrantStore"),
      st::GetStatusRequest::descriptor()->file()->FindServiceByName("Status"),
  };
}

// "GrantStore/IssueGrant" → "sharedos.grantstore.v1.GrantStore/IssueGrant"; "console:/queue" →
// "console /queue" (the access table's names). Empty when the service is not served.
std::string PolicyName(const std::string& method) {
  if (absl::StartsWith(method, "console:")) return "console " + method.substr(8);
  const std::string service = method.substr(0, method.find('/'));
  for (const google::protobuf::ServiceDescriptor* served : ServedServices()) {
    if (served != nullptr && served->name() == service) {
      return absl::StrCat(served->full_name(), method.substr(method.find('/')));
    }
  }
  return "";
}

// ---------------------------------------------------------------- drivers

// Builds the row's request for its target, calls it as `role`, classifies the answer.
using Driver = std::function<Got(World&, const Role&, const MatrixRow&)>;

std::unique_ptr<grpc::ClientContext> As(const Role& role) { return World::As(role.token); }

bool IsAdmin(const Role& role) {
  return role.column == "operator" || role.column == "admin-A" || role.column == "admin-B";
}

Got Fixture(const absl::Status& status) {
  return {"fixture", absl::StrCat("arming the cell failed: ", status.ToString())};
}

pb::Address Agent(const std::string& id) {
  pb::Address address;
  address.set_agent_id(id);
  return address;
}

// Both results of a check that must agree (every process of a deployment).
Got Combine(const std::vector<Got>& each) {
  std::set<std::string> outcomes;
  for (const Got& got : each) outcomes.insert(got.outcome);
  if (outcomes.size() == 1) return each.front();
  std::vector<std::string> all;
  for (const Got& got : each) all.push_back(got.outcome);
  return {absl::StrCat("mixed(", absl::StrJoin(all, ","), ")"), each.front().detail};
}

// A stream after its first Read: ok when that read the target's data, else what Finish said.
template <typename Reader>
Got FirstOfStream(grpc::ClientContext& context, Reader& reader, bool read, bool targets,
                  const std::string& missing) {
  // A stream that answered goes on until cancelled; one that did not has its status already.
  if (read) context.TryCancel();
  grpc::Status status = reader.Finish();
  if (read && targets) return {"ok", ""};
  if (read) return {"empty", missing};
  if (status.ok()) return {"empty", missing};
  return FromStatus(status);
}

std::string HttpMessage(const HttpAnswer& answer) {
  const std::string marker = "<p id=\"message\">";
  const size_t at = answer.body.find(marker);
  if (at == std::string::npos) return answer.location;
  const size_t start = at + marker.size();
  return answer.body.substr(start, answer.body.find("</p>", start) - start);
}

// A console answer other than the page asked for.
Got FromHttp(const HttpAnswer& answer) {
  if (answer.status == 303 && absl::StartsWith(answer.location, "/signin")) {
    return {"unauth", "redirected to sign-in"};
  }
  switch (answer.status) {
    case 401:
      return {"unauth", HttpMessage(answer)};
    case 403:
      return {"denied", HttpMessage(answer)};
    case 404:
      return {"hidden", HttpMessage(answer)};
    default:
      return {absl::StrCat("http ", answer.status), HttpMessage(answer)};
  }
}

// The session cookie of `role` (none: no session), or the refusal at sign-in.
std::optional<Got> ConsoleSession(World& world, const Role& role, std::string* cookie,
                                  std::string* csrf) {
  if (role.column == "none") return std::nullopt;
  const World::Session& session = world.SignedIn(role);
  if (session.refused.has_value()) return session.refused;
  *cookie = session.cookie;
  *csrf = session.csrf;
  return std::nullopt;
}

pb::ToolCall ReadNotes(World& world, const Target& target) {
  pb::ToolCall call;
  call.set_id(world.Fresh("call"));
  call.set_tool("files.read");
  call.set_trace_id(target.turn_trace);
  (*call.mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
  call.mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
  return call;
}

pb::CapabilityRequirement NotesRequirement() {
  pb::CapabilityRequirement requirement;
  requirement.mutable_resource()->set_namespace_("files");
  requirement.mutable_resource()->add_path("Workspace");
  requirement.mutable_resource()->add_path("notes.txt");
  requirement.set_action("read");
  return requirement;
}

// The lease a row names: the target's (or a spare one, `spare`); a placeholder where no
// service credential can open one (sharedosd: only the admission answers).
std::string LeaseOf(World& world, Target& target, bool spare, Got* failed) {
  if (target.lease_id.empty()) return "lease-without-a-service-credential";
  if (!spare) return target.lease_id;
  absl::StatusOr<std::string> lease = world.Spare("lease", target);
  if (!lease.ok()) {
    *failed = Fixture(lease.status());
    return "";
  }
  return *lease;
}

// A protocol "1" event of `type` about the target, as a writer would append it.
pb::AuditEvent Event(World& world, const Target& target, pb::AuditEventType type) {
  pb::AuditEvent event;
  event.set_version("1");
  event.set_id(world.Fresh("matrix-event"));
  event.set_type(type);
  event.set_outcome(type == pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
                        ? pb::AUDIT_OUTCOME_ALLOWED
                        : pb::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(demo::kNowSeconds);
  event.set_trace_id(target.turn_trace);
  event.set_namespace_id(target.ns);
  *event.mutable_actor() = Agent(demo::kAgent);
  *event.mutable_authority() = target.Owner();
  *event.mutable_owner() = target.Owner();
  event.set_purpose("keep notes");
  return event;
}

Driver Append(pb::AuditEventType type) {
  return [type](World& w, const Role& role, const MatrixRow& row) {
    av1::AppendRequest append;
    *append.add_events() = Event(w, w.target(row.target), type);
    av1::AppendResponse appended;
    grpc::Status status = w.audit().Append(As(role).get(), append, &appended);
    return Answered(status, appended.appended() == 1, appended.ShortDebugString());
  };
}

Got AppendGrantIssued(World& w, const Role& role, const MatrixRow& row) {
  const Target& target = w.target(row.target);
  av1::AppendRequest append;
  av1::ControlPlaneEvent* event = append.add_entries()->mutable_control_plane();
  event->set_id(w.Fresh("matrix-control"));
  event->set_type(av1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  event->set_outcome(pb::AUDIT_OUTCOME_SUCCEEDED);
  event->mutable_at()->set_seconds(demo::kNowSeconds);
  event->set_trace_id(target.turn_trace);
  event->set_namespace_id(target.ns);
  *event->mutable_actor() = target.Owner();
  *event->mutable_authority() = target.Owner();
  *event->mutable_owner() = target.Owner();
  event->set_purpose("keep notes");
  event->set_grant_id(target.grant_id);
  av1::AppendResponse appended;
  grpc::Status status = w.audit().Append(As(role).get(), append, &appended);
  return Answered(status, appended.appended() == 1, appended.ShortDebugString());
}

// A host reads an escalation's status only: its reason, the authority asked for and who decided
// are not its to see (grantstore_svc/server/grantstore_service.h, StatusOnly).
std::optional<Got> HostReadsMoreThanStatus(const Role& role, const gs::EscalationRecord& record) {
  if (!absl::StartsWith(role.column, "host-")) return std::nullopt;
  if (!record.has_escalation() && !record.has_authority() && !record.has_decided_by()) {
    return std::nullopt;
  }
  return Got{"more-than-status", record.ShortDebugString()};
}

// The record of the target's escalated turn.
av1::AuditFilter TargetRecords(const Target& target) {
  av1::AuditFilter filter;
  filter.set_namespace_id(target.ns);
  filter.set_execution_id(target.escalation_execution);
  return filter;
}

Got Tail(World& w, const Role& role, const std::optional<av1::AuditFilter>& filter) {
  av1::TailRequest tail;
  if (filter.has_value()) *tail.mutable_filter() = *filter;
  tail.set_from_sequence(1);
  auto context = As(role);
  auto reader = w.audit().Tail(context.get(), tail);
  av1::TailResponse first;
  const bool read = reader->Read(&first);
  return FirstOfStream(*context, *reader, read, read, "no record streamed");
}

// A grant of the target's namespace and owner, not yet issued.
pb::CapabilityGrant NewGrant(World& w, const Target& target) {
  pb::CapabilityGrant grant;
  grant.set_id(w.Fresh("matrix-grant"));
  grant.set_namespace_id(target.ns);
  *grant.mutable_subject() = Agent("agent-helper");
  *grant.mutable_issuer() = target.Owner();
  *grant.add_capabilities() =
      w.Capability(target, "files", {"Workspace"}, "read", pb::SCOPE_DESCENDANTS);
  grant.mutable_constraints();
  grant.mutable_issued_at()->set_seconds(1700000001);
  return grant;
}

Got Receive(World& w, const Role& role, const MatrixRow& row, bool name_owner) {
  Target& target = w.target(row.target);
  if (target.inbox == 0) {
    if (absl::Status sent = w.SendToHelper(target); !sent.ok()) return Fixture(sent);
  }
  ev1::ReceiveRequest receive;
  receive.set_namespace_id(target.ns);
  *receive.mutable_receiver() = Agent("agent-helper");
  receive.set_max(64);
  if (name_owner) *receive.mutable_owner() = target.Owner();
  ev1::ReceiveResponse received;
  grpc::Status status = w.routes().Receive(As(role).get(), receive, &received);
  // The target's: sent in its turn, and said to be its owner's.
  int own = 0;
  for (int i = 0; i < received.messages_size(); ++i) {
    Target* of = w.TargetOfTrace(received.messages(i).trace_id());
    if (of == nullptr) continue;
    --of->inbox;
    if (of == &target && i < received.owners_size() &&
        received.owners(i).human_user_id() == target.owner_id) {
      ++own;
    }
  }
  return Answered(status, own > 0, absl::StrCat(received.messages_size(), " other messages"));
}

// Every driver, by the row's method (and variant).
const std::map<std::string, Driver>& Drivers() {
  static const auto* drivers = new std::map<std::string, Driver>{
      // --- Envelope -----------------------------------------------------------------------
      {"Envelope/OpenTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         const std::string execution = w.Fresh("open");
         ev1::OpenTurnResponse opened;
         grpc::Status status = w.envelope().OpenTurn(
             As(role).get(), w.TurnRequest(target, execution, "trace-" + execution), &opened);
         const bool admitted = status.ok() && !opened.has_result() && !opened.turn_id().empty();
         if (admitted) {
           ev1::CancelTurnRequest cancel;
           cancel.set_turn_id(opened.turn_id());
           ev1::CancelTurnResponse cancelled;
           w.envelope().CancelTurn(World::As(target.host_token).get(), cancel, &cancelled);
         }
         return Answered(status, admitted, opened.result().ShortDebugString());
       }},
      {"Envelope/InvokeTool",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::InvokeToolRequest invoke;
         invoke.set_turn_id(target.turn_id);
         *invoke.mutable_call() = ReadNotes(w, target);
         ev1::InvokeToolResponse invoked;
         grpc::Status status = w.envelope().InvokeTool(As(role).get(), invoke, &invoked);
         const bool read = invoked.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED &&
                           absl::StrContains(invoked.result().output().DebugString(),
                                             "notes of " + target.owner_id);
         return Answered(status, read, invoked.result().ShortDebugString());
       }},
      {"Envelope/FinishTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         absl::StatusOr<std::string> turn = w.Spare("turn", target);
         if (!turn.ok()) return Fixture(turn.status());
         ev1::FinishTurnRequest finish;
         finish.set_turn_id(*turn);
         finish.mutable_complete()->mutable_output()->set_string_value("done");
         ev1::FinishTurnResponse finished;
         grpc::Status status = w.envelope().FinishTurn(As(role).get(), finish, &finished);
         if (status.ok()) w.Spend("turn", target);
         return Answered(status,
                         finished.result().status() == pb::EXECUTION_STATUS_SUCCEEDED,
                         finished.result().ShortDebugString());
       }},
      {"Envelope/CancelTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         absl::StatusOr<std::string> turn = w.Spare("turn", target);
         if (!turn.ok()) return Fixture(turn.status());
         ev1::CancelTurnRequest cancel;
         cancel.set_turn_id(*turn);
         ev1::CancelTurnResponse cancelled;
         grpc::Status status = w.envelope().CancelTurn(As(role).get(), cancel, &cancelled);
         if (status.ok()) w.Spend("turn", target);
         return Answered(status,
                         cancelled.result().status() == pb::EXECUTION_STATUS_CANCELLED,
                         cancelled.result().ShortDebugString());
       }},
      {"Envelope/GetTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::GetTurnRequest get;
         get.set_turn_id(target.turn_id);
         ev1::GetTurnResponse got;
         grpc::Status status = w.envelope().GetTurn(As(role).get(), get, &got);
         return Answered(status, got.state() == ev1::TURN_STATE_RUNNING, got.ShortDebugString());
       }},
      {"Envelope/WatchTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::WatchTurnRequest watch;
         watch.set_turn_id(target.turn_id);
         auto context = As(role);
         auto reader = w.envelope().WatchTurn(context.get(), watch);
         ev1::WatchTurnResponse first;
         const bool read = reader->Read(&first);
         return FirstOfStream(*context, *reader, read,
                              first.event().execution_id() == target.turn_execution,
                              "no event of the turn");
       }},
      {"Envelope/SendMessage",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::SendMessageRequest send;
         send.set_turn_id(target.turn_id);
         *send.mutable_message() = w.Message(target, "agent-helper");
         ev1::SendMessageResponse sent;
         grpc::Status status = w.envelope().SendMessage(As(role).get(), send, &sent);
         const bool accepted =
             sent.receipt().status() == ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED;
         if (status.ok() && accepted) ++target.inbox;
         return Answered(status, accepted, sent.receipt().ShortDebugString());
       }},
      {"Envelope/InvokeResource",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::InvokeResourceRequest invoke;
         invoke.set_turn_id(target.turn_id);
         invoke.set_operation_id(w.Fresh("operation"));
         invoke.mutable_resource()->set_namespace_("files");
         invoke.mutable_resource()->add_path("Workspace");
         invoke.mutable_resource()->add_path("notes.txt");
         invoke.set_action("read");
         invoke.mutable_input()->mutable_struct_value();
         ev1::InvokeResourceResponse invoked;
         grpc::Status status = w.envelope().InvokeResource(As(role).get(), invoke, &invoked);
         const bool read =
             invoked.result().status() == ev1::RESOURCE_RESULT_STATUS_SUCCEEDED &&
             absl::StrContains(invoked.result().output().DebugString(),
                               "notes of " + target.owner_id);
         return Answered(status, read, invoked.result().ShortDebugString());
       }},
      {"Envelope/ListToolNamespaces",
       [](World& w, const Role& role, const MatrixRow& row) {
         ev1::ListToolNamespacesRequest list;
         list.set_turn_id(w.target(row.target).turn_id);
         ev1::ListToolNamespacesResponse listed;
         grpc::Status status = w.envelope().ListToolNamespaces(As(role).get(), list, &listed);
         return Answered(status, listed.namespaces_size() > 0, listed.ShortDebugString());
       }},
      {"Envelope/UpdateToolNamespaces",
       [](World& w, const Role& role, const MatrixRow& row) {
         ev1::UpdateToolNamespacesRequest update;
         update.set_turn_id(w.target(row.target).turn_id);
         update.add_enable("files");
         ev1::UpdateToolNamespacesResponse updated;
         grpc::Status status =
             w.envelope().UpdateToolNamespaces(As(role).get(), update, &updated);
         bool files = false;
         for (const std::string& name : updated.enabled_namespaces()) files |= name == "files";
         return Answered(status, files, updated.ShortDebugString());
       }},
      // --- MessageRoutes ------------------------------------------------------------------
      {"MessageRoutes/Receive[owner-named]",
       [](World& w, const Role& role, const MatrixRow& row) {
         return Receive(w, role, row, /*name_owner=*/true);
       }},
      {"MessageRoutes/Receive[owner-omitted]",
       [](World& w, const Role& role, const MatrixRow& row) {
         return Receive(w, role, row, /*name_owner=*/false);
       }},
      {"MessageRoutes/RevokeRoute",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::RevokeRouteRequest revoke;
         revoke.set_namespace_id(target.ns);
         *revoke.mutable_sender() = Agent(demo::kAgent);
         *revoke.mutable_receiver() = Agent("agent-notes");
         *revoke.mutable_owner() = target.Owner();
         ev1::RevokeRouteResponse revoked;
         grpc::Status status = w.routes().RevokeRoute(As(role).get(), revoke, &revoked);
         return Answered(status, revoked.was_leased(), "the route had no live lease");
       }},
      // --- MessageTransport ---------------------------------------------------------------
      {"MessageTransport/Send",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::TransportSendRequest send;
         if (w.replicas()) {
           send.set_namespace_id(target.ns);
           *send.mutable_owner() = target.Owner();
           *send.mutable_message() = w.Message(target, "agent-peer");
         }
         ev1::TransportSendResponse sent;
         grpc::Status status = w.peer_transport().Send(As(role).get(), send, &sent);
         return Answered(status,
                         sent.receipt().status() == ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED,
                         sent.receipt().ShortDebugString());
       }},
      {"MessageTransport/AwaitReply",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         ev1::AwaitReplyRequest await;
         if (w.replicas()) {
           absl::StatusOr<std::string> request = w.Spare("reply", target);
           if (!request.ok()) return Fixture(request.status());
           await.set_namespace_id(target.ns);
           *await.mutable_request() = w.SpareRequest(target);
         }
         ev1::AwaitReplyResponse replied;
         grpc::Status status = w.peer_transport().AwaitReply(As(role).get(), await, &replied);
         if (status.ok()) w.Spend("reply", target);
         return Answered(status, replied.reply().reply_to() == await.request().id(),
                         replied.ShortDebugString());
       }},
      // --- GrantStore, control plane ------------------------------------------------------
      {"GrantStore/IssueGrant",
       [](World& w, const Role& role, const MatrixRow& row) {
         gs::IssueGrantRequest issue;
         *issue.mutable_grant() = NewGrant(w, w.target(row.target));
         gs::IssueGrantResponse issued;
         grpc::Status status = w.grants().IssueGrant(As(role).get(), issue, &issued);
         return Answered(status, issued.grant().id() == issue.grant().id(),
                         issued.ShortDebugString());
       }},
      {"GrantStore/DeriveGrant",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::DeriveGrantRequest derive;
         derive.set_namespace_id(target.ns);
         derive.set_parent_grant_id(target.grant_id);
         gs::DerivationRequest* child = derive.mutable_child();
         child->set_id(w.Fresh("matrix-child"));
         *child->mutable_subject() = Agent("agent-helper");
         *child->add_capabilities() =
             w.Capability(target, "files", {"Workspace"}, "read", pb::SCOPE_DESCENDANTS);
         child->mutable_constraints();
         child->mutable_issued_at()->set_seconds(1700000001);
         gs::DeriveGrantResponse derived;
         grpc::Status status = w.grants().DeriveGrant(As(role).get(), derive, &derived);
         return Answered(status, derived.has_granted(), derived.ShortDebugString());
       }},
      {"GrantStore/RevokeGrant",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         absl::StatusOr<std::string> grant = w.Spare("grant", target);
         if (!grant.ok()) return Fixture(grant.status());
         gs::RevokeGrantRequest revoke;
         revoke.set_namespace_id(target.ns);
         revoke.set_grant_id(*grant);
         gs::RevokeGrantResponse revoked;
         grpc::Status status = w.grants().RevokeGrant(As(role).get(), revoke, &revoked);
         if (status.ok()) w.Spend("grant", target);
         return Answered(status, revoked.has_revoked_at(), revoked.ShortDebugString());
       }},
      {"GrantStore/GetGrant",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::GetGrantRequest get;
         get.set_namespace_id(target.ns);
         get.set_grant_id(target.grant_id);
         gs::GetGrantResponse got;
         grpc::Status status = w.grants().GetGrant(As(role).get(), get, &got);
         return Answered(status, got.grant().id() == target.grant_id, got.ShortDebugString());
       }},
      {"GrantStore/ListGrants",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::ListGrantsRequest list;
         list.mutable_filter()->set_namespace_id(target.ns);
         list.set_page_size(1000);
         bool found = false;
         grpc::Status status;
         for (int page = 0; page < 20 && !found; ++page) {
           gs::ListGrantsResponse listed;
           status = w.grants().ListGrants(As(role).get(), list, &listed);
           if (!status.ok()) break;
           for (const pb::CapabilityGrant& grant : listed.grants()) {
             found |= grant.id() == target.grant_id;
           }
           if (listed.next_page_token().empty()) break;
           list.set_page_token(listed.next_page_token());
         }
         return Answered(status, found, "the target's grant is not listed");
       }},
      {"GrantStore/PutHostPolicy",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::PutHostPolicyRequest put;
         put.mutable_policy()->set_namespace_id(target.ns);
         put.mutable_policy()->set_version(w.Fresh("policy"));
         gs::HostPolicyRule* rule = put.mutable_policy()->add_rules();
         rule->set_id("nothing-the-matrix-uses");
         rule->set_resource_namespace("matrix-unused");
         rule->set_scope(pb::SCOPE_DESCENDANTS);
         gs::PutHostPolicyResponse put_response;
         grpc::Status status = w.grants().PutHostPolicy(As(role).get(), put, &put_response);
         return Answered(status, put_response.policy().version() == put.policy().version(),
                         put_response.ShortDebugString());
       }},
      {"GrantStore/GetHostPolicy",
       [](World& w, const Role& role, const MatrixRow& row) {
         gs::GetHostPolicyRequest get;
         get.set_namespace_id(w.target(row.target).ns);
         gs::GetHostPolicyResponse got;
         grpc::Status status = w.grants().GetHostPolicy(As(role).get(), get, &got);
         return Answered(status, got.has_policy(), got.ShortDebugString());
       }},
      // --- GrantStore, escalations --------------------------------------------------------
      {"GrantStore/ListEscalations",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::ListEscalationsRequest list;
         list.set_namespace_id(target.ns);
         list.set_page_size(1000);
         bool found = false;
         grpc::Status status;
         for (int page = 0; page < 20 && !found; ++page) {
           gs::ListEscalationsResponse listed;
           status = w.grants().ListEscalations(As(role).get(), list, &listed);
           if (!status.ok()) break;
           for (const gs::EscalationRecord& record : listed.escalations()) {
             if (record.escalation_id() != target.escalation_id) continue;
             if (auto leak = HostReadsMoreThanStatus(role, record)) return *leak;
             found = true;
           }
           if (listed.next_page_token().empty()) break;
           list.set_page_token(listed.next_page_token());
         }
         return Answered(status, found, "the target's escalation is not listed");
       }},
      {"GrantStore/GetEscalation",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::GetEscalationRequest get;
         get.set_escalation_id(target.escalation_id);
         gs::GetEscalationResponse got;
         grpc::Status status = w.grants().GetEscalation(As(role).get(), get, &got);
         if (status.ok()) {
           if (auto leak = HostReadsMoreThanStatus(role, got.escalation())) return *leak;
         }
         return Answered(status, got.escalation().escalation_id() == target.escalation_id,
                         got.ShortDebugString());
       }},
      {"GrantStore/ResolveEscalation",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         absl::StatusOr<std::string> escalation = w.Spare("escalation", target);
         if (!escalation.ok()) return Fixture(escalation.status());
         gs::ResolveEscalationRequest resolve;
         resolve.set_escalation_id(*escalation);
         resolve.set_decision(gs::ESCALATION_DECISION_APPROVE);
         resolve.set_on_behalf_of_reviewer(IsAdmin(role));
         gs::ResolveEscalationResponse resolved;
         grpc::Status status = w.grants().ResolveEscalation(As(role).get(), resolve, &resolved);
         if (status.ok()) w.Spend("escalation", target);
         return Answered(status,
                         resolved.escalation().status() == gs::ESCALATION_RECORD_STATUS_APPROVED,
                         resolved.escalation().ShortDebugString());
       }},
      // --- GrantStore, credentials --------------------------------------------------------
      {"GrantStore/IssueCredential",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::IssueCredentialRequest issue;
         issue.set_credential_id(w.Fresh("issued-host"));
         issue.mutable_principal()->set_service_id(issue.credential_id());
         issue.set_role(gs::CREDENTIAL_ROLE_HOST);
         issue.mutable_scope()->add_namespaces(target.ns);
         issue.mutable_scope()->add_owners(target.OwnerKey());
         gs::IssueCredentialResponse issued;
         grpc::Status status = w.grants().IssueCredential(As(role).get(), issue, &issued);
         return Answered(status, issued.credential().credential_id() == issue.credential_id(),
                         issued.credential().ShortDebugString());
       }},
      {"GrantStore/ListCredentials",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::ListCredentialsRequest list;
         list.set_page_size(1000);
         bool found = false;
         grpc::Status status;
         for (int page = 0; page < 20 && !found; ++page) {
           gs::ListCredentialsResponse listed;
           status = w.grants().ListCredentials(As(role).get(), list, &listed);
           if (!status.ok()) break;
           for (const gs::Credential& credential : listed.credentials()) {
             found |= credential.credential_id() == target.host_id;
           }
           if (listed.next_page_token().empty()) break;
           list.set_page_token(listed.next_page_token());
         }
         return Answered(status, found, "the target's credential is not listed");
       }},
      {"GrantStore/RevokeCredential",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         absl::StatusOr<std::string> credential = w.Spare("credential", target);
         if (!credential.ok()) return Fixture(credential.status());
         gs::RevokeCredentialRequest revoke;
         revoke.set_credential_id(*credential);
         gs::RevokeCredentialResponse revoked;
         grpc::Status status = w.grants().RevokeCredential(As(role).get(), revoke, &revoked);
         if (status.ok()) w.Spend("credential", target);
         return Answered(status, revoked.credential().has_revoked_at(),
                         revoked.credential().ShortDebugString());
       }},
      {"GrantStore/AcceptRestore",
       [](World& w, const Role& role, const MatrixRow&) {
         gs::AcceptRestoreRequest accept;
         accept.set_reason("tenancy matrix");
         gs::AcceptRestoreResponse answered;
         grpc::Status status = w.grants().AcceptRestore(As(role).get(), accept, &answered);
         // The matrix's store is not behind its log: nothing to accept, nothing written.
         return Answered(status, !answered.accepted() && !answered.notice().empty(),
                         answered.ShortDebugString());
       }},
      {"GrantStore/RotateCredential",
       [](World& w, const Role& role, const MatrixRow& row) {
         gs::RotateCredentialRequest rotate;
         std::string token = role.token;
         if (row.target == "own") {
           // The caller's own credential: a fresh one like it (rotated away by the call), or the
           // static credential a service principal holds.
           if (role.issued.has_value() || role.column == "operator") {
             gs::IssueCredentialRequest like;
             if (role.issued.has_value()) {
               like = *role.issued;
             } else {
               like.mutable_principal()->set_human_user_id("op-own");
               like.set_role(gs::CREDENTIAL_ROLE_ADMIN);
               like.mutable_scope()->add_namespaces("*");
             }
             like.set_credential_id(w.Fresh("own"));
             absl::StatusOr<std::pair<std::string, std::string>> own = w.Issue(like);
             if (!own.ok()) return Fixture(own.status());
             rotate.set_credential_id(own->first);
             token = own->second;
           } else {
             rotate.set_credential_id(role.static_id);
           }
         } else {
           Target& target = w.target(row.target);
           absl::StatusOr<std::string> credential = w.Spare("credential", target);
           if (!credential.ok()) return Fixture(credential.status());
           rotate.set_credential_id(*credential);
         }
         gs::RotateCredentialResponse rotated;
         grpc::Status status =
             w.grants().RotateCredential(World::As(token).get(), rotate, &rotated);
         if (status.ok() && row.target != "own") w.Spend("credential", w.target(row.target));
         return Answered(status, !rotated.secret().empty(), rotated.credential().ShortDebugString());
       }},
      // --- GrantStore, data plane ---------------------------------------------------------
      {"GrantStore/LoadAuthority",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::LoadAuthorityRequest load;
         load.set_namespace_id(target.ns);
         *load.mutable_actor() = Agent(demo::kAgent);
         *load.mutable_authority() = target.Owner();
         gs::LoadAuthorityResponse loaded;
         grpc::Status status = w.grants().LoadAuthority(As(role).get(), load, &loaded);
         bool found = false;
         for (const pb::CapabilityGrant& grant : loaded.grants()) {
           found |= grant.id() == target.grant_id;
         }
         return Answered(status, found, "the target's grant is not loaded");
       }},
      {"GrantStore/ResolveGrant",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::ResolveGrantRequest resolve;
         resolve.set_namespace_id(target.ns);
         resolve.set_grant_id(target.grant_id);
         gs::ResolveGrantResponse resolved;
         grpc::Status status = w.grants().ResolveGrant(As(role).get(), resolve, &resolved);
         return Answered(status, resolved.grant().id() == target.grant_id,
                         resolved.ShortDebugString());
       }},
      {"GrantStore/TryConsume",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::TryConsumeRequest consume;
         consume.set_namespace_id(target.ns);
         consume.set_grant_id(target.grant_id);
         consume.set_max_uses(1000000);
         gs::TryConsumeResponse consumed;
         grpc::Status status = w.grants().TryConsume(As(role).get(), consume, &consumed);
         return Answered(status, consumed.consumed(), consumed.ShortDebugString());
       }},
      {"GrantStore/GetUsage",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::GetUsageRequest get;
         get.set_namespace_id(target.ns);
         get.set_grant_id(target.grant_id);
         gs::GetUsageResponse got;
         grpc::Status status = w.grants().GetUsage(As(role).get(), get, &got);
         return Answered(status, true);
       }},
      {"GrantStore/CheckRevocations",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::CheckRevocationsRequest check;
         check.set_namespace_id(target.ns);
         check.add_grant_ids(target.grant_id);
         gs::CheckRevocationsResponse checked;
         grpc::Status status = w.grants().CheckRevocations(As(role).get(), check, &checked);
         return Answered(status, checked.revoked_grant_ids_size() == 0 && checked.revision() > 0,
                         checked.ShortDebugString());
       }},
      {"GrantStore/RecordEscalation",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::RecordEscalationRequest record;
         *record.mutable_escalation() = target.escalation.escalation();
         record.set_namespace_id(target.ns);
         record.set_execution_id(w.Fresh("recorded"));
         *record.mutable_authority() = target.Owner();
         gs::RecordEscalationResponse recorded;
         grpc::Status status = w.grants().RecordEscalation(As(role).get(), record, &recorded);
         return Answered(status, !recorded.escalation_id().empty(), recorded.ShortDebugString());
       }},
      {"GrantStore/AuthenticateCredential",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         gs::AuthenticateCredentialRequest authenticate;
         authenticate.set_token_sha256(common::server::TokenDigestHex(target.host_token));
         gs::AuthenticateCredentialResponse authenticated;
         grpc::Status status =
             w.grants().AuthenticateCredential(As(role).get(), authenticate, &authenticated);
         return Answered(status, authenticated.credential().credential_id() == target.host_id,
                         authenticated.ShortDebugString());
       }},
      // --- AuditLog -----------------------------------------------------------------------
      {"AuditLog/Append[authority.resolved]", Append(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED)},
      {"AuditLog/Append[authorization.checked]",
       Append(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED)},
      {"AuditLog/Append[tool.invoked]", Append(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED)},
      {"AuditLog/Append[grant.issued]", AppendGrantIssued},
      {"AuditLog/Query",
       [](World& w, const Role& role, const MatrixRow& row) {
         av1::QueryRequest query;
         if (row.target != "-") *query.mutable_filter() = TargetRecords(w.target(row.target));
         query.set_limit(100);
         av1::QueryResponse answered;
         grpc::Status status = w.audit().Query(As(role).get(), query, &answered);
         return Answered(status, answered.records_size() > 0, "no record");
       }},
      {"AuditLog/Tail",
       [](World& w, const Role& role, const MatrixRow& row) {
         if (row.target == "-") return Tail(w, role, std::nullopt);
         return Tail(w, role, TargetRecords(w.target(row.target)));
       }},
      {"AuditLog/Verify",
       [](World& w, const Role& role, const MatrixRow&) {
         av1::VerifyResponse verified;
         grpc::Status status = w.audit().Verify(As(role).get(), av1::VerifyRequest(), &verified);
         return Answered(status, verified.ok() && verified.checked() > 0,
                         verified.ShortDebugString());
       }},
      {"AuditLog/Checkpoint",
       [](World& w, const Role& role, const MatrixRow&) {
         av1::CheckpointResponse checkpoint;
         grpc::Status status =
             w.audit().Checkpoint(As(role).get(), av1::CheckpointRequest(), &checkpoint);
         return Answered(status, checkpoint.checkpoint().sequence() > 0,
                         checkpoint.ShortDebugString());
       }},
      // --- Authorizer ---------------------------------------------------------------------
      {"Authorizer/OpenTurnAuthority",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         az::OpenTurnAuthorityRequest open;
         *open.mutable_context() = w.Context(target, target.turn_trace);
         open.set_turn_id(w.Fresh("matrix-lease"));
         az::OpenTurnAuthorityResponse opened;
         grpc::Status status = w.authorizer().OpenTurnAuthority(As(role).get(), open, &opened);
         return Answered(status,
                         opened.status() == az::LEASE_STATUS_RESOLVED && opened.grant_count() > 0,
                         opened.ShortDebugString());
       }},
      {"Authorizer/CloseTurnAuthority",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::CloseTurnAuthorityRequest close;
         close.set_lease_id(LeaseOf(w, target, /*spare=*/true, &failed));
         if (close.lease_id().empty()) return failed;
         az::CloseTurnAuthorityResponse closed;
         grpc::Status status = w.authorizer().CloseTurnAuthority(As(role).get(), close, &closed);
         if (status.ok()) w.Spend("lease", target);
         return Answered(status, true);
       }},
      {"Authorizer/Authorize",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::AuthorizeRequest authorize;
         authorize.set_lease_id(LeaseOf(w, target, /*spare=*/false, &failed));
         *authorize.mutable_requirement() = NotesRequirement();
         az::AuthorizeResponse decided;
         grpc::Status status = w.authorizer().Authorize(As(role).get(), authorize, &decided);
         return Answered(status,
                         decided.decision().allowed() &&
                             decided.decision().matched_grant_id() == target.grant_id,
                         decided.ShortDebugString());
       }},
      {"Authorizer/Discover",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::DiscoverRequest discover;
         discover.set_lease_id(LeaseOf(w, target, /*spare=*/false, &failed));
         az::ToolRequirement* tool = discover.add_tools();
         tool->set_name("files.read");
         tool->mutable_requirement()->mutable_resource()->set_namespace_("files");
         tool->mutable_requirement()->set_action("read");
         az::DiscoverResponse discovered;
         grpc::Status status = w.authorizer().Discover(As(role).get(), discover, &discovered);
         return Answered(status,
                         discovered.entries_size() == 1 && discovered.entries(0).discoverable(),
                         discovered.ShortDebugString());
       }},
      {"Authorizer/AdmitTurn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::AdmitTurnRequest admit;
         admit.set_lease_id(LeaseOf(w, target, /*spare=*/false, &failed));
         *admit.mutable_agent() = Agent(demo::kAgent);
         az::AdmitTurnResponse admitted;
         grpc::Status status = w.authorizer().AdmitTurn(As(role).get(), admit, &admitted);
         return Answered(status, admitted.decision().allowed(), admitted.ShortDebugString());
       }},
      {"Authorizer/Reach",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::ReachRequest reach;
         reach.set_lease_id(LeaseOf(w, target, /*spare=*/false, &failed));
         az::ReachResponse reached;
         grpc::Status status = w.authorizer().Reach(As(role).get(), reach, &reached);
         return Answered(status,
                         reached.reach().status() == pb::REACH_STATUS_COMPUTED &&
                             reached.reach().reach_size() > 0,
                         reached.ShortDebugString());
       }},
      {"Authorizer/RecordEscalation",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         Got failed;
         az::RecordEscalationRequest record;
         record.set_lease_id(LeaseOf(w, target, /*spare=*/false, &failed));
         record.set_execution_id(w.Fresh("authorizer-escalation"));
         record.set_reason("the matrix asks");
         az::RecordEscalationResponse recorded;
         grpc::Status status =
             w.authorizer().RecordEscalation(As(role).get(), record, &recorded);
         return Answered(status, !recorded.escalation_id().empty(), recorded.ShortDebugString());
       }},
      // --- Status -------------------------------------------------------------------------
      {"Status/GetStatus",
       [](World& w, const Role& role, const MatrixRow&) {
         std::vector<Got> each;
         for (auto& process : w.statuses()) {
           st::GetStatusResponse got;
           grpc::Status status = process->GetStatus(As(role).get(), st::GetStatusRequest(), &got);
           each.push_back(Answered(status, got.services_size() > 0, got.ShortDebugString()));
         }
         return Combine(each);
       }},
      // --- the console --------------------------------------------------------------------
      {"console:sign-in",
       [](World& w, const Role& role, const MatrixRow&) {
         // None: a secret that is no live credential.
         HttpAnswer answer = w.SignIn(role.token.empty() ? "sos_not-a-credential" : role.token);
         if (answer.status == 303 && answer.location == "/queue") return Got{"ok", ""};
         return FromHttp(answer);
       }},
      {"console:/queue",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         std::string cookie, csrf;
         if (auto refused = ConsoleSession(w, role, &cookie, &csrf)) return *refused;
         HttpAnswer page = w.ConsoleGet("/queue?namespace=" + target.ns, cookie);
         if (page.status != 200) return FromHttp(page);
         const bool shown =
             absl::StrContains(page.body, "id=\"h-" + target.escalation_id + "\"");
         return shown ? Got{"ok", ""} : Got{"empty", "the target's escalation is not shown"};
       }},
      {"console:/decide",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         std::string cookie, csrf;
         if (auto refused = ConsoleSession(w, role, &cookie, &csrf)) return *refused;
         absl::StatusOr<std::string> escalation = w.Spare("escalation", target);
         if (!escalation.ok()) return Fixture(escalation.status());
         std::string form =
             absl::StrCat("csrf=", csrf, "&id=", *escalation, "&decision=approve");
         if (IsAdmin(role)) absl::StrAppend(&form, "&on_behalf=true");
         HttpAnswer page = w.ConsolePost("/decide", form, cookie);
         if (page.status != 200) return FromHttp(page);
         w.Spend("escalation", target);
         return absl::StrContains(page.body, "id=\"decided\"")
                    ? Got{"ok", ""}
                    : Got{"empty", "no decision on the page"};
       }},
      {"console:/explain[escalation]",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         std::string cookie, csrf;
         if (auto refused = ConsoleSession(w, role, &cookie, &csrf)) return *refused;
         HttpAnswer page = w.ConsoleGet("/explain?id=" + target.escalation_id, cookie);
         if (page.status != 200) return FromHttp(page);
         const bool explained = absl::StrContains(page.body, "id=\"explained\"") &&
                                absl::StrContains(page.body, target.escalation_execution);
         return explained ? Got{"ok", ""} : Got{"empty", "the escalation is not explained"};
       }},
      {"console:/record",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         std::string cookie, csrf;
         if (auto refused = ConsoleSession(w, role, &cookie, &csrf)) return *refused;
         HttpAnswer page = w.ConsoleGet(
             absl::StrCat("/record?namespace=", target.ns,
                          "&execution=", target.escalation_execution),
             cookie);
         if (page.status != 200) return FromHttp(page);
         std::smatch caption;
         const bool some = std::regex_search(page.body, caption, std::regex("<caption>(\\d+) ")) &&
                           caption[1] != "0";
         return some ? Got{"ok", ""} : Got{"empty", "no record of the target's turn shown"};
       }},
      {"console:/turn",
       [](World& w, const Role& role, const MatrixRow& row) {
         Target& target = w.target(row.target);
         std::string cookie, csrf;
         if (auto refused = ConsoleSession(w, role, &cookie, &csrf)) return *refused;
         HttpAnswer page = w.ConsoleGet(
             absl::StrCat("/turn?execution=", target.escalation_execution,
                          "&namespace=", target.ns),
             cookie);
         if (page.status == 303 && absl::StartsWith(page.location, "/record?") &&
             absl::StrContains(page.location, "trace=" + target.escalation_trace)) {
           return Got{"ok", ""};
         }
         return FromHttp(page);
       }},
  };
  return *drivers;
}

// ---------------------------------------------------------------- the table itself

TEST(TenancyMatrixTableTest, EveryServedMethodAndConsolePageHasItsRowsAndEveryRowItsDriver) {
  absl::StatusOr<Matrix> matrix = ParseMatrix(MatrixText());
  ASSERT_TRUE(matrix.ok()) << matrix.status();
  std::map<std::string, std::set<std::string>> targets_of;  // policy name → targets
  for (const MatrixRow& row : matrix->rows) {
    const std::string name = PolicyName(row.method);
    EXPECT_FALSE(name.empty()) << "line " << row.line << ": " << row.method
                               << " is no service SharedOS serves";
    // The access table lists every RPC and every console page (ADR 0014, T2).
    EXPECT_NE(common::server::PolicyFor(name), nullptr)
        << "line " << row.line << ": " << name
        << " is served but has no row in the access table (common/server/access_policy.cc)";
    EXPECT_EQ(Drivers().count(row.Spelled()), 1u)
        << "line " << row.line << ": no driver for " << row.Spelled();
    targets_of[name].insert(row.target);
  }
  // Every method of every served service (walking the generated descriptors), and every row of
  // the access table (console pages included).
  for (const google::protobuf::ServiceDescriptor* service : ServedServices()) {
    ASSERT_NE(service, nullptr);
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string method =
          absl::StrCat(service->full_name(), "/", service->method(i)->name());
      EXPECT_TRUE(targets_of.count(method)) << method << " has no row in tenancy_matrix.txt";
    }
  }
  for (const common::server::MethodPolicy& policy : common::server::AccessTable()) {
    EXPECT_TRUE(targets_of.count(policy.method))
        << "the access table's " << policy.method << " has no row in tenancy_matrix.txt";
  }
  // A method reached through a target reaches all three.
  for (const auto& [method, targets] : targets_of) {
    if (targets.count("A/x") || targets.count("A/y") || targets.count("B/x")) {
      EXPECT_TRUE(targets.count("A/x") && targets.count("A/y") && targets.count("B/x"))
          << method << ": rows for some of A/x, A/y, B/x only";
    }
  }
}

TEST(TenancyMatrixTableTest, AMalformedTableIsRefusedNamingTheLine) {
  const std::string header =
      "method target where operator admin-A admin-B host-A/x host-A/y reviewer-x reviewer-y "
      "authorizer envelope grantstore audit none\n";
  const std::string cells = " ok ok ok ok ok ok ok ok ok ok ok ok\n";
  EXPECT_TRUE(ParseMatrix(header + "GrantStore/GetGrant A/x all" + cells).ok());
  for (const std::string& bad : std::vector<std::string>{
           "GrantStore/GetGrant A/x all ok\n",
           "GrantStore/GetGrant C/z all" + cells,
           "GrantStore/GetGrant A/x some" + cells,
           "GrantStore A/x all" + cells,
           "GrantStore/GetGrant A/x all ok ok ok ok ok ok ok ok ok ok ok allowed\n",
           "GrantStore/GetGrant A/x all" + cells + "GrantStore/GetGrant A/x all" + cells,
       }) {
    absl::StatusOr<Matrix> parsed = ParseMatrix("# comment\n\n" + header + bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), "tenancy_matrix.txt:")) << bad;
  }
  EXPECT_FALSE(ParseMatrix("method target where operator\n").ok());
}

// ---------------------------------------------------------------- the matrix, per deployment

struct Mismatch {
  const MatrixRow* row;
  std::string column;
  std::string expected;
  Got got;
};

class TenancyMatrixTest : public ::testing::TestWithParam<DeploymentKind> {};

TEST_P(TenancyMatrixTest, EveryCellIsWhatTheTableSays) {
  absl::StatusOr<Matrix> matrix = ParseMatrix(MatrixText());
  ASSERT_TRUE(matrix.ok()) << matrix.status();
  const std::string name = DeploymentName(GetParam());
  const std::string dir = testing::TempPath("tenancy-" + name);
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0) << dir;

  const absl::Time started = absl::Now();
  absl::StatusOr<std::unique_ptr<World>> world = World::Start(GetParam(), dir);
  ASSERT_TRUE(world.ok()) << world.status();
  const absl::Time up = absl::Now();
  absl::Status armed = (*world)->Arm();
  ASSERT_TRUE(armed.ok()) << armed;
  const absl::Time ready = absl::Now();

  std::vector<Mismatch> mismatches;
  std::vector<std::string> observed;
  int cells = 0;
  for (const MatrixRow& row : matrix->rows) {
    auto driver = Drivers().find(row.Spelled());
    ASSERT_NE(driver, Drivers().end()) << row.Spelled();
    std::vector<std::string> got_row;
    if (row.where == "replicas" && !(*world)->replicas()) {
      // Not served here: nobody reaches it, the operator included.
      Got got = driver->second(**world, (*world)->operator_role(), row);
      ++cells;
      if (got.outcome != "UNIMPLEMENTED") {
        mismatches.push_back({&row, "operator", "UNIMPLEMENTED", got});
      }
      observed.push_back(absl::StrCat(row.Key(), "  (not served: ", got.outcome, ")"));
      continue;
    }
    for (size_t i = 0; i < RoleColumns().size(); ++i) {
      const Role& role = (*world)->role(RoleColumns()[i]);
      if (!role.exists || row.cells[i] == "n/a") {
        got_row.push_back("n/a");
        continue;
      }
      Got got = driver->second(**world, role, row);
      ++cells;
      got_row.push_back(got.outcome);
      if (got.outcome != row.cells[i]) {
        mismatches.push_back({&row, RoleColumns()[i], row.cells[i], got});
      }
    }
    observed.push_back(absl::StrCat(row.Key(), "  ", absl::StrJoin(got_row, " ")));
  }
  const absl::Time done = absl::Now();

  std::printf(
      "tenancy matrix on %s: %d cells; start %.1f s, arm %.1f s, cells %.1f s, total %.1f s; %zu "
      "mismatching\n",
      name.c_str(), cells, absl::ToDoubleSeconds(up - started), absl::ToDoubleSeconds(ready - up),
      absl::ToDoubleSeconds(done - ready), absl::ToDoubleSeconds(done - started),
      mismatches.size());
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream out(absl::StrCat(outputs, "/tenancy_matrix.", name, ".observed.txt"));
    out << "# " << absl::StrJoin(RoleColumns(), " ") << "\n"
        << absl::StrJoin(observed, "\n") << "\n";
  }
  std::string report;
  for (const Mismatch& mismatch : mismatches) {
    absl::StrAppend(&report, "\n  line ", mismatch.row->line, ": ", mismatch.row->Spelled(), " ",
                    mismatch.row->target, " as ", mismatch.column, ": expected ", mismatch.expected,
                    ", got ", mismatch.got.outcome, mismatch.got.detail.empty() ? "" : " — ",
                    mismatch.got.detail.substr(0, 300));
  }
  EXPECT_TRUE(mismatches.empty()) << mismatches.size()
                                  << " cells differ from tenancy_matrix.txt on " << name << ":"
                                  << report;
}

INSTANTIATE_TEST_SUITE_P(Deployments, TenancyMatrixTest,
                         ::testing::Values(DeploymentKind::kSharedosd,
                                           DeploymentKind::kFourProcesses,
                                           DeploymentKind::kReplicatedPostgres),
                         [](const ::testing::TestParamInfo<DeploymentKind>& info) {
                           return DeploymentName(info.param);
                         });

}  // namespace
}  // namespace sharedos::tenancy
