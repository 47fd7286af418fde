#include "common/server/rpc_trace.h"

#include "absl/strings/string_view.h"
#include "common/logging/log.h"

namespace sharedos::common::server {

IncomingTrace ReadIncomingTrace(const grpc::ServerContextBase& context) {
  IncomingTrace trace;
  const auto& metadata = context.client_metadata();
  const auto [begin, end] = metadata.equal_range(logging::kTraceparentKey);
  if (begin == end) return trace;
  if (std::next(begin) == end) {
    trace.context =
        logging::ParseTraceparent(absl::string_view(begin->second.data(), begin->second.size()));
  }
  if (!trace.context.has_value()) {
    trace.context = logging::MintTrace();
    trace.replaced = true;
  }
  return trace;
}

void LogTracedCall(const IncomingTrace& trace, const grpc::Status& status) {
  if (!trace.context.has_value()) return;
  logging::Log(status.ok() ? logging::Level::kInfo : logging::Level::kWarning, "rpc", "",
               {{"traceparent", trace.replaced ? "replaced" : "accepted"},
                {"code", static_cast<int>(status.error_code())}});
}

}  // namespace sharedos::common::server
