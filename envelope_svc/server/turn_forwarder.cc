#include "envelope_svc/server/turn_forwarder.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "capability/reason_codes.h"
#include "common/json/json_nesting.h"
#include "common/logging/log.h"

namespace sharedos::envelope::server {
namespace {

namespace logging = ::sharedos::common::logging;

constexpr absl::string_view kTurnPrefix = "turn-";
// How long a forwarded call waits for an unconnected owner's channel, and how far apart the
// channel's attempts to reach a peer that was down may grow.
constexpr std::chrono::milliseconds kConnectWait(1500);
constexpr absl::Duration kMaxReconnectBackoff = absl::Seconds(1);

// The request headers an MCP request keeps on its way to the owner (the Origin was checked
// here; the owner checks the token again).
constexpr const char* kProxiedRequestHeaders[] = {
    "Authorization", "Accept",   "Content-Type", "MCP-Protocol-Version",
    "Mcp-Method",    "Mcp-Name", "Last-Event-ID"};
// The response headers the owner's answer keeps.
constexpr const char* kProxiedResponseHeaders[] = {"Content-Type", "WWW-Authenticate",
                                                   "Cache-Control", "Allow"};

bool IsReplicaChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

void LogUnreachable(absl::string_view owner, absl::string_view via, absl::string_view detail) {
  logging::Log(logging::Level::kWarning, "replica.owner_unreachable", "",
               {{"owner", owner}, {"via", via}, {"detail", detail}});
}

}  // namespace

absl::Status CheckReplicaName(absl::string_view name, absl::string_view flag) {
  if (name.empty() || name.size() > kMaxReplicaNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": a replica name is 1..", kMaxReplicaNameLength, " characters"));
  }
  for (char c : name) {
    if (!IsReplicaChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": a replica name is made of [a-z0-9-] (got \"", name, "\")"));
    }
  }
  return absl::OkStatus();
}

std::string TurnOwner(absl::string_view turn_id) {
  if (!absl::ConsumePrefix(&turn_id, kTurnPrefix)) return "";
  const size_t dot = turn_id.find('.');
  if (dot == absl::string_view::npos) return "";
  return std::string(turn_id.substr(0, dot));
}

absl::StatusOr<std::map<std::string, std::string>> ParseReplicaPeers(
    const std::vector<std::string>& values, absl::string_view flag) {
  std::map<std::string, std::string> peers;
  for (const std::string& value : values) {
    std::vector<std::string> parts = absl::StrSplit(value, absl::MaxSplits('=', 1));
    if (parts.size() != 2 || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": \"", value, "\" is not <name>=<address>"));
    }
    if (absl::Status name = CheckReplicaName(parts[0], flag); !name.ok()) return name;
    if (!peers.emplace(parts[0], parts[1]).second) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", parts[0], "\" given twice"));
    }
  }
  return peers;
}

absl::StatusOr<std::unique_ptr<TurnForwarder>> TurnForwarder::Create(ReplicaOptions options) {
  if (absl::Status name = CheckReplicaName(options.name, "--replica_name"); !name.ok()) {
    return name;
  }
  options.peers.erase(options.name);
  options.mcp_peers.erase(options.name);
  for (const auto& [name, url] : options.mcp_peers) {
    if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
      return absl::InvalidArgumentError(absl::StrCat("--replica_mcp_peers: ", name,
                                                     "'s URL must start with http:// or https://"));
    }
  }
  std::unique_ptr<TurnForwarder> forwarder(new TurnForwarder(std::move(options)));
  forwarder->replicas_.push_back(forwarder->options_.name);
  for (const auto& [name, target] : forwarder->options_.peers) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = common::client::NewChannel(
        target, forwarder->options_.tls, "--replica_peers", kMaxReconnectBackoff);
    if (!channel.ok()) return channel.status();
    forwarder->stubs_[name] = v1::Envelope::NewStub(*channel);
    forwarder->routes_[name] = v1::MessageRoutes::NewStub(*channel);
    forwarder->replicas_.push_back(name);
    forwarder->channels_[name] = *std::move(channel);
  }
  return forwarder;
}

TurnForwarder::Route TurnForwarder::RouteOf(absl::string_view turn_id, bool forwarded) const {
  const std::string owner = TurnOwner(turn_id);
  if (owner.empty() || owner == options_.name) return Route::kLocal;
  if (forwarded || stubs_.count(owner) == 0) return Route::kNotFound;
  return Route::kForward;
}

bool TurnForwarder::Forwarded(const grpc::ServerContext& context) {
  return context.client_metadata().find(kForwardedHeader) != context.client_metadata().end();
}

absl::Status TurnForwarder::NotHeld(absl::string_view turn_id) {
  // The engine's own words for a turn it does not hold.
  return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
}

void TurnForwarder::Prepare(const std::string& owner, const grpc::ServerContext& context,
                            grpc::ClientContext& client) const {
  const std::shared_ptr<grpc::Channel>& channel = channels_.at(owner);
  if (channel->GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_READY) {
    channel->WaitForConnected(
        std::min(context.deadline(), std::chrono::system_clock::now() + kConnectWait));
  }
  // The caller's credential goes with the call: the owner authenticates and scopes it again.
  // The trace goes by the channel's interceptor (the thread serves the traced call).
  const auto& metadata = context.client_metadata();
  for (auto it = metadata.find("authorization");
       it != metadata.end() && it->first == "authorization"; ++it) {
    client.AddMetadata("authorization", std::string(it->second.data(), it->second.size()));
  }
  client.AddMetadata(kForwardedHeader, options_.name);
  if (context.deadline() != std::chrono::system_clock::time_point::max()) {
    client.set_deadline(context.deadline());
  }
}

absl::Status TurnForwarder::Failed(const std::string& owner, const grpc::Status& status,
                                   Target target) const {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return common::FromGrpcStatus(status);
  LogUnreachable(owner, target == kWorldHome ? "grpc-messaging" : "grpc", status.error_message());
  if (target == kWorldHome) {
    return absl::UnavailableError(absl::StrCat("the world's messaging replica ", owner,
                                               " is unreachable (fail closed: nothing was done); "
                                               "retry"));
  }
  return absl::UnavailableError(absl::StrCat("the turn's owner replica ", owner,
                                             " is unreachable (", capability::kAuthorityUnavailable,
                                             ", fail closed: nothing was done); retry"));
}

grpc::Status TurnForwarder::RelayWatch(const grpc::ServerContext& context,
                                       const v1::WatchTurnRequest& request,
                                       grpc::ServerWriter<v1::WatchTurnResponse>& writer) const {
  const std::string owner = TurnOwner(request.turn_id());
  grpc::ClientContext client;
  Prepare(owner, context, client);
  std::unique_ptr<grpc::ClientReader<v1::WatchTurnResponse>> reader =
      peer(owner).WatchTurn(&client, request);
  v1::WatchTurnResponse event;
  while (reader->Read(&event)) {
    if (!writer.Write(event)) {
      client.TryCancel();
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (status.ok() || status.error_code() == grpc::StatusCode::CANCELLED) return status;
  return common::ToGrpcStatus(Failed(owner, status));
}

bool TurnForwarder::ProxyMcp(const std::string& turn_id, const common::http::Request& request,
                             common::http::Response& response) const {
  const std::string owner = TurnOwner(turn_id);
  if (owner.empty() || owner == options_.name || request.has_header("X-SharedOS-Forwarded")) {
    return false;
  }
  auto peer = options_.mcp_peers.find(owner);
  if (peer == options_.mcp_peers.end()) return false;  // Not held anywhere: 401 here.
  const std::string& url = peer->second;
  const size_t authority = url.find("://") + 3;
  const size_t slash = url.find('/', authority);
  const std::string origin = slash == std::string::npos ? url : url.substr(0, slash);
  std::string path = slash == std::string::npos ? "/mcp" : url.substr(slash);
  if (const size_t query = request.target.find('?'); query != std::string::npos) {
    absl::StrAppend(&path, request.target.substr(query));
  }

  httplib::Client client(origin);
  if (absl::StartsWith(origin, "https://")) {
    client.enable_server_certificate_verification(true);
    if (!options_.tls.ca_file.empty()) client.set_ca_cert_path(options_.tls.ca_file);
  }
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(options_.mcp_timeout_seconds, 0);
  client.set_write_timeout(options_.mcp_timeout_seconds, 0);
  httplib::Headers headers;
  for (const char* name : kProxiedRequestHeaders) {
    if (request.has_header(name)) headers.emplace(name, request.get_header_value(name));
  }
  headers.emplace("X-SharedOS-Forwarded", options_.name);
  const std::string content_type = request.has_header("Content-Type")
                                       ? request.get_header_value("Content-Type")
                                       : "application/json";
  httplib::Result answered = client.Post(path, headers, request.body, content_type);
  if (!answered) {
    LogUnreachable(owner, "mcp", httplib::to_string(answered.error()));
    // Fail closed, and say so in the reference's words: nothing was done at the owner.
    nlohmann::json id = nullptr;
    // The body has not been parsed yet here: bounded before the recursive parser sees it.
    if (common::CheckJsonNesting(request.body, "body").ok()) {
      const nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      if (body.is_object() && body.contains("id")) id = body["id"];
    }
    const nlohmann::json error = {
        {"jsonrpc", "2.0"},
        {"id", id},
        {"error",
         {{"code", -32000},
          {"message", absl::StrCat("the turn's owner replica ", owner, " is unreachable")},
          {"data",
           {{"code", std::string(capability::kAuthorityUnavailable)},
            {"failClosed", true},
            {"retryable", true}}}}}};
    response.status = 503;
    response.set_header("Retry-After", "1");
    response.set_content(error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                         "application/json");
    return true;
  }
  response.status = answered->status;
  for (const char* name : kProxiedResponseHeaders) {
    if (name == std::string("Content-Type")) continue;
    if (answered->has_header(name)) response.set_header(name, answered->get_header_value(name));
  }
  const std::string answered_type = answered->has_header("Content-Type")
                                        ? answered->get_header_value("Content-Type")
                                        : "application/json";
  response.set_content(answered->body, answered_type);
  return true;
}

}  // namespace sharedos::envelope::server
