#include "common/server/service_main.h"

#include <cstdio>
#include <memory>

#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/secret_file.h"

namespace sharedos::common::server {
namespace {

ABSL_CONST_INIT absl::Mutex help_mu(absl::kConstInit);
// The running binary's help texts; set once, before the command line is parsed.
std::map<std::string, std::string>* help_texts ABSL_GUARDED_BY(help_mu) = nullptr;

// A Servable and the dependencies its main named.
class WithDependenciesServable : public Servable {
 public:
  WithDependenciesServable(std::unique_ptr<Servable> servable,
                           std::vector<DependencyCheck> dependencies, StatusInfo status)
      : servable_(std::move(servable)),
        dependencies_(std::move(dependencies)),
        status_(std::move(status)) {}

  std::vector<grpc::Service*> services() override { return servable_->services(); }
  std::vector<std::pair<std::string, std::string>> side_listeners() const override {
    return servable_->side_listeners();
  }
  void StopSideListeners() override { servable_->StopSideListeners(); }
  void Drain() override { servable_->Drain(); }
  std::vector<DependencyCheck> dependencies() override {
    std::vector<DependencyCheck> all = servable_->dependencies();
    all.insert(all.end(), dependencies_.begin(), dependencies_.end());
    return all;
  }
  StatusInfo status_info() override { return status_; }

 private:
  std::unique_ptr<Servable> servable_;
  std::vector<DependencyCheck> dependencies_;
  StatusInfo status_;
};

}  // namespace

std::unique_ptr<Servable> WithDependencies(std::unique_ptr<Servable> servable,
                                           std::vector<DependencyCheck> dependencies,
                                           StatusInfo status) {
  return std::make_unique<WithDependenciesServable>(std::move(servable), std::move(dependencies),
                                                    std::move(status));
}

void ParseServiceCommandLine(int argc, char** argv, const ServiceBinary& binary) {
  TerminationSignals::Block();
  {
    absl::MutexLock lock(&help_mu);
    delete help_texts;
    help_texts = new std::map<std::string, std::string>(binary.flag_help);
  }
  // absl takes one usage line per process (a second call aborts); tests parse more than once.
  static const bool usage_set = (absl::SetProgramUsageMessage(binary.usage), true);
  (void)usage_set;
  absl::ParseCommandLine(argc, argv);
  ConfigureServiceProcess();
}

std::string SharedFlagHelp(absl::string_view flag, absl::string_view fallback) {
  absl::MutexLock lock(&help_mu);
  if (help_texts != nullptr) {
    auto it = help_texts->find(std::string(flag));
    if (it != help_texts->end()) return it->second;
  }
  return std::string(fallback);
}

void Notice(absl::string_view name, absl::string_view what) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
               static_cast<int>(what.size()), what.data());
}

int Fail(absl::string_view name, const absl::Status& error) {
  Notice(name, error.message());
  return kExitStartupFailed;
}

absl::StatusOr<bool> IsFullDurability(absl::string_view flag, absl::string_view value) {
  if (value == "full") return true;
  if (value == "normal") return false;
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": must be full or normal"));
}

absl::StatusOr<Upstream> ReadUpstream(absl::string_view name, const std::string& target,
                                      const std::string& token_file,
                                      const client::ChannelTls& tls) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      client::NewChannel(target, tls, absl::StrCat("--", name, "_target"));
  if (!channel.ok()) return channel.status();
  absl::StatusOr<std::string> token = ReadFlagToken(absl::StrCat(name, "_token_file"), token_file);
  if (!token.ok()) return token.status();
  return Upstream{*std::move(channel), *std::move(token)};
}

int ServeUntilTerminated(absl::string_view name, const ServerOptions& options, Servable& servable,
                         const Authenticator* authenticator) {
  ServerOptions with_dependencies = options;
  std::vector<DependencyCheck> dependencies = servable.dependencies();
  with_dependencies.dependencies.insert(with_dependencies.dependencies.end(), dependencies.begin(),
                                        dependencies.end());
  std::vector<grpc::Service*> services = servable.services();
  std::unique_ptr<StatusService> status;
  if (authenticator != nullptr) {
    StatusInfo info = servable.status_info();
    info.service = std::string(name);
    status = std::make_unique<StatusService>(*authenticator, std::vector<StatusInfo>{info});
    services.push_back(status.get());
  }
  absl::StatusOr<std::unique_ptr<ServerRunner>> runner =
      ServerRunner::Start(with_dependencies, services);
  if (!runner.ok()) return Fail(name, runner.status());
  if (status != nullptr) status->Attach(runner->get());
  ReportListening(std::string(name), (*runner)->address());
  for (const auto& [label, address] : servable.side_listeners()) {
    ReportListening(absl::StrCat(name, " ", label), address);
  }
  TerminationSignals::Wait();
  (*runner)->MarkNotServing();
  servable.Drain();
  servable.StopSideListeners();
  (*runner)->Shutdown();
  (*runner)->Wait();
  if (status != nullptr) status->Attach(nullptr);
  return 0;
}

}  // namespace sharedos::common::server
