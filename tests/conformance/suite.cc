#include "tests/conformance/suite.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "capability/address.h"
#include "common/json/canonical_json.h"
#include "common/json/canonical_proto_json.h"
#include "common/json/proto_json.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "envelope_svc/tools/tool_registry.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/registry.pb.h"
#include "tests/conformance/grading.h"
#include "tests/conformance/row_run.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gv1 = ::sharedos::grantstore::v1;
namespace ev1 = ::sharedos::envelope::v1;
using nlohmann::json;

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

absl::StatusOr<json> ReadJson(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON"));
  return value;
}

// The declarations minus prose (the case-set hash covers ids, tools, arguments, conditions,
// expectations and issue markers only).
json WithoutProse(const json& value) {
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() == "prose") continue;
      out[it.key()] = WithoutProse(it.value());
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const json& item : value) out.push_back(WithoutProse(item));
    return out;
  }
  return value;
}

pb::Address AddressOf(const json& value) {
  pb::Address address;
  if (value.contains("humanUserId")) address.set_human_user_id(value["humanUserId"]);
  if (value.contains("agentId")) address.set_agent_id(value["agentId"]);
  return address;
}

// "<kind>:<id>" of a world.json address.
std::string KeyOf(const json& address) { return capability::AddressKey(AddressOf(address)); }

google::protobuf::Timestamp Stamp(absl::Time time) { return *common::ToProtoTimestamp(time); }

// "-2h", "+6s" relative to `base`.
absl::StatusOr<absl::Time> Instant(const std::string& offset, absl::Time base) {
  std::string text = offset;
  if (!text.empty() && text[0] == '+') text = text.substr(1);
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration)) {
    return absl::InvalidArgumentError(absl::StrCat("instant: \"", offset, "\""));
  }
  return base + duration;
}

// ------------------------------------------------------------------ world builder

struct ArmedGrant {
  std::string id;  // as issued (row-prefixed)
  std::optional<absl::Time> expires_at;
};

class WorldBuilder {
 public:
  WorldBuilder(const Declarations& declarations, Deployment& deployment)
      : deployment_(deployment), world_(declarations.world) {}

  // Revokes the previous row's grants, puts the condition's host policy (or an empty one), and
  // issues and derives the condition's grants. Grant ids become "r<row>-<id>".
  absl::Status Arm(int row, const json& condition) {
    for (const std::string& id : issued_) {
      gv1::RevokeGrantRequest revoke;
      revoke.set_namespace_id(Namespace());
      revoke.set_grant_id(id);
      gv1::RevokeGrantResponse revoked;
      grpc::Status status =
          deployment_.grants().RevokeGrant(As(deployment_.admin_token()).get(), revoke, &revoked);
      if (!status.ok() && status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
        return absl::InternalError(absl::StrCat("revoke ", id, ": ", status.error_message()));
      }
    }
    issued_.clear();
    armed_.clear();
    prefix_ = absl::StrCat("r", Pad(row), "-");
    base_ = deployment_.Now();

    gv1::PutHostPolicyRequest policy;
    policy.mutable_policy()->set_namespace_id(Namespace());
    if (condition.contains("hostPolicy")) {
      const json& declared = condition["hostPolicy"];
      policy.mutable_policy()->set_version(absl::StrCat(prefix_, Str(declared, "version")));
      for (const json& rule : declared["rules"]) {
        gv1::HostPolicyRule* out = policy.mutable_policy()->add_rules();
        out->set_id(Str(rule, "id"));
        out->set_resource_namespace(Str(rule, "namespace"));
        for (const json& segment : rule["path"]) out->add_path(segment.get<std::string>());
        out->set_scope(Str(rule, "scope") == "exact" ? pb::SCOPE_EXACT : pb::SCOPE_DESCENDANTS);
        for (const json& action : rule["actions"]) out->add_actions(action.get<std::string>());
      }
    } else {
      policy.mutable_policy()->set_version(absl::StrCat(prefix_, "no-rules"));
    }
    gv1::PutHostPolicyResponse put;
    RETURN_IF_ERROR(FromGrpc(
        deployment_.grants().PutHostPolicy(As(deployment_.admin_token()).get(), policy, &put)));

    // The condition's grants: the named sets, the extras, then the overrides.
    std::vector<json> grants;
    for (const json& set : condition["grants"]) {
      for (const json& grant : world_["grantSets"][set.get<std::string>()]) grants.push_back(grant);
    }
    if (condition.contains("extra")) {
      for (const json& grant : condition["extra"]) grants.push_back(grant);
    }
    if (condition.contains("override")) {
      for (json& grant : grants) {
        auto it = condition["override"].find(Str(grant, "id"));
        if (it == condition["override"].end()) continue;
        for (auto field = it->begin(); field != it->end(); ++field) grant[field.key()] = *field;
      }
    }
    // Parents before children.
    std::set<std::string> done;
    while (done.size() < grants.size()) {
      bool progressed = false;
      for (const json& grant : grants) {
        const std::string id = Str(grant, "id");
        if (done.count(id)) continue;
        const std::string parent = Str(grant, "parent");
        if (!parent.empty() && !done.count(parent)) continue;
        RETURN_IF_ERROR(IssueOne(grant));
        done.insert(id);
        progressed = true;
      }
      if (!progressed) return absl::InvalidArgumentError("world.json: a grant's parent is missing");
    }
    if (condition.contains("revoke")) {
      for (const json& id : condition["revoke"]) RETURN_IF_ERROR(Revoke(id.get<std::string>()));
    }
    return absl::OkStatus();
  }

  absl::Status Revoke(const std::string& declared_id) {
    gv1::RevokeGrantRequest revoke;
    revoke.set_namespace_id(Namespace());
    revoke.set_grant_id(prefix_ + declared_id);
    gv1::RevokeGrantResponse revoked;
    return FromGrpc(
        deployment_.grants().RevokeGrant(As(deployment_.admin_token()).get(), revoke, &revoked));
  }

  std::optional<absl::Time> ExpiryOf(const std::string& declared_id) const {
    auto it = armed_.find(declared_id);
    return it == armed_.end() ? std::nullopt : it->second.expires_at;
  }
  std::string GrantId(const std::string& declared_id) const { return prefix_ + declared_id; }
  // A grant the row's run created (an approval): revoked with the row's own when the next row
  // is armed.
  void Adopt(const std::string& grant_id) {
    issued_.push_back(grant_id);
    all_ids_.push_back(grant_id);
  }
  const std::vector<std::string>& all_ids() const { return all_ids_; }
  std::string Namespace() const { return world_["namespace"]; }

 private:
  absl::Status IssueOne(const json& grant) {
    const std::string id = Str(grant, "id");
    std::vector<pb::Capability> capabilities;
    for (const json& name : grant["capabilities"]) {
      // "<capability>@<principal>": the capability on that world principal's resources.
      const std::string spelled = name.get<std::string>();
      const size_t at = spelled.find('@');
      const json& declared = world_["capabilities"][spelled.substr(0, at)];
      pb::Capability capability;
      if (at != std::string::npos) {
        *capability.mutable_resource()->mutable_owner() = AddressOf(world_[spelled.substr(at + 1)]);
      }
      capability.mutable_resource()->set_namespace_(Str(declared, "namespace"));
      for (const json& segment : declared["path"]) {
        capability.mutable_resource()->add_path(segment.get<std::string>());
      }
      for (const json& action : declared["actions"])
        capability.add_actions(action.get<std::string>());
      capability.set_scope(Str(declared, "scope") == "exact" ? pb::SCOPE_EXACT
                                                             : pb::SCOPE_DESCENDANTS);
      capabilities.push_back(std::move(capability));
    }
    pb::CapabilityConstraints constraints;
    ArmedGrant armed{prefix_ + id, std::nullopt};
    if (grant.contains("expiresAt")) {
      ASSIGN_OR_RETURN(absl::Time expires, Instant(Str(grant, "expiresAt"), base_));
      *constraints.mutable_expires_at() = Stamp(expires);
      armed.expires_at = expires;
    }
    if (grant.contains("maxUses")) constraints.set_max_uses(grant["maxUses"].get<int64_t>());
    if (grant.contains("delegationDepth")) {
      constraints.set_delegation_depth(grant["delegationDepth"].get<int32_t>());
    }
    ASSIGN_OR_RETURN(absl::Time issued_at, Instant(Str(grant, "issuedAt", "-1h"), base_));
    const pb::Address subject = AddressOf(world_[Str(grant, "subject")]);

    if (Str(grant, "via") == "plant") {
      pb::CapabilityGrant out;
      out.set_id(prefix_ + id);
      out.set_namespace_id(Namespace());
      *out.mutable_subject() = subject;
      *out.mutable_issuer() = AddressOf(world_[Str(grant, "issuer")]);
      for (const pb::Capability& capability : capabilities) *out.add_capabilities() = capability;
      *out.mutable_constraints() = constraints;
      *out.mutable_issued_at() = Stamp(issued_at);
      if (grant.contains("parent")) out.set_parent_grant_id(prefix_ + Str(grant, "parent"));
      RETURN_IF_ERROR(deployment_.PlantGrant(out));
    } else if (Str(grant, "via") == "derive") {
      gv1::DeriveGrantRequest request;
      request.set_namespace_id(Namespace());
      request.set_parent_grant_id(prefix_ + Str(grant, "parent"));
      gv1::DerivationRequest* child = request.mutable_child();
      child->set_id(prefix_ + id);
      *child->mutable_subject() = subject;
      for (const pb::Capability& capability : capabilities) *child->add_capabilities() = capability;
      *child->mutable_constraints() = constraints;
      *child->mutable_issued_at() = Stamp(issued_at);
      gv1::DeriveGrantResponse response;
      RETURN_IF_ERROR(FromGrpc(deployment_.grants().DeriveGrant(As(deployment_.admin_token()).get(),
                                                                request, &response)));
      if (response.has_refusal()) {
        return absl::FailedPreconditionError(
            absl::StrCat("derive ", id, ": refused ", response.refusal().code()));
      }
    } else {
      gv1::IssueGrantRequest request;
      pb::CapabilityGrant* out = request.mutable_grant();
      out->set_id(prefix_ + id);
      out->set_namespace_id(Namespace());
      *out->mutable_subject() = subject;
      *out->mutable_issuer() = AddressOf(world_[Str(grant, "issuer")]);
      for (const pb::Capability& capability : capabilities) *out->add_capabilities() = capability;
      *out->mutable_constraints() = constraints;
      *out->mutable_issued_at() = Stamp(issued_at);
      if (grant.contains("parent")) out->set_parent_grant_id(prefix_ + Str(grant, "parent"));
      gv1::IssueGrantResponse response;
      RETURN_IF_ERROR(FromGrpc(deployment_.grants().IssueGrant(As(deployment_.admin_token()).get(),
                                                               request, &response)));
    }
    issued_.push_back(prefix_ + id);
    all_ids_.push_back(prefix_ + id);
    armed_[id] = armed;
    return absl::OkStatus();
  }

  Deployment& deployment_;
  const json& world_;
  std::string prefix_;
  absl::Time base_;
  std::vector<std::string> issued_;
  std::vector<std::string> all_ids_;
  std::map<std::string, ArmedGrant> armed_;
};

// ------------------------------------------------------------------ the row runner

json ValueToJson(const google::protobuf::Value& value) {
  auto converted = common::ProtoValueToJson(value);
  return converted.ok() ? *converted : json();
}

json StructToJson(const google::protobuf::Struct& value) {
  auto converted = common::ProtoStructToJson(value);
  return converted.ok() ? *converted : json::object();
}

class RowRunner {
 public:
  RowRunner(const Declarations& declarations, Deployment& deployment, WorldBuilder& world,
            const std::string& column, McpClient* mcp)
      : d_(declarations), deployment_(deployment), world_(world), column_(column), mcp_(mcp) {}

  RowRun Run(const json& row) {
    RowRun run;
    run.row = row;
    const int number = row["row"];
    const json& condition = d_.world["conditions"][Str(row, "conditionId")];
    deployment_.notion().Reset();
    if (absl::Status armed = world_.Arm(number, condition); !armed.ok()) {
      run.harness_errors.push_back(absl::StrCat("arming: ", armed.message()));
      return run;
    }
    expect_turn_.clear();
    for (const json& step : row["script"]) {
      if (step.contains("expectTurn") && !step.contains("mutate")) {
        expect_turn_[step.value("turn", 1)] = step["expectTurn"];
      }
    }
    for (const json& step : row["script"]) {
      deployment_.Tick();
      if (absl::Status status = Step(run, condition, step); !status.ok()) {
        run.harness_errors.push_back(std::string(status.message()));
      }
    }
    if (answerer_.joinable()) answerer_.join();
    {
      absl::MutexLock lock(&answer_mu_);
      for (std::string& error : answer_errors_) run.harness_errors.push_back(std::move(error));
      answer_errors_.clear();
    }
    // A turn the script left open would leave no turn.ended: close it (never a pass).
    for (auto& [n, turn] : run.turns) {
      if (turn.opened && !turn.finished && !turn.ended_at_open) {
        run.harness_errors.push_back(absl::StrCat("turn ", n, " left open by the script"));
      }
    }
    run.grant_ids = world_.all_ids();
    return run;
  }

 private:
  // Row 41's answering receiver, joined when the row ends, and what it could not do.
  std::thread answerer_;
  absl::Mutex answer_mu_;
  std::vector<std::string> answer_errors_ ABSL_GUARDED_BY(answer_mu_);

  std::string ExecutionId(int row, int turn) const {
    return absl::StrCat("exec-r", Pad(row), "-t", turn);
  }
  std::string TraceId(int row, int turn) const {
    return absl::StrCat(d_.world["trace"].get<std::string>(), "-r", Pad(row), "-t", turn);
  }

  json Substitute(const json& value, const RowRun& run) const {
    if (value.is_string()) {
      std::string text = value.get<std::string>();
      if (text == "$forgedGrant") return d_.cases["forgedGrant"];
      if (!text.empty() && text[0] == '$') {
        std::vector<std::string> parts = absl::StrSplit(text.substr(1), '.');
        for (const Attempt& attempt : run.attempts) {
          if (attempt.id == parts[0] && parts.size() == 2 && attempt.output.is_object() &&
              attempt.output.contains(parts[1])) {
            return attempt.output[parts[1]];
          }
          // The capreq- id of the authority a denial described (C1: what the model saw).
          if (attempt.id == parts[0] && parts.size() == 2 && parts[1] == "requiredAuthority" &&
              attempt.details.is_object() && attempt.details.contains("requiredAuthority")) {
            return attempt.details["requiredAuthority"].value("id", json("unresolved"));
          }
        }
        return "unresolved";
      }
      return absl::StrReplaceAll(text, {{"{column}", column_}});
    }
    if (value.is_object()) {
      json out = json::object();
      for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = Substitute(*it, run);
      return out;
    }
    if (value.is_array()) {
      json out = json::array();
      for (const json& item : value) out.push_back(Substitute(item, run));
      return out;
    }
    return value;
  }

  Attempt& NewAttempt(RowRun& run, const json& step) {
    Attempt attempt;
    attempt.declared = step;
    attempt.id = Str(step, "id");
    attempt.role = Str(step, "role", "attack");
    attempt.turn = step.value("turn", 1);
    attempt.unreachable = Str(step, "unreachable");
    // What the MCP seat must observe, where it differs from the host's (a step's expectMcp).
    if (mcp_ && step.contains("expectMcp")) attempt.declared["expect"] = step["expectMcp"];
    run.attempts.push_back(std::move(attempt));
    return run.attempts.back();
  }

  absl::Status Step(RowRun& run, const json& condition, const json& step) {
    const std::string what = Str(step, "do");
    const int row = run.row["row"];
    if (what == "open") return Open(run, condition, step, row);
    if (what == "call") return Call(run, step);
    if (what == "finish") return Finish(run, step);
    if (what == "probe") return Probe(run, step);
    if (what == "approve") return Approve(run, step);
    if (what == "resume") return Resume(run, step);
    if (what == "revoke") return world_.Revoke(Str(step, "grant"));
    if (what == "revoke-route") return RevokeRoute(run, step);
    if (what == "namespaces") return UpdateNamespaces(run, step);
    if (what == "resource") return Resource(run, step);
    if (what == "send") return Send(run, step);
    if (what == "answer") return Answer(run, step);
    if (what == "expire") {
      std::optional<absl::Time> expiry = world_.ExpiryOf(Str(step, "grant"));
      if (!expiry) return absl::InvalidArgumentError("expire: the grant has no expiry");
      return deployment_.PassBeyond(*expiry);
    }
    if (what == "outage") return deployment_.Outage(Str(step, "what"));
    if (what == "recover") return deployment_.Recover();
    if (what == "move-tool") {
      deployment_.notion().MoveAction(Str(step, "action"));
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown step \"", what, "\""));
  }

  // The host's transport revokes the lease of the world owner's route `sender` → `receiver`
  // (world.json principals), on the envelope of the step's turn (seed ADR 0025).
  absl::Status RevokeRoute(RowRun& run, const json& step) {
    ev1::RevokeRouteRequest request;
    request.set_namespace_id(d_.world["namespace"]);
    *request.mutable_sender() = AddressOf(d_.world[Str(step, "sender")]);
    *request.mutable_receiver() = AddressOf(d_.world[Str(step, "receiver")]);
    // The route of the turns' owner (ADR 0014, T5: a route is an owner's; the host serves two).
    *request.mutable_owner() = AddressOf(d_.world["owner"]);
    return deployment_.host(broker_[step.value("turn", 1)]).RevokeRoute(request).status();
  }

  // The running turn a host step acts on, or null (the attempt is then not exercised).
  Turn* RunningTurn(RowRun& run, const Attempt& attempt) {
    auto it = run.turns.find(attempt.turn);
    if (it == run.turns.end() || !it->second.opened || it->second.ended_at_open) return nullptr;
    return &it->second;
  }

  // The host invokes a resource operation for the turn's actor (Envelope.InvokeResource):
  // `resource` {namespace, path, owner?}, `action`, `input`; the operation id is the attempt's.
  absl::Status Resource(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    Turn* turn = RunningTurn(run, attempt);
    if (turn == nullptr) return absl::OkStatus();
    ev1::InvokeResourceRequest request;
    request.set_turn_id(turn->turn_id);
    request.set_operation_id(attempt.id);
    const json resource = Substitute(step.value("resource", json::object()), run);
    request.mutable_resource()->set_namespace_(Str(resource, "namespace"));
    for (const json& segment : resource.value("path", json::array())) {
      request.mutable_resource()->add_path(segment.get<std::string>());
    }
    if (resource.contains("owner")) {
      *request.mutable_resource()->mutable_owner() = AddressOf(d_.world[Str(resource, "owner")]);
    }
    request.set_action(Str(step, "action"));
    if (step.contains("input")) {
      auto input = common::JsonToProtoValue(Substitute(step["input"], run));
      if (!input.ok()) return input.status();
      *request.mutable_input() = *input;
    }
    absl::StatusOr<ev1::InvokeResourceResponse> response =
        deployment_.host(broker_[attempt.turn]).InvokeResource(request);
    attempt.issued = true;
    if (!response.ok()) {
      attempt.status = absl::StrCat("rpc:", absl::StatusCodeToString(response.status().code()));
      attempt.message = std::string(response.status().message());
      return absl::OkStatus();
    }
    const ev1::ResourceResult& result = response->result();
    turn->serialized += response->SerializeAsString();
    attempt.status = Word(result.status(), "RESOURCE_RESULT_STATUS_");
    if (result.has_error()) attempt.code = result.error().code();
    if (result.has_output()) attempt.output = ValueToJson(result.output());
    return absl::OkStatus();
  }

  // The host sends a message for the turn's actor (Envelope.SendMessage): `sender` and
  // `receiver` name world.json principals, the message id is the attempt's, purpose and trace
  // the turn's.
  absl::Status Send(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    Turn* turn = RunningTurn(run, attempt);
    if (turn == nullptr) return absl::OkStatus();
    ev1::SendMessageRequest request;
    request.set_turn_id(turn->turn_id);
    pb::MessageEnvelope* message = request.mutable_message();
    message->set_version("1");
    message->set_id(attempt.id);
    *message->mutable_sender() = AddressOf(d_.world[Str(step, "sender", "agent")]);
    *message->mutable_receiver() = AddressOf(d_.world[Str(step, "receiver")]);
    message->set_purpose(d_.world["purpose"]);
    message->set_trace_id(turn->trace_id);
    auto payload = common::JsonToProtoValue(Substitute(step.value("payload", json("")), run));
    if (!payload.ok()) return payload.status();
    *message->mutable_payload() = *payload;
    *message->mutable_created_at() = Stamp(deployment_.Now());
    absl::StatusOr<ev1::SendMessageResponse> response =
        deployment_.host(broker_[attempt.turn]).SendMessage(request);
    attempt.issued = true;
    if (!response.ok()) {
      attempt.status = absl::StrCat("rpc:", absl::StatusCodeToString(response.status().code()));
      attempt.message = std::string(response.status().message());
      return absl::OkStatus();
    }
    const ev1::MessageDeliveryResult& receipt = response->receipt();
    turn->serialized += response->SerializeAsString();
    attempt.status = Word(receipt.status(), "MESSAGE_DELIVERY_STATUS_");
    if (receipt.has_error()) attempt.code = receipt.error().code();
    return absl::OkStatus();
  }

  // An answering receiver (row 41): a thread takes the first message for `as` (a world.json
  // principal) from its inbox (MessageRoutes.Receive, waiting up to 10 s), opens that
  // principal's own turn under another trace than the request's, and replies on that turn
  // (Envelope.SendMessage, reply_to = the message's id, payload an object), then finishes it.
  // The thread is joined when the row ends; what it could not do is a harness error.
  absl::Status Answer(RowRun& run, const json& step) {
    if (answerer_.joinable()) return absl::FailedPreconditionError("answer: one per row");
    const int row = run.row["row"];
    const int number = step.value("turn", 1);
    HostApi* host = &deployment_.host(broker_.count(number) ? broker_[number] : true);
    const json world = d_.world;
    const std::string as = Str(step, "as");
    const std::string execution_id = absl::StrCat(ExecutionId(row, number), "-answer");
    const std::string trace = absl::StrCat(TraceId(row, number), "-answer");
    const google::protobuf::Timestamp now = Stamp(deployment_.Now());
    answerer_ = std::thread([this, host, world, as, execution_id, trace, now] {
      auto fail = [this](absl::string_view what, const absl::Status& status) {
        absl::MutexLock lock(&answer_mu_);
        answer_errors_.push_back(absl::StrCat("answer: ", what, ": ", status.ToString()));
      };
      ev1::ReceiveRequest receive;
      receive.set_namespace_id(world["namespace"]);
      *receive.mutable_receiver() = AddressOf(world[as]);
      receive.set_max(1);
      receive.mutable_wait()->set_seconds(10);
      absl::StatusOr<ev1::ReceiveResponse> received = host->Receive(receive);
      if (!received.ok()) return fail("receive", received.status());
      if (received->messages().empty()) return fail("receive", absl::DeadlineExceededError("none"));
      const pb::MessageEnvelope request = received->messages(0);

      ev1::OpenTurnRequest open;
      open.set_runtime(ev1::RUNTIME_DRIVER);
      pb::ExecutionRequest* execution = open.mutable_execution_request();
      execution->set_version("1");
      execution->set_execution_id(execution_id);
      *execution->mutable_agent() = AddressOf(world[as]);
      pb::AccessContext* context = execution->mutable_context();
      context->set_namespace_id(world["namespace"]);
      *context->mutable_actor() = AddressOf(world[as]);
      *context->mutable_authority() = AddressOf(world["owner"]);
      *context->mutable_owner() = AddressOf(world["owner"]);
      context->set_purpose(world["purpose"]);
      context->set_trace_id(trace);
      *context->mutable_now() = now;
      pb::MessageEnvelope* message = execution->mutable_message();
      message->set_version("1");
      message->set_id(absl::StrCat(execution_id, "-msg"));
      *message->mutable_sender() = AddressOf(world["owner"]);
      *message->mutable_receiver() = AddressOf(world[as]);
      message->set_purpose(world["purpose"]);
      message->mutable_payload()->set_string_value("Answer the request.");
      message->set_trace_id(trace);
      *message->mutable_created_at() = now;
      absl::StatusOr<ev1::OpenTurnResponse> opened = host->OpenTurn(open);
      if (!opened.ok()) return fail("open", opened.status());
      if (opened->has_result()) return fail("open", absl::FailedPreconditionError("ended at open"));

      ev1::SendMessageRequest send;
      send.set_turn_id(opened->turn_id());
      pb::MessageEnvelope* reply = send.mutable_message();
      reply->set_version("1");
      reply->set_id(absl::StrCat(execution_id, "-reply"));
      reply->set_reply_to(request.id());
      *reply->mutable_sender() = AddressOf(world[as]);
      *reply->mutable_receiver() = request.sender();
      reply->set_purpose(request.purpose());
      // The answering turn's own trace, not the request's.
      reply->set_trace_id(trace);
      (*reply->mutable_payload()->mutable_struct_value()->mutable_fields())["answer"]
          .set_string_value("approved");
      *reply->mutable_created_at() = now;
      absl::StatusOr<ev1::SendMessageResponse> sent = host->SendMessage(send);
      if (!sent.ok()) fail("send", sent.status());

      ev1::FinishTurnRequest finish;
      finish.set_turn_id(opened->turn_id());
      finish.mutable_complete()->mutable_output()->set_string_value("answered");
      if (auto finished = host->FinishTurn(finish); !finished.ok()) {
        fail("finish", finished.status());
      }
    });
    return absl::OkStatus();
  }

  // The host turns tool namespaces of the step's running turn on or off (`enable`, `disable`).
  absl::Status UpdateNamespaces(RowRun& run, const json& step) {
    auto it = run.turns.find(step.value("turn", 1));
    if (it == run.turns.end() || !it->second.opened || it->second.finished) {
      return absl::OkStatus();
    }
    ev1::UpdateToolNamespacesRequest request;
    request.set_turn_id(it->second.turn_id);
    for (const json& name : step.value("enable", json::array())) request.add_enable(name);
    for (const json& name : step.value("disable", json::array())) request.add_disable(name);
    return deployment_.host(broker_[it->first]).UpdateToolNamespaces(request).status();
  }

  absl::Status Open(RowRun& run, const json& condition, const json& step, int row) {
    const int number = step.value("turn", 1);
    Turn& turn = run.turns[number];
    turn.number = number;
    turn.execution_id = ExecutionId(row, number);
    turn.trace_id = TraceId(row, number);
    turn.expect_turn = expect_turn_[number];
    turn.ending_at_open_expected = step.contains("expectTurn");
    turn.expect_catalogue = step.value("expectCatalogue", json());
    const json& world = d_.world;
    ev1::OpenTurnRequest request;
    request.set_runtime(mcp_ ? ev1::RUNTIME_MCP : ev1::RUNTIME_DRIVER);
    pb::ExecutionRequest* execution = request.mutable_execution_request();
    execution->set_version("1");
    execution->set_execution_id(turn.execution_id);
    *execution->mutable_agent() = AddressOf(world["agent"]);
    pb::AccessContext* context = execution->mutable_context();
    context->set_namespace_id(world["namespace"]);
    *context->mutable_actor() = AddressOf(world["agent"]);
    // The tenancy rows (T1, T2) name another owner or authority for the turn.
    turn.authority = AddressOf(world[Str(step, "authority", "orchestrator")]);
    turn.owner = AddressOf(world[Str(step, "owner", "owner")]);
    *context->mutable_authority() = turn.authority;
    *context->mutable_owner() = turn.owner;
    context->set_purpose(world["purpose"]);
    context->set_trace_id(turn.trace_id);
    for (const json& ns : world["enabledToolNamespaces"]) {
      context->add_enabled_tool_namespaces(ns.get<std::string>());
    }
    // A messaging condition: the kernel-supplied messages.request is asked for, its tool
    // namespace enabled (semantics §2.2).
    const bool messaging = condition.value("messaging", false);
    if (messaging) context->add_enabled_tool_namespaces("messages");
    const absl::Time now = deployment_.Now();
    *context->mutable_now() = Stamp(now);
    pb::MessageEnvelope* message = execution->mutable_message();
    message->set_version("1");
    message->set_id(absl::StrCat("msg-r", Pad(row), "-t", number));
    *message->mutable_sender() = AddressOf(world["orchestrator"]);
    *message->mutable_receiver() = AddressOf(world["agent"]);
    message->set_purpose(world["purpose"]);
    json payload = step.contains("payload") ? Substitute(step["payload"], run)
                                            : json("Work in the workspace.");
    auto value = common::JsonToProtoValue(payload);
    if (!value.ok()) return value.status();
    *message->mutable_payload() = *value;
    message->set_trace_id(turn.trace_id);
    *message->mutable_created_at() = Stamp(now);
    for (const std::string& name : d_.tool_names) execution->add_tools(name);
    if (messaging) execution->add_tools("messages.request");
    if (condition.contains("options")) {
      const json& options = condition["options"];
      if (options.contains("maxSteps")) {
        execution->mutable_options()->set_max_steps(options["maxSteps"]);
      }
      if (options.contains("maxToolCalls")) {
        execution->mutable_options()->set_max_tool_calls(options["maxToolCalls"]);
      }
    }
    const bool broker = Str(condition, "broker") != "unattached";

    // An open that is itself an attempt (row 34: a malformed protocol "1" object; row T2: a turn
    // opened by a host scoped to another owner).
    if (step.contains("mutate") || step.contains("as")) {
      Attempt& attempt = NewAttempt(run, step);
      const std::string mutate = Str(step, "mutate");
      if (mutate == "unknown-field") {
        context->GetReflection()->MutableUnknownFields(context)->AddVarint(9999, 1);
      } else if (mutate == "version-2") {
        execution->set_version("2");
      }
      run.unrecorded_executions.push_back(turn.trace_id);
      HostApi& host =
          Str(step, "as") == "other-host" ? deployment_.other_host() : deployment_.host(broker);
      absl::StatusOr<ev1::OpenTurnResponse> response = host.OpenTurn(request);
      attempt.issued = true;
      if (response.ok()) {
        attempt.status = "opened";
        turn.opened = true;
        turn.turn_id = response->turn_id();
        if (response->has_result()) {
          turn.ended_at_open = true;
          turn.finished = true;
          turn.result = response->result();
        } else {
          // Close what should never have opened, so the record is complete.
          ev1::FinishTurnRequest finish;
          finish.set_turn_id(turn.turn_id);
          finish.mutable_complete()->mutable_output()->set_string_value("closed");
          auto finished = host.FinishTurn(finish);
          if (finished.ok()) turn.result = finished->result();
          turn.finished = true;
        }
      } else {
        attempt.status = absl::StrCat("rpc:", absl::StatusCodeToString(response.status().code()));
        attempt.message = std::string(response.status().message());
      }
      return absl::OkStatus();
    }

    absl::StatusOr<ev1::OpenTurnResponse> response = deployment_.host(broker).OpenTurn(request);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat("open turn ", number, ": ", response.status().message()));
    }
    turn.opened = true;
    turn.turn_id = response->turn_id();
    turn.serialized += response->SerializeAsString();
    broker_[number] = broker;
    if (response->has_result()) {
      turn.ended_at_open = true;
      turn.finished = true;
      turn.result = response->result();
      return absl::OkStatus();
    }
    for (const auto& tool : response->catalog().tools()) {
      turn.catalogue.push_back(tool.name());
    }
    if (mcp_) {
      if (!response->has_mcp()) return absl::FailedPreconditionError("no MCP endpoint answered");
      turn.execution_token = response->mcp().token();
      turn.mcp_url = response->mcp().url();
      absl::StatusOr<std::vector<std::string>> listed =
          mcp_->Connect(response->mcp().url(), response->mcp().token());
      if (!listed.ok()) return listed.status();
      turn.catalogue = *listed;
      turn.mcp_connected = true;
    }
    return absl::OkStatus();
  }

  // One tools/call by the MCP client on its live session, and what it got back.
  void McpCall(Attempt& attempt, Turn& turn, const json& arguments) {
    const json& step = attempt.declared;
    absl::StatusOr<json> answer = mcp_->Call(Str(step, "tool"), arguments);
    if (!answer.ok() && answer.status().code() == absl::StatusCode::kFailedPrecondition) {
      // The client refused before sending: the attempt never reached SharedOS. For a name
      // absent from tools/list that is structural (the client's own router, ADR 0018).
      if (step.value("uncatalogued", false)) {
        attempt.unreachable = "the client refuses a tool absent from tools/list";
      } else if (mcp_->RouterRefusesUnlisted()) {
        attempt.unreachable = "the CLI's own router refuses a tool it did not offer its model";
      }
      attempt.message = std::string(answer.status().message());
      return;
    }
    attempt.issued = true;
    if (!answer.ok()) {
      attempt.status = "rpc:" + std::string(absl::StatusCodeToString(answer.status().code()));
      attempt.message = std::string(answer.status().message());
      return;
    }
    const json meta = answer->value("_meta", json::object());
    if (answer->value("isError", false)) {
      attempt.status = meta.value("sharedos/status", std::string("failed"));
      attempt.code = meta.value("sharedos/code", std::string());
    } else {
      attempt.status = "succeeded";
      attempt.output = answer->value("structuredContent", json());
    }
    attempt.details = meta;
    // A denial's required authority travels in _meta on the MCP seat (envelope_svc/mcp
    // README): the same CapabilityRequest the gRPC seat finds in error.details.
    if (meta.contains("sharedos/requiredAuthority")) {
      attempt.details["requiredAuthority"] = meta["sharedos/requiredAuthority"];
    }
    turn.serialized += answer->dump();
  }

  absl::Status Call(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    if (!attempt.unreachable.empty()) return absl::OkStatus();
    auto it = run.turns.find(attempt.turn);
    if (it == run.turns.end() || !it->second.opened) return absl::OkStatus();  // not exercised
    Turn& turn = it->second;
    if (turn.ended_at_open) {
      // Structurally unreachable only where the row declares that ending; otherwise the
      // attempt never reached SharedOS (not exercised) and the turn's ending is graded.
      if (turn.ending_at_open_expected) {
        attempt.unreachable = "the turn ended before its runtime started";
      }
      return absl::OkStatus();
    }
    const json arguments = Substitute(step.value("arguments", json::object()), run);
    if (mcp_) {
      if (!turn.mcp_connected) return absl::OkStatus();
      McpCall(attempt, turn, arguments);
      return absl::OkStatus();
    }
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn.turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(attempt.id);
    call->set_tool(Str(step, "tool"));
    call->set_trace_id(turn.trace_id);
    auto parsed = common::JsonToProtoStruct(arguments);
    if (!parsed.ok()) return parsed.status();
    *call->mutable_arguments() = *parsed;
    *call->mutable_requested_at() = Stamp(deployment_.Now());
    if (step.contains("step")) request.set_step(step["step"].get<int64_t>());
    absl::StatusOr<ev1::InvokeToolResponse> response =
        deployment_.host(broker_[attempt.turn]).InvokeTool(request);
    attempt.issued = true;
    if (!response.ok()) {
      attempt.status = absl::StrCat("rpc:", absl::StatusCodeToString(response.status().code()));
      attempt.message = std::string(response.status().message());
      return absl::OkStatus();
    }
    const pb::ToolResult& result = response->result();
    turn.serialized += response->SerializeAsString();
    attempt.status = StatusName(result.status());
    if (result.has_error()) {
      attempt.code = result.error().code();
      attempt.details = StructToJson(result.error().details());
    }
    if (result.has_output()) attempt.output = ValueToJson(result.output());
    return absl::OkStatus();
  }

  absl::Status Finish(RowRun& run, const json& step) {
    const int number = step.value("turn", 1);
    auto it = run.turns.find(number);
    if (it == run.turns.end() || !it->second.opened || it->second.finished) return absl::OkStatus();
    Turn& turn = it->second;
    if (mcp_ && turn.mcp_connected) {
      RETURN_IF_ERROR(mcp_->Close());
      turn.mcp_connected = false;
    }
    ev1::FinishTurnRequest request;
    request.set_turn_id(turn.turn_id);
    const std::string outcome = Str(step, "outcome");
    if (mcp_ && outcome == "complete") {
      request.mutable_harness_exited()->set_outcome_status("completed");
      request.mutable_harness_exited()->mutable_output()->set_string_value("done");
    } else if (outcome == "harness-exited") {
      request.mutable_harness_exited()->set_outcome_status(
          Str(step, "harnessOutcome", "completed"));
    } else if (outcome == "complete" || outcome == "host-complete") {
      // host-complete: the host's FinishTurn(complete) on every column, MCP included.
      request.mutable_complete()->mutable_output()->set_string_value("done");
    } else if (outcome == "fail") {
      request.mutable_fail()->mutable_error()->set_code(Str(step, "code"));
      request.mutable_fail()->mutable_error()->set_message("the runtime died");
    } else if (outcome == "escalate") {
      request.mutable_escalate()->set_reason(Str(step, "reason"));
      const std::string from = Str(step, "requestedAuthorityFrom");
      if (!from.empty()) {
        for (Attempt& attempt : run.attempts) {
          if (attempt.id != from || !attempt.details.is_object() ||
              !attempt.details.contains("requiredAuthority")) {
            continue;
          }
          // A CLI's host never sees the call's result, and the CLI showed its model the
          // requirement's id only: the host reads the authority the kernel described to the turn
          // under that id from GetTurn (docs/adr/0018).
          if (!attempt.details["requiredAuthority"].contains("capabilities")) {
            RETURN_IF_ERROR(ReadDescribed(turn, number, attempt));
            if (!attempt.details["requiredAuthority"].contains("capabilities")) continue;
          }
          auto parsed = google::protobuf::util::JsonStringToMessage(
              attempt.details["requiredAuthority"].dump(),
              request.mutable_escalate()->mutable_requested_authority());
          if (!parsed.ok()) return absl::InternalError("requiredAuthority does not parse");
        }
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("finish: unknown outcome ", outcome));
    }
    absl::StatusOr<ev1::FinishTurnResponse> response =
        deployment_.host(broker_[number]).FinishTurn(request);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat("finish turn ", number, ": ", response.status().message()));
    }
    turn.finished = true;
    turn.result = response->result();
    turn.escalation_id = response->escalation_id();
    turn.serialized += response->SerializeAsString();
    return absl::OkStatus();
  }

  // The authority the kernel described to `turn` under the id `attempt`'s answer named, as the
  // host reads it (GetTurn's described_authorities): it replaces the id-only requirement a CLI
  // showed its model, and is noted as read from GetTurn. None described under that id: unchanged.
  absl::Status ReadDescribed(const Turn& turn, int number, Attempt& attempt) {
    ev1::GetTurnRequest get;
    get.set_turn_id(turn.turn_id);
    absl::StatusOr<ev1::GetTurnResponse> got = deployment_.host(broker_[number]).GetTurn(get);
    if (!got.ok()) return got.status();
    const std::string id = Str(attempt.details["requiredAuthority"], "id");
    for (const pb::CapabilityRequest& described : got->described_authorities()) {
      if (described.id() != id) continue;
      ASSIGN_OR_RETURN(const std::string text, common::CanonicalProtoJson(described));
      attempt.details["requiredAuthority"] = json::parse(text);
      attempt.details["requiredAuthorityReadFrom"] = "GetTurn.described_authorities";
    }
    return absl::OkStatus();
  }

  // Row 18: every surface the host seat reaches, and everything its turn answered.
  absl::Status Probe(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    if (Str(step, "probe") == "strict-reader") return StrictReader(run, attempt);
    if (Str(step, "probe") != "grant-material") {
      return absl::InvalidArgumentError("unknown probe");
    }
    attempt.issued = true;
    std::vector<std::string> found;
    const std::vector<std::string>& ids = world_.all_ids();
    auto scan = [&](const std::string& where, const std::string& text) {
      for (const std::string& id : ids) {
        if (absl::StrContains(text, id)) {
          found.push_back(absl::StrCat(where, " returned grant ", id));
          return;
        }
      }
    };
    std::vector<std::string> answered;
    std::vector<std::pair<std::string, std::string>> seats = {
        {"host credential", deployment_.host_token()}};
    for (const auto& [n, turn] : run.turns) {
      if (!turn.execution_token.empty()) {
        seats.push_back({absl::StrCat("execution token of turn ", n), turn.execution_token});
      }
    }
    for (const auto& [seat, token] : seats) {
      for (const Surface& surface : deployment_.Surfaces(token)) {
        absl::StatusOr<std::string> answer = surface.call();
        answered.push_back(absl::StrCat(
            surface.name, " (", seat, ") ",
            answer.ok() ? "answered" : absl::StatusCodeToString(answer.status().code())));
        if (answer.ok()) scan(surface.name, *answer);
      }
    }
    answered.push_back("turn answers and GetTurn scanned for every grant id of the world");
    attempt.details = {{"surfaces", answered}};
    for (auto& [n, turn] : run.turns) {
      scan(absl::StrCat("turn ", n, " answers"), turn.serialized);
      ev1::GetTurnRequest get;
      get.set_turn_id(turn.turn_id);
      auto got = deployment_.host(broker_[n]).GetTurn(get);
      if (got.ok()) scan(absl::StrCat("GetTurn of turn ", n), got->SerializeAsString());
    }
    if (found.empty()) {
      attempt.status = "denied";
      attempt.code = "no_grant_material_reachable";
    } else {
      attempt.status = "succeeded";
      attempt.message = absl::StrJoin(found, "; ");
    }
    return absl::OkStatus();
  }

  // Every record of the whole log (all rows run so far on this column), paged; false when the
  // log could not be read.
  bool ReadWholeLog(std::vector<audit::v1::AuditRecord>* records) {
    records->clear();
    std::string page;
    do {
      audit::v1::QueryRequest request;
      request.set_page_token(page);
      request.set_limit(1000);
      audit::v1::QueryResponse response;
      grpc::Status status =
          deployment_.audit().Query(As(deployment_.admin_token()).get(), request, &response);
      if (!status.ok()) return false;
      for (audit::v1::AuditRecord& record : *response.mutable_records()) {
        records->push_back(std::move(record));
      }
      page = response.next_page_token();
    } while (!page.empty());
    return true;
  }

  // Row 36: a strict 1.0.0-preview reader reads back every record the system wrote on this
  // column (every row so far, both planes), once this row's finished turns are recorded: each
  // protocol "1" event must pass the "1" validation with a reference type and reference codes;
  // control-plane records are not "1" objects (docs/adr/0008) and are counted. The attack (a
  // record a "1" reader rejects) is refused when there is none.
  absl::Status StrictReader(RowRun& run, Attempt& attempt) {
    attempt.issued = true;
    std::set<std::string> want_ended;
    for (const auto& [n, turn] : run.turns) {
      if (turn.finished) want_ended.insert(turn.execution_id);
    }
    std::vector<audit::v1::AuditRecord> records;
    const absl::Time limit = absl::Now() + absl::Seconds(20);
    while (true) {
      const bool read = ReadWholeLog(&records);
      std::set<std::string> ended;
      for (const audit::v1::AuditRecord& record : records) {
        if (record.event().type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) {
          ended.insert(record.event().operation_id());
        }
      }
      if (read && std::includes(ended.begin(), ended.end(), want_ended.begin(), want_ended.end())) {
        break;
      }
      if (absl::Now() > limit) return absl::DeadlineExceededError("strict reader: log incomplete");
      absl::SleepFor(absl::Milliseconds(50));
    }
    std::vector<std::string> findings;
    int protocol_records = 0, control_plane_records = 0;
    for (const audit::v1::AuditRecord& record : records) {
      record.has_control_plane() ? ++control_plane_records : ++protocol_records;
      for (std::string& finding : testing::StrictReaderFindings(d_.vocabulary, record)) {
        findings.push_back(std::move(finding));
      }
    }
    // Nothing read of either kind would make the answer vacuous.
    if (protocol_records == 0) findings.push_back("no protocol \"1\" record to read");
    if (control_plane_records == 0) findings.push_back("no control-plane record to read");
    attempt.details = {
        {"records", {{"protocol1", protocol_records}, {"controlPlane", control_plane_records}}}};
    if (findings.empty()) {
      attempt.status = "denied";
      attempt.code = "no_record_rejected";
    } else {
      attempt.status = "succeeded";
      if (findings.size() > 10) findings.resize(10);
      attempt.message = absl::StrJoin(findings, "; ");
    }
    return absl::OkStatus();
  }

  // Row 33: the reviewer (the context's owner) approves the turn's escalation; the issued grant
  // is read back from the store and must hold exactly the denial's required authority, for the
  // agent, issued under the authority the escalated turn ran under (so the next turn with the
  // same context loads it), with the reviewer who decided on the escalation record.
  absl::Status Approve(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    const Turn& turn = run.turns[attempt.turn];
    std::optional<gv1::EscalationRecord> pending;
    // The envelope records the escalation in the grant store after the turn ends; after a grant
    // store outage (rows 12, 13) that delivery may still be backing off, so wait for it (bounded).
    const absl::Time limit = absl::Now() + absl::Seconds(15);
    while (true) {
      RETURN_IF_ERROR(
          StoredEscalation(deployment_, world_.Namespace(), turn.execution_id, &pending));
      if (pending.has_value() || absl::Now() > limit) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    attempt.issued = true;
    if (!pending.has_value() || pending->status() != gv1::ESCALATION_RECORD_STATUS_PENDING) {
      attempt.status = "failed";
      attempt.message = "no pending escalation for the turn";
      return absl::OkStatus();
    }
    // The escalation's reviewer is the turn's owner (alice, or bob in the tenancy rows).
    const pb::Address reviewer = turn.owner;
    const bool bob = capability::AddressEquals(reviewer, AddressOf(d_.world["bob"]));
    gv1::ResolveEscalationRequest resolve;
    resolve.set_escalation_id(pending->escalation_id());
    resolve.set_decision(gv1::ESCALATION_DECISION_APPROVE);
    *resolve.mutable_reviewer() = reviewer;
    resolve.set_grant_id(world_.GrantId("approved"));
    // Row 35: `as` names another caller than the reviewer (it must be refused, nothing issued).
    // Row T3: "issued-reviewer" is a reviewer credential the admin issues for the reviewer now,
    // whose secret the admin therefore knows: the record must say so.
    const std::string as = step.value("as", std::string("reviewer"));
    std::string token = bob ? deployment_.other_reviewer_token() : deployment_.reviewer_token();
    std::string issued_credential;
    if (as == "other-reviewer") {
      token = bob ? deployment_.reviewer_token() : deployment_.other_reviewer_token();
      resolve.clear_reviewer();
    } else if (as == "host") {
      token = deployment_.host_token();
    } else if (as == "admin") {
      token = deployment_.admin_token();  // an operator, not saying on whose behalf
      resolve.clear_reviewer();
    } else if (as == "issued-reviewer") {
      ASSIGN_OR_RETURN(std::tie(issued_credential, token), IssueReviewerCredential(reviewer, run));
    } else if (as != "reviewer") {
      return absl::InvalidArgumentError("approve: unknown as " + as);
    }
    gv1::ResolveEscalationResponse resolved;
    grpc::Status status =
        deployment_.grants().ResolveEscalation(As(token).get(), resolve, &resolved);
    if (!status.ok()) {
      attempt.status =
          "rpc:" +
          std::string(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())));
      attempt.message = status.error_message();
      std::optional<gv1::EscalationRecord> after;
      RETURN_IF_ERROR(StoredEscalation(deployment_, world_.Namespace(), turn.execution_id, &after));
      attempt.details = {
          {"stillPending",
           after.has_value() && after->status() == gv1::ESCALATION_RECORD_STATUS_PENDING}};
      return absl::OkStatus();
    }
    world_.Adopt(world_.GrantId("approved"));  // revoked when the next row is armed
    // What the store holds now: the grant, and the escalation record.
    gv1::GetGrantRequest get;
    get.set_namespace_id(world_.Namespace());
    get.set_grant_id(world_.GrantId("approved"));
    gv1::GetGrantResponse stored;
    status = deployment_.grants().GetGrant(As(deployment_.admin_token()).get(), get, &stored);
    if (!status.ok()) {
      attempt.status = "failed";
      attempt.message = "the approved grant cannot be read back";
      return absl::OkStatus();
    }
    std::optional<gv1::EscalationRecord> decided;
    RETURN_IF_ERROR(StoredEscalation(deployment_, world_.Namespace(), turn.execution_id, &decided));
    json required;
    for (const Attempt& other : run.attempts) {
      if (other.id == Str(step, "requestedAuthorityFrom") && other.details.is_object()) {
        required = other.details.value("requiredAuthority", json());
      }
    }
    pb::CapabilityRequest request;
    // A CLI shows its model the requirement's id only (C1): the stored escalation must name
    // that id, and its request is then the one the grant is held to.
    if (required.is_object() && !required.contains("capabilities") && pending.has_value() &&
        pending->escalation().requested_authority().id() == Str(required, "id")) {
      request = pending->escalation().requested_authority();
      required = json();
      absl::StatusOr<std::string> text = common::CanonicalProtoJson(request);
      if (text.ok()) required = json::parse(*text, nullptr, false);
    }
    if (required.is_null() || required.is_discarded() ||
        !google::protobuf::util::JsonStringToMessage(required.dump(), &request).ok()) {
      attempt.status = "failed";
      attempt.message = "the denial carried no required authority";
      return absl::OkStatus();
    }
    std::string have, want;
    for (const pb::Capability& capability : stored.grant().capabilities()) {
      have += capability.SerializeAsString();
    }
    // As requested, on the requester's owner's resources: an approval names that owner (the
    // reviewer) on every capability it issues (ADR 0014, T1).
    for (pb::Capability capability : request.capabilities()) {
      if (!capability.resource().has_owner()) {
        *capability.mutable_resource()->mutable_owner() = request.owner();
      }
      want += capability.SerializeAsString();
    }
    using capability::AddressEquals;
    using capability::AddressKey;
    const pb::Address authority = turn.authority;
    std::vector<std::string> wrong;
    if (have != want) wrong.push_back("its capabilities differ from the requested authority");
    if (!AddressEquals(stored.grant().subject(), AddressOf(d_.world["agent"]))) {
      wrong.push_back("its subject is not the agent");
    }
    if (!AddressEquals(stored.grant().issuer(), authority)) {
      wrong.push_back(absl::StrCat("its issuer is ", AddressKey(stored.grant().issuer()),
                                   ", not the turn's authority ", AddressKey(authority)));
    }
    if (!decided.has_value() || decided->status() != gv1::ESCALATION_RECORD_STATUS_APPROVED ||
        !AddressEquals(decided->reviewer(), reviewer) ||
        decided->grant_id() != stored.grant().id()) {
      wrong.push_back("the escalation record does not show the reviewer's approval and grant");
    }
    // Row T3: the decision names the credential and that its secret was the admin's to know.
    if (!issued_credential.empty() && decided.has_value()) {
      RETURN_IF_ERROR(CheckDecisionCredential(*decided, issued_credential, run, wrong));
    }
    if (wrong.empty()) {
      attempt.status = "succeeded";
      attempt.details = {{"grantId", stored.grant().id()},
                         {"issuer", AddressKey(stored.grant().issuer())},
                         {"reviewer", AddressKey(decided->reviewer())}};
      if (!issued_credential.empty()) {
        attempt.details["decidedWith"] = issued_credential;
        attempt.details["secretSetBy"] = AddressKey(decided->decided_with().secret_set_by());
      }
    } else {
      attempt.status = "failed";
      attempt.message = "the approved grant: " + absl::StrJoin(wrong, "; ");
    }
    return absl::OkStatus();
  }

  // Row T3: the admin issues `reviewer` a reviewer credential in the world's namespace and hands
  // over its id and secret, as an admin who wants to decide in the reviewer's name would.
  absl::StatusOr<std::pair<std::string, std::string>> IssueReviewerCredential(
      const pb::Address& reviewer, RowRun& run) {
    gv1::IssueCredentialRequest issue;
    issue.set_credential_id(
        absl::StrCat("cred-r", Pad(run.row["row"].get<int>()), "-", deployment_.column()));
    *issue.mutable_principal() = reviewer;
    issue.set_role(gv1::CREDENTIAL_ROLE_REVIEWER);
    issue.mutable_scope()->add_namespaces(world_.Namespace());
    gv1::IssueCredentialResponse issued;
    RETURN_IF_ERROR(FromGrpc(
        deployment_.grants().IssueCredential(As(deployment_.admin_token()).get(), issue, &issued)));
    return std::make_pair(issued.credential().credential_id(), issued.secret());
  }

  // The decision record, and its escalation.resolved record in the log, name the credential
  // decided with and that someone other than the decider (the admin) set its secret.
  absl::Status CheckDecisionCredential(const gv1::EscalationRecord& decided,
                                       const std::string& credential_id, RowRun& run,
                                       std::vector<std::string>& wrong) {
    const gv1::DecisionCredential& with = decided.decided_with();
    if (with.credential_id() != credential_id) {
      wrong.push_back("the escalation record does not name the credential decided with");
    }
    if (with.held_by_decider_alone() || !with.has_secret_set_by() ||
        capability::AddressEquals(with.secret_set_by(), decided.decided_by())) {
      wrong.push_back("the escalation record does not say the admin set the decider's secret");
    }
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_namespace_id(world_.Namespace());
    query.mutable_filter()->set_control_plane_type(
        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
    query.set_limit(1000);
    audit::v1::QueryResponse records;
    RETURN_IF_ERROR(
        FromGrpc(deployment_.audit().Query(As(deployment_.admin_token()).get(), query, &records)));
    bool recorded = false;
    for (const audit::v1::AuditRecord& record : records.records()) {
      const auto& fields = record.control_plane().metadata().fields();
      auto id = fields.find("escalationId");
      if (id == fields.end() || id->second.string_value() != decided.escalation_id()) continue;
      auto setter = fields.find("credentialSecretSetBy");
      auto alone = fields.find("credentialHeldByDeciderAlone");
      recorded = fields.count("credentialId") &&
                 fields.at("credentialId").string_value() == credential_id &&
                 setter != fields.end() &&
                 setter->second.string_value() != capability::AddressKey(decided.decided_by()) &&
                 alone != fields.end() && !alone->second.bool_value();
    }
    if (!recorded) {
      wrong.push_back("the escalation.resolved record does not name the credential and its setter");
    }
    return absl::OkStatus();
  }

  // Row 33: a call on the turn that escalated (it must not resume).
  absl::Status Resume(RowRun& run, const json& step) {
    Attempt& attempt = NewAttempt(run, step);
    const Turn& turn = run.turns[attempt.turn];
    if (mcp_) {
      // The harness seat: it still holds the ended turn's execution token, and tries a new
      // session with it. A token that no longer opens one is the refusal (401, never audited).
      absl::StatusOr<std::vector<std::string>> listed =
          mcp_->Connect(turn.mcp_url, turn.execution_token);
      if (!listed.ok()) {
        attempt.issued = true;
        attempt.status =
            absl::StrContains(listed.status().message(), "401")
                ? "rpc:UNAUTHENTICATED"
                : "rpc:" + std::string(absl::StatusCodeToString(listed.status().code()));
        attempt.message = std::string(listed.status().message());
        return absl::OkStatus();
      }
      McpCall(attempt, run.turns[attempt.turn], Substitute(step["arguments"], run));
      return mcp_->Close();
    }
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn.turn_id);
    request.mutable_call()->set_id(attempt.id);
    request.mutable_call()->set_tool(Str(step, "tool"));
    request.mutable_call()->set_trace_id(turn.trace_id);
    auto parsed = common::JsonToProtoStruct(Substitute(step["arguments"], run));
    if (!parsed.ok()) return parsed.status();
    *request.mutable_call()->mutable_arguments() = *parsed;
    *request.mutable_call()->mutable_requested_at() = Stamp(deployment_.Now());
    auto response = deployment_.host(broker_[attempt.turn]).InvokeTool(request);
    attempt.issued = true;
    if (response.ok()) {
      attempt.status = StatusName(response->result().status());
      attempt.code = response->result().error().code();
    } else {
      attempt.status = absl::StrCat("rpc:", absl::StatusCodeToString(response.status().code()));
      attempt.message = std::string(response.status().message());
    }
    return absl::OkStatus();
  }

  const Declarations& d_;
  Deployment& deployment_;
  WorldBuilder& world_;
  const std::string column_;
  McpClient* mcp_;
  std::map<int, bool> broker_;
  // Turn → its declared ending (from the open or the finish step).
  std::map<int, json> expect_turn_;
};

std::optional<Cell> Unrun(const json& row, const std::string& column,
                          const json& cli_columns = json()) {
  Cell cell;
  cell.column = column;
  for (const json& step : row["script"]) {
    if (step.contains("id")) ++cell.declared;
  }
  // A CLI that cannot be had here (cases.json cliColumns.unavailable); a row that does not apply
  // to the MCP columns (a CLI is an MCP harness); the rows a CLI column does not run
  // (cliColumns.notRun and onlyRows, each with its reason).
  if (cli_columns.is_object() && cli_columns.contains("unavailable") &&
      cli_columns["unavailable"].contains(column)) {
    cell.status = "not available";
    cell.detail = Str(cli_columns["unavailable"], column.c_str());
    return cell;
  }
  bool cli = false;
  if (cli_columns.is_object()) {
    for (const json& name : cli_columns.value("columns", json::array())) cli |= name == column;
  }
  if (cli && !row.contains("notImplemented")) {
    const json mcp = row.value("columns", json::object()).value("mcp-modern", json::object());
    if (mcp.contains("notApplicable")) {
      cell.status = "not applicable";
      cell.detail = Str(mcp, "notApplicable");
      return cell;
    }
    const json not_run = cli_columns.value("notRun", json::object());
    const std::string number = row["row"].dump();
    if (not_run.contains(number)) {
      cell.status = "not run";
      cell.detail = Str(not_run, number.c_str());
      return cell;
    }
    // A CLI too slow to start for every row in CI runs the rows listed (cliColumns.onlyRows).
    const json only = cli_columns.value("onlyRows", json::object()).value(column, json());
    if (only.is_object()) {
      bool listed = false;
      for (const json& listed_row : only.value("rows", json::array())) {
        listed |= listed_row == row["row"];
      }
      if (!listed) {
        cell.status = "not run";
        cell.detail = Str(only, "reason");
        return cell;
      }
    }
  }
  if (row.contains("notImplemented")) {
    cell.status = "not implemented";
    cell.detail = Str(row, "notImplemented");
    return cell;
  }
  if (row.contains("columns") && row["columns"].contains(column) &&
      row["columns"][column].contains("notImplemented")) {
    cell.status = "not implemented";
    cell.detail = Str(row["columns"][column], "notImplemented");
    return cell;
  }
  if (row.contains("columns") && row["columns"].contains(column) &&
      row["columns"][column].contains("notApplicable")) {
    cell.status = "not applicable";
    cell.detail = Str(row["columns"][column], "notApplicable");
    return cell;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Declarations> LoadDeclarations(const char* argv0) {
  Declarations d;
  ASSIGN_OR_RETURN(d.cases, ReadJson(testing::RunfilePath(kCasesPath, argv0)));
  ASSIGN_OR_RETURN(d.world, ReadJson(testing::RunfilePath(kWorldPath, argv0)));
  ASSIGN_OR_RETURN(d.vocabulary, testing::LoadReferenceVocabulary(argv0));
  d.registries = json::object();
  for (const json& path : d.world["registries"]) {
    ASSIGN_OR_RETURN(std::string text,
                     ReadText(testing::RunfilePath(path.get<std::string>(), argv0)));
    envelope::v1::ToolRegistryConfig config;
    if (!google::protobuf::TextFormat::ParseFromString(text, &config)) {
      return absl::InvalidArgumentError(absl::StrCat(path.get<std::string>(), ": not a registry"));
    }
    for (const envelope::v1::RegisteredTool& tool : config.tools()) {
      d.tool_names.push_back(tool.definition().name());
    }
    ASSIGN_OR_RETURN(std::string canonical, common::CanonicalProtoJson(config));
    d.registries[path.get<std::string>()] = json::parse(canonical);
  }
  // notion.search as the registry holds it (schemas parsed), which the fixture provider lists.
  std::vector<std::string> paths;
  for (const json& path : d.world["registries"]) {
    paths.push_back(testing::RunfilePath(path.get<std::string>(), argv0));
  }
  ASSIGN_OR_RETURN(auto registry, envelope::tools::ToolRegistry::LoadFiles(paths));
  for (const auto& tool : registry->tools()) {
    if (tool->name() == "notion.search") d.notion_definition = tool->definition();
  }
  d.case_set_hash = common::Sha256HexOfCanonicalJson(WithoutProse(d.cases));
  d.world_set_hash = common::Sha256HexOfCanonicalJson(
      json{{"world", WithoutProse(d.world)}, {"tools", d.registries}});
  return d;
}

absl::Status PrepareFiles(const Declarations& declarations, const std::string& root) {
  auto write_all = [&](const json& owner, const json& files) -> absl::Status {
    std::string base = root;
    const std::string key = KeyOf(owner);
    const std::string kind = key.substr(0, key.find(':'));
    const std::string id = key.substr(key.find(':') + 1);
    for (const std::string& part : {kind, id, std::string("workspace")}) {
      base += "/" + part;
      mkdir(base.c_str(), 0700);
    }
    for (auto it = files.begin(); it != files.end(); ++it) {
      std::vector<std::string> segments = absl::StrSplit(it.key(), '/');
      std::string dir = base;
      for (size_t i = 0; i + 1 < segments.size(); ++i) {
        dir += "/" + segments[i];
        mkdir(dir.c_str(), 0700);
      }
      RETURN_IF_ERROR(testing::WriteFile(base + "/" + it.key(), it.value().get<std::string>()));
    }
    return absl::OkStatus();
  };
  mkdir(root.c_str(), 0700);
  RETURN_IF_ERROR(write_all(declarations.world["owner"], declarations.world["files"]));
  return write_all(declarations.world["otherOwner"], declarations.world["otherOwnerFiles"]);
}

DeploymentOptions DeploymentOptionsFor(const Declarations& declarations, const std::string& dir,
                                       const std::string& files_root) {
  DeploymentOptions options;
  for (const json& path : declarations.world["registries"]) {
    options.registries.push_back(path.get<std::string>());
  }
  options.files_root = files_root;
  options.dir = dir;
  options.notion_definition = declarations.notion_definition;
  options.notion_provider_id = Str(declarations.world["broker"], "providerId");
  options.namespace_id = declarations.world["namespace"];
  options.owner_key = KeyOf(declarations.world["owner"]);
  return options;
}

std::vector<Cell> RunColumn(const Declarations& declarations, Deployment& deployment,
                            const std::string& column, McpClient* mcp) {
  std::vector<Cell> cells;
  WorldBuilder world(declarations, deployment);
  RowRunner runner(declarations, deployment, world, column, mcp);
  for (const json& row : declarations.cases["rows"]) {
    if (std::optional<Cell> cell =
            Unrun(row, column, declarations.cases.value("cliColumns", json()))) {
      cells.push_back(*cell);
      continue;
    }
    RowRun run = runner.Run(row);
    cells.push_back(Grade(run, deployment, column, world.Namespace(), mcp != nullptr));
  }
  return cells;
}

bool RunsOnColumn(const Declarations& declarations, const json& row, const std::string& column) {
  return !Unrun(row, column, declarations.cases.value("cliColumns", json())).has_value();
}

absl::StatusOr<std::vector<Cell>> CellsFromManifest(const Declarations& declarations,
                                                    const json& manifest,
                                                    const std::string& column) {
  std::map<int, Cell> by_row;
  bool found = false;
  for (const json& row : manifest.value("rows", json::array())) {
    for (const json& c : row.value("cells", json::array())) {
      if (Str(c, "columnId") != column) continue;
      found = true;
      Cell cell;
      cell.column = column;
      cell.status = Str(c, "status");
      cell.declared = c.value("declared", 0);
      cell.attempted = c.value("attempted", 0);
      for (const json& v : c.value("refusedBy", json::array())) cell.refused_by.insert(v);
      for (const json& v : c.value("reasonCodes", json::array())) cell.reason_codes.insert(v);
      cell.record_usable = c.value("recordUsable", false);
      for (const json& v : c.value("recordGaps", json::array())) cell.record_gaps.push_back(v);
      cell.detail = Str(c, "detail");
      for (const json& v : c.value("notes", json::array())) cell.notes.push_back(v);
      for (const json& o : c.value("observed", json::array())) {
        cell.observed.push_back({Str(o, "step"), Str(o, "observed")});
      }
      by_row[row["row"].get<int>()] = std::move(cell);
    }
  }
  if (!found) return absl::NotFoundError("the manifest has no column " + column);
  // In the declarations' order, as RunColumn answers them.
  std::vector<Cell> cells;
  for (const json& row : declarations.cases["rows"]) {
    auto it = by_row.find(row["row"].get<int>());
    if (it == by_row.end()) {
      return absl::NotFoundError(absl::StrCat("the manifest has no row ", row["row"].dump()));
    }
    cells.push_back(std::move(it->second));
  }
  return cells;
}

std::vector<Cell> UnrunColumn(const Declarations& declarations, const std::string& column,
                              const std::string& status, const std::string& detail) {
  std::vector<Cell> cells;
  for (const json& row : declarations.cases["rows"]) {
    if (std::optional<Cell> cell =
            Unrun(row, column, declarations.cases.value("cliColumns", json()))) {
      cells.push_back(*cell);
      continue;
    }
    Cell cell;
    cell.column = column;
    cell.status = status;
    cell.detail = detail;
    for (const json& step : row["script"]) {
      if (step.contains("id")) ++cell.declared;
    }
    cells.push_back(cell);
  }
  return cells;
}

Manifest BuildManifest(const Declarations& declarations,
                       const std::map<std::string, std::vector<Cell>>& cells) {
  Manifest manifest;
  const std::vector<std::string> columns = declarations.cases["columns"];
  json rows = json::array();
  std::map<std::string, std::map<std::string, int>> counts;  // column → status → n
  std::string table = "| # | case / condition |";
  std::string rule = "|---|---|";
  for (const std::string& column : columns) {
    table += " " + column + " |";
    rule += "---|";
  }
  table += "\n" + rule + "\n";
  std::string evidence;
  std::string unrun;  // the not applicable / not implemented cells, with their reasons
  // Rows in numeric order (the run order puts the outage rows last).
  std::vector<size_t> order(declarations.cases["rows"].size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return declarations.cases["rows"][a]["row"].get<int>() <
           declarations.cases["rows"][b]["row"].get<int>();
  });
  for (size_t index : order) {
    const json& row = declarations.cases["rows"][index];
    const int number = row["row"].get<int>();
    json out = {{"row", row["row"]},
                {"caseId", row["caseId"]},
                {"conditionId", row["conditionId"]},
                {"cells", json::array()}};
    table += absl::StrCat("| [", number, "](#row-", number, ") | ", Str(row, "caseId"), " / ",
                          Str(row, "conditionId"), " |");
    evidence += absl::StrCat("\n### Row ", number, "\n\n`", Str(row, "caseId"), "` / `",
                             Str(row, "conditionId"), "`");
    if (row.contains("prose")) {
      evidence += absl::StrCat(". Attack: ", Str(row["prose"], "attack"),
                               ". Expected: ", Str(row["prose"], "expected"));
    }
    evidence += ".\n\n";
    // Step → (column → observed), steps in the order the first column that ran met them.
    std::vector<std::string> steps;
    std::map<std::string, std::map<std::string, std::string>> observed;
    for (const std::string& column : columns) {
      auto it = cells.find(column);
      if (it == cells.end() || index >= it->second.size()) continue;
      const Cell& cell = it->second[index];
      ++counts[column][cell.status];
      json c = {{"columnId", column},
                {"status", cell.status},
                {"declared", cell.declared},
                {"attempted", cell.attempted},
                {"refusedBy",
                 json(std::vector<std::string>(cell.refused_by.begin(), cell.refused_by.end()))},
                {"reasonCodes", json(std::vector<std::string>(cell.reason_codes.begin(),
                                                              cell.reason_codes.end()))},
                {"recordUsable", cell.record_usable},
                {"recordGaps", cell.record_gaps}};
      if (!cell.detail.empty()) c["detail"] = cell.detail;
      if (!cell.notes.empty()) c["notes"] = cell.notes;
      json steps_json = json::array();
      for (const Cell::Observation& observation : cell.observed) {
        steps_json.push_back({{"step", observation.step}, {"observed", observation.observed}});
        if (!observed.count(observation.step)) steps.push_back(observation.step);
        observed[observation.step][column] = observation.observed;
      }
      if (!steps_json.empty()) c["observed"] = steps_json;
      out["cells"].push_back(c);
      table += " " + cell.status + " |";
      const bool ran = cell.status != "not applicable" && cell.status != "not implemented" &&
                       cell.status != "not run" && cell.status != "not available";
      if (!ran) {
        unrun += absl::StrCat("| ", number, " | ", column, " | ", cell.status, " | ", cell.detail,
                              " |\n");
      }
      evidence += absl::StrCat("- `", column, "` **", cell.status, "**");
      if (ran) {
        evidence +=
            absl::StrCat(" — attempts issued ", cell.attempted, " of ", cell.declared, " declared");
        if (!cell.refused_by.empty()) {
          evidence += "; refused by " + absl::StrJoin(cell.refused_by, ", ");
        }
        if (!cell.reason_codes.empty()) {
          evidence += "; codes `" + absl::StrJoin(cell.reason_codes, "`, `") + "`";
        }
        evidence += cell.record_usable ? "; record usable" : "; record NOT usable";
      }
      if (!cell.detail.empty()) evidence += (ran ? ". " : " — ") + cell.detail;
      if (!cell.notes.empty()) evidence += ". Observed: " + absl::StrJoin(cell.notes, "; ");
      evidence += "\n";
    }
    if (!steps.empty()) {
      evidence += "\n| step |";
      std::string step_rule = "|---|";
      for (const std::string& column : columns) {
        evidence += " " + column + " |";
        step_rule += "---|";
      }
      evidence += "\n" + step_rule + "\n";
      for (const std::string& step : steps) {
        evidence += "| " + step + " |";
        for (const std::string& column : columns) {
          auto it = observed[step].find(column);
          evidence += " " + (it == observed[step].end() ? std::string("—") : it->second) + " |";
        }
        evidence += "\n";
      }
    }
    table += "\n";
    rows.push_back(out);
  }
  manifest.json = {{"version", "1"},
                   {"judgeVersion", declarations.cases["judgeVersion"]},
                   {"caseSetHash", declarations.case_set_hash},
                   {"worldSetHash", declarations.world_set_hash},
                   {"clock", declarations.world["clock"]},
                   {"columns", columns},
                   {"rows", rows}};
  std::string summary =
      "| column | pass | pass (driver) | fail | not exercised | not applicable | "
      "not implemented | not run | not available |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string& column : columns) {
    summary += "| " + column + " |";
    for (const char* status : {"pass", "pass (driver)", "fail", "not exercised", "not applicable",
                               "not implemented", "not run", "not available"}) {
      summary += absl::StrCat(" ", counts[column][status], " |");
    }
    summary += "\n";
  }
  manifest.markdown = absl::StrCat(
      "# Conformance manifest\n\n"
      "Every row of the attack matrix (`../shared/conformance/cases.md`) on every way of "
      "reaching SharedOS, graded from what the system recorded: the answers the column received "
      "and the audit log read back through `AuditLog.Query` (source, cause, fail_closed, "
      "authority hash, one `turn.ended` per turn) — never from what the script expected of "
      "itself. Generated by `bazel run //tests/conformance:update_manifest` from "
      "`tests/conformance/cases.json` (the rows) and `tests/conformance/world.json` (the world); "
      "`//tests/conformance:conformance_test` fails when this file differs from a fresh run. Do "
      "not edit by hand. Machine-readable: `manifest.json` (same cells, same evidence).\n\n"
      "- Case-set hash: `",
      declarations.case_set_hash,
      "` (SHA-256 of the canonical JSON of cases.json without prose)\n"
      "- World-set hash: `",
      declarations.world_set_hash,
      "` (SHA-256 of the canonical JSON of world.json and every registered tool's full "
      "definition)\n"
      "- Judge version: ",
      declarations.cases["judgeVersion"].dump(),
      "\n\nTwo runs compare only when both hashes match: a different case-set hash means the "
      "rows or their expectations changed, a different world-set hash the grants, namespaces or "
      "tool definitions they run against.\n\n"
      "## Summary\n\n",
      summary, "\n## Grades\n\n", table,
      "\n## How to read a cell\n\n"
      "| grade | meaning | in CI |\n|---|---|---|\n"
      "| `pass` | every attack met its expected refusal (status, reason code, boundary, cause) "
      "and every control succeeded, and the record is usable | ok |\n"
      "| `pass (driver)` | a pass whose attack only the column's driver can issue (row 17: only "
      "a driver declares steps) | ok |\n"
      "| `fail` | an attack got through, was refused with the wrong code or by the wrong boundary, "
      "a turn ended otherwise than declared, or the audit record is not usable | breaks the "
      "build |\n"
      "| `not exercised` | an attempt never reached the system, a control failed (the world was "
      "not as declared), or the harness erred — never a pass | breaks the build |\n"
      "| `not applicable` | the column structurally cannot make the attempt; the reason is "
      "given below | ok |\n"
      "| `not implemented` | SharedOS lacks the capability the row needs, named below; the row is "
      "declared so the gap stays visible and is never run | ok only with the capability "
      "named |\n"
      "| `not run` | a CLI column (`claude-code`, `codex`, `gemini-cli`, `opencode`, `pi`) does "
      "not run the row in CI; the reason is given below — the MCP columns run it through the "
      "same door | ok only with the reason named |\n"
      "| `not available` | the column's CLI cannot be installed or run here; the reason is given "
      "below | ok only with the reason named |\n\n"
      "Each row's evidence lists, per column: attempts issued of declared (an attempt the column "
      "cannot make, e.g. a tool an MCP client refuses to call because tools/list did not offer "
      "it, counts as declared, not issued); the boundary that refused (`kernel`: the authorizer's "
      "decision; `envelope`: the catalogue, budgets or turn state, before any decision); the "
      "reason codes answered; whether the record is usable (every issued call has exactly one "
      "`tool.invoked` agreeing with its answer, with source, cause on `tool_unavailable`, "
      "authority hash, and each turn exactly one `turn.ended`); then a table of what every step "
      "observed — the answer, and for a refusal the audited boundary and cause.\n\n"
      "### Cells not run\n\n| # | column | grade | reason |\n|---|---|---|---|\n",
      unrun,
      "\n## How to reproduce\n\n"
      "```sh\n"
      "bazel test //tests/conformance:conformance_test       # every column; the run's manifest "
      "is in bazel-testlogs/tests/conformance/conformance_test/test.outputs/outputs.zip\n"
      "bazel run  //tests/conformance:update_manifest        # rewrites this file; prints the "
      "cells that break the build and the scratch directory it kept\n"
      "bazel test //tests/conformance:negative_control_test  # the grader fails where a "
      "guarantee is broken on purpose\n"
      "```\n\n"
      "`update_manifest` keeps its scratch directory (printed): one directory per column with "
      "the audit database (`audit.db`), the grant store (`grantstore.db`) and the world's files, "
      "for reading a row's record after the fact. Every turn runs under its own trace "
      "`trace-conformance-r<row>-t<turn>` and execution id `exec-r<row>-t<turn>`; a row's grants "
      "are `r<row>-<id>` of world.json (revoked when the next row is armed).\n\n"
      "- Clock: `kernel` runs on a simulated world clock armed at 2026-08-18T09:00:00Z, moved "
      "1 s per declared step; `grpc` and the MCP columns run real processes on the real clock, "
      "with the world's instants (issuedAt, expiresAt) declared relative to each row's arming "
      "(the world-set hash is over those declarations).\n"
      "- Outages: `kernel` injects them into the authorizer's grant-store client (usage counting "
      "only, or the whole store); `grpc` and the MCP columns stop the grantstore_svc process "
      "(usage counting lives in it) and restart it on the same port and database.\n"
      "- `grpc-replicated` is the `grpc` column against two replicas of every service on one "
      "PostgreSQL database (a cluster the test starts with initdb): the host and every service "
      "reach a service's replicas through one round-robin target, so a turn's calls alternate "
      "between the envelope replica that owns it and the one that forwards them (ADR 0011); the "
      "world's messages (inboxes, route leases, requests awaiting replies) live at one envelope "
      "replica, which the other reaches (ADR 0013); its outages stop both grant store "
      "replicas.\n"
      "- Row 19's over-broad child is planted in the grant store's database directly: IssueGrant "
      "refuses a parent and DeriveGrant refuses widening, so the control plane cannot create it.\n"
      "- Escalations (rows 31, 33, 35, 44, 46): the host passes the denial's required authority "
      "(gRPC: `error.details.requiredAuthority`; MCP: `_meta[\"sharedos/requiredAuthority\"]`; "
      "a CLI column, whose host never sees the call's result and whose CLI showed its model the "
      "requirement's id only: the authority described under that id in `GetTurn`'s "
      "`described_authorities`) to `FinishTurn(escalate)`; row 33's approval is made by "
      "world.json's reviewer, the context "
      "owner, and the issued grant must be exactly the requested capability, for the agent, "
      "issued under the escalated turn's authority.\n"
      "- The MCP columns drive the official clients (`@modelcontextprotocol/sdk` v1, "
      "`@modelcontextprotocol/client` v2) through `tests/conformance/mcp_driver.mjs`; the turn is "
      "opened and finished by the host over gRPC.\n"
      "- The CLI columns (issue 35) run real agent CLIs installed from `package-lock.json` — "
      "`claude-code` (Claude Code), `codex` (Codex), `gemini-cli` (Gemini CLI), `opencode` "
      "(opencode), `pi` (Pi with `envelope_svc/mcp/pi/sharedos_mcp.ts`) — one launch per turn, "
      "each configured from `sharedosctl mcp-config --cli=…` verbatim and driven by the scripted "
      "model server `tests/cli/scripted_model.mjs` in a network namespace with loopback only. A "
      "call's answer is what the CLI showed its model (a refusal counts only when SharedOS's "
      "refusal sentence, naming the code, reached the model); a name the CLI did not offer its "
      "model is refused by the CLI's own router (structurally unreachable). The host finishes "
      "each turn with `harness_exited` after the CLI exits.\n"
      "\n## Evidence\n",
      evidence);
  return manifest;
}

std::vector<std::string> BuildBreakers(const Declarations& declarations,
                                       const std::map<std::string, std::vector<Cell>>& cells) {
  std::vector<std::string> breakers;
  for (const auto& [column, column_cells] : cells) {
    for (size_t i = 0; i < column_cells.size(); ++i) {
      const Cell& cell = column_cells[i];
      const json& row = declarations.cases["rows"][i];
      const bool bad = cell.status == "fail" || cell.status == "not exercised" ||
                       ((cell.status == "not implemented" || cell.status == "not applicable" ||
                         cell.status == "not run" || cell.status == "not available") &&
                        cell.detail.empty());
      if (bad) {
        breakers.push_back(absl::StrCat("row ", row["row"].get<int>(), " ", column, ": ",
                                        cell.status, " (", cell.detail, ")"));
      }
    }
  }
  return breakers;
}

}  // namespace sharedos::conformance
