#include "sharedosd/demo_turn.h"

#include "sharedos/protocol/v1/execution.pb.h"

namespace sharedos::sharedosd {

envelope::v1::OpenTurnRequest DemoTurnRequest(envelope::v1::Runtime runtime,
                                              const std::string& execution_id,
                                              const std::string& trace_id,
                                              const google::protobuf::Timestamp& now) {
  envelope::v1::OpenTurnRequest request;
  request.set_runtime(runtime);
  protocol::v1::ExecutionRequest* execution = request.mutable_execution_request();
  execution->set_version("1");
  execution->set_execution_id(execution_id);
  execution->mutable_agent()->set_agent_id("agent-assistant");

  protocol::v1::AccessContext* context = execution->mutable_context();
  context->set_namespace_id("world-demo");
  context->mutable_actor()->set_agent_id("agent-assistant");
  context->mutable_authority()->set_human_user_id("user-alice");
  context->mutable_owner()->set_human_user_id("user-alice");
  context->set_purpose("keep notes");
  context->set_trace_id(trace_id);
  context->add_enabled_tool_namespaces("files");
  context->add_enabled_tool_namespaces("sharedos");
  *context->mutable_now() = now;

  protocol::v1::MessageEnvelope* message = execution->mutable_message();
  message->set_version("1");
  message->set_id("msg-1");
  message->mutable_sender()->set_human_user_id("user-alice");
  message->mutable_receiver()->set_agent_id("agent-assistant");
  message->set_purpose("keep notes");
  message->mutable_payload()->set_string_value("summarise my notes");
  message->set_trace_id(trace_id);
  *message->mutable_created_at() = now;

  execution->add_tools("files.read");
  execution->add_tools("files.create");
  execution->add_tools("sharedos.escalate");
  return request;
}

}  // namespace sharedos::sharedosd
