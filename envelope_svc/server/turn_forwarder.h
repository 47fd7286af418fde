// Envelope replicas by forwarding (issue 18, ADR 0011): a turn lives in the memory of the
// replica that opened it (its owner, named in the turn id: "turn-<replica>.<uuid>"); a per-turn
// call that reaches another replica is forwarded, once, to the owner — gRPC Envelope calls with
// the caller's credential and trace, MCP front-door requests (the execution token names the
// turn) proxied whole to the owner's MCP URL. The one place forwarding happens: the gRPC adapter
// (envelope_service.h) and the MCP front door (mcp_server.h) only ask it. The host's
// MessageRoutes calls, which name a world rather than a turn, go the same way to the replica that
// homes the world's messaging (ServeWorld, ADR 0013).
//
// Rules:
//   - A turn id without a replica name, or naming this replica, is served here.
//   - A call that already carries the forwarding marker (kForwardedHeader) is never forwarded
//     again: a turn this replica does not own answers NOT_FOUND (gRPC) / 401 (MCP, as any token
//     of a turn not held), so no call loops.
//   - A turn id naming a replica that is not among the peers: NOT_FOUND (no replica holds it).
//   - The owner unreachable: UNAVAILABLE "… owner replica <name> unreachable …" (gRPC) or 503
//     with a JSON-RPC error whose data code is authority_unavailable (MCP), fail closed: nothing
//     was done, nothing is allowed. The owner ends its turns itself when it starts again (ADR
//     0009); one that never returns has its turns end at their lease's expiry.
// Thread-safe (channels and stubs are; the rest is immutable after Create).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_TURN_FORWARDER_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_TURN_FORWARDER_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/client/channel.h"
#include "common/http/bounded_http_server.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/sync_stream.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"

namespace sharedos::envelope::server {

// The marker a forwarded call carries (gRPC metadata and HTTP header alike); its value is the
// forwarding replica's name.
inline constexpr char kForwardedHeader[] = "x-sharedos-forwarded";
// The longest replica name (the turn id bound of 256 keeps room for "turn-", ".", a UUID).
inline constexpr size_t kMaxReplicaNameLength = 32;

// A replica name: 1..32 of [a-z0-9-]. Errors: INVALID_ARGUMENT "<flag>: …".
absl::Status CheckReplicaName(absl::string_view name, absl::string_view flag);

// The replica a turn id names ("turn-<replica>.<uuid>"), or "" for a turn id of one replica.
std::string TurnOwner(absl::string_view turn_id);

// --replica_peers / --replica_mcp_peers values: <name>=<address>, each name once and valid.
// Errors: INVALID_ARGUMENT "<flag>: …".
absl::StatusOr<std::map<std::string, std::string>> ParseReplicaPeers(
    const std::vector<std::string>& values, absl::string_view flag);

struct ReplicaOptions {
  // This replica's name (CheckReplicaName); empty: one replica, no forwarding.
  std::string name;
  // The other replicas: name → gRPC host:port, and name → MCP URL (".../mcp"). An entry naming
  // this replica is ignored, so every replica may be given the same lists.
  std::map<std::string, std::string> peers;
  std::map<std::string, std::string> mcp_peers;
  // How the channels to peers verify them (the envelope's client TLS flags); its CA also
  // verifies an https MCP peer.
  common::client::ChannelTls tls;
  // The service credential this replica presents to its peers' MessageTransport service (the
  // built-in messaging shared across replicas, ADR 0013; --replica_token_file). Required with
  // peers and the built-in messaging.
  std::string token;
  // Deadline of a forwarded MCP request (a gRPC call keeps its caller's deadline).
  int mcp_timeout_seconds = 60;
};

class TurnForwarder {
 public:
  // Errors: INVALID_ARGUMENT naming the flag (--replica_name, --replica_peers,
  // --replica_mcp_peers: a bad name, a peer without a name; those of client::NewChannel).
  static absl::StatusOr<std::unique_ptr<TurnForwarder>> Create(ReplicaOptions options);

  const std::string& name() const { return options_.name; }

  // Where a call of `turn_id` goes: served here, forwarded to the owner, or NOT_FOUND.
  enum class Route { kLocal, kForward, kNotFound };
  Route RouteOf(absl::string_view turn_id, bool forwarded) const;

  // A unary per-turn RPC: `local()` when the turn is served here, else the same request sent
  // to the owner through `method` of its stub with the caller's credential, deadline and trace
  // (and the marker). With no forwarder (one replica): `local()`.
  template <typename Request, typename Response, typename Local>
  static absl::StatusOr<Response> Serve(
      const TurnForwarder* forwarder, const grpc::ServerContext& context, const Request& request,
      grpc::Status (v1::Envelope::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
      Local&& local) {
    if (forwarder == nullptr) return local();
    switch (forwarder->RouteOf(request.turn_id(), Forwarded(context))) {
      case Route::kLocal:
        return local();
      case Route::kNotFound:
        return NotHeld(request.turn_id());
      case Route::kForward:
        break;
    }
    const std::string owner = TurnOwner(request.turn_id());
    grpc::ClientContext client;
    forwarder->Prepare(owner, context, client);
    Response response;
    const grpc::Status status = (forwarder->peer(owner).*method)(&client, request, &response);
    if (!status.ok()) return forwarder->Failed(owner, status);
    return response;
  }

  // This replica's name and every peer's (the set a world's messaging home is chosen from,
  // replicated_transport.h WorldHome).
  const std::vector<std::string>& replicas() const { return replicas_; }
  // The gRPC channel to peer `name` (one of replicas(), not this one).
  std::shared_ptr<grpc::Channel> channel(const std::string& name) const {
    return channels_.at(name);
  }

  // A MessageRoutes call of a world whose messaging lives at replica `home` (ADR 0013):
  // `local()` when `home` is this replica, when the call is itself forwarded (no loops), or with
  // no forwarder; else the same request sent to `home` through `method` of its MessageRoutes
  // stub, with the caller's credential, deadline and trace (and the marker). `home` unreachable:
  // UNAVAILABLE "the world's messaging replica <home> is unreachable (fail closed: nothing was
  // done); retry".
  template <typename Request, typename Response, typename Local>
  static absl::StatusOr<Response> ServeWorld(const TurnForwarder* forwarder,
                                             const grpc::ServerContext& context,
                                             const std::string& home, const Request& request,
                                             grpc::Status (v1::MessageRoutes::Stub::*method)(
                                                 grpc::ClientContext*, const Request&, Response*),
                                             Local&& local) {
    if (forwarder == nullptr || home == forwarder->name() || Forwarded(context) ||
        forwarder->routes_.count(home) == 0) {
      return local();
    }
    grpc::ClientContext client;
    forwarder->Prepare(home, context, client);
    Response response;
    const grpc::Status status =
        (forwarder->routes_.at(home).get()->*method)(&client, request, &response);
    if (!status.ok()) return forwarder->Failed(home, status, kWorldHome);
    return response;
  }

  // WatchTurn of a turn owned elsewhere: the owner's stream relayed to `writer`. Call only when
  // RouteOf is kForward.
  grpc::Status RelayWatch(const grpc::ServerContext& context, const v1::WatchTurnRequest& request,
                          grpc::ServerWriter<v1::WatchTurnResponse>& writer) const;

  // The MCP front door's hook (McpServer::Options::forward): when the turn `turn_id` (from a
  // verified execution token) is owned by another replica and `request` is not itself
  // forwarded, proxies it whole to the owner's MCP URL, fills `response` and answers true; else
  // false (served here).
  bool ProxyMcp(const std::string& turn_id, const common::http::Request& request,
                common::http::Response& response) const;

  // Whether a gRPC call carries the marker.
  static bool Forwarded(const grpc::ServerContext& context);

 private:
  explicit TurnForwarder(ReplicaOptions options) : options_(std::move(options)) {}

  static absl::Status NotHeld(absl::string_view turn_id);
  // The caller's credential and deadline, the marker; first gives the owner's channel, when it
  // is not connected (the owner just restarted, or is down), up to kConnectWait (within the
  // caller's deadline) to connect: a returning owner is reached at once, one still down fails
  // fast after that.
  void Prepare(const std::string& owner, const grpc::ServerContext& context,
               grpc::ClientContext& client) const;
  // What a forwarded call was sent to, for Failed's words.
  enum Target { kTurnOwner, kWorldHome };
  // A forwarded call's failure: the owner's own answer as it is, UNAVAILABLE when it cannot be
  // reached (logged, without the request).
  absl::Status Failed(const std::string& owner, const grpc::Status& status,
                      Target target = kTurnOwner) const;
  v1::Envelope::Stub& peer(const std::string& owner) const { return *stubs_.at(owner); }

  const ReplicaOptions options_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
  std::map<std::string, std::unique_ptr<v1::Envelope::Stub>> stubs_;
  std::map<std::string, std::unique_ptr<v1::MessageRoutes::Stub>> routes_;
  // options_.name, then every peer's name.
  std::vector<std::string> replicas_;
};

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_TURN_FORWARDER_H_
