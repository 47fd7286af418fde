#include "common/server/probe_server.h"

#include <future>
#include <utility>

#include "grpcpp/generic/generic_stub.h"

namespace sharedos::common::server::testing {

class ProbeServer::Service : public grpc::CallbackGenericService {
 public:
  explicit Service(ProbeServer::Handler handler) : handler_(std::move(handler)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new Reactor(handler_(*context));
  }

 private:
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(const grpc::Status& status) { Finish(status); }
    void OnDone() override { delete this; }
  };

  const ProbeServer::Handler handler_;
};

ProbeServer::ProbeServer(Handler handler) : ProbeServer(std::move(handler), 0) {}

ProbeServer::ProbeServer(Handler handler, int port)
    : service_(std::make_unique<Service>(std::move(handler))) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                           &port_);
  builder.RegisterCallbackGenericService(service_.get());
  server_ = builder.BuildAndStart();
}

ProbeServer::~ProbeServer() {
  if (server_ != nullptr) server_->Shutdown();
}

grpc::Status ProbeServer::Call(const std::string& authorization, const std::string& key,
                               std::string* trailer) {
  grpc::ClientContext context;
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
  return Call(&context, key, trailer);
}

grpc::Status ProbeServer::Call(grpc::ClientContext* context, const std::string& key,
                               std::string* trailer) {
  trailer->clear();
  if (server_ == nullptr) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "probe not started");
  grpc::GenericStub stub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                             grpc::InsecureChannelCredentials()));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(context, "/probe.Probe/Call", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  grpc::Status status = done.get_future().get();
  auto it = context->GetServerTrailingMetadata().find(key);
  if (it != context->GetServerTrailingMetadata().end()) {
    trailer->assign(it->second.data(), it->second.size());
  }
  return status;
}

}  // namespace sharedos::common::server::testing
