#include "audit_svc/server/witness_endpoint.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace sharedos::audit::server {
namespace {

void Answer(common::http::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kAborted:
      return 409;
    default:
      return 503;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<WitnessEndpoint>> WitnessEndpoint::Start(
    core::Witness& witness, const WitnessEndpointOptions& options) {
  absl::StatusOr<std::shared_ptr<common::server::KeyPairWatcher>> key_pair =
      common::server::HttpListenerKeyPair(options.tls, options.host, "--witness_host",
                                          "the witness");
  if (!key_pair.ok()) return key_pair.status();
  common::http::BoundedHttpServer::Options http;
  http.host = options.host;
  http.port = options.port;
  http.tls = *std::move(key_pair);
  http.max_body_bytes = core::kMaxWitnessBodyBytes;
  http.max_connections = 64;
  http.max_connections_per_address = 8;
  http.handler_threads = 2;
  http.max_queued_requests = 64;
  absl::StatusOr<std::unique_ptr<common::http::BoundedHttpServer>> bound =
      common::http::BoundedHttpServer::Bind(std::move(http));
  if (!bound.ok()) {
    if (bound.status().code() == absl::StatusCode::kInvalidArgument) return bound.status();
    return absl::UnavailableError(
        absl::StrCat("--witness_port: cannot listen on ", options.host, ":", options.port));
  }
  core::Witness* target = &witness;
  (*bound)->Route("POST", kWitnessPath,
                  [target](const common::http::Request& request, common::http::Response& response) {
                    absl::StatusOr<core::Witness::Receipt> receipt = target->Receive(request.body);
                    if (!receipt.ok()) {
                      Answer(response, HttpStatusOf(receipt.status()),
                             {{"error", std::string(receipt.status().message())}});
                      return;
                    }
                    nlohmann::json body = {{"accepted", true}, {"recorded", receipt->recorded}};
                    if (receipt->recorded) body["recordSequence"] = receipt->record_sequence;
                    Answer(response, 200, body);
                  });
  (*bound)->SetErrorBody(R"({"error":"internal error"})", "application/json");
  const std::string url = absl::StrCat(options.tls.enabled() ? "https://" : "http://",
                                       options.host.find(':') != std::string::npos
                                           ? absl::StrCat("[", options.host, "]")
                                           : options.host,
                                       ":", (*bound)->port(), kWitnessPath);
  (*bound)->Start();
  return std::unique_ptr<WitnessEndpoint>(new WitnessEndpoint(*std::move(bound), url));
}

WitnessEndpoint::~WitnessEndpoint() { http_->Stop(); }

}  // namespace sharedos::audit::server
