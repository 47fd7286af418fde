// Messages for the transports' tests: an agent address and a protocol "1" envelope between two
// agents (purpose "p", trace "t", a string payload, created 2026-01-01), valid as protocol "1".

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_TEST_MESSAGES_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_TEST_MESSAGES_H_

#include <string>

#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/message.pb.h"

namespace sharedos::envelope::messaging::testing {

inline protocol::v1::Address Agent(const std::string& id) {
  protocol::v1::Address address;
  address.set_agent_id(id);
  return address;
}

inline protocol::v1::Address Human(const std::string& id) {
  protocol::v1::Address address;
  address.set_human_user_id(id);
  return address;
}

// `id` from agent `from` to agent `to`, replying to `reply_to` when given.
inline protocol::v1::MessageEnvelope Message(const std::string& id, const std::string& from,
                                             const std::string& to,
                                             const std::string& reply_to = "") {
  protocol::v1::MessageEnvelope message;
  message.set_version("1");
  message.set_id(id);
  *message.mutable_sender() = Agent(from);
  *message.mutable_receiver() = Agent(to);
  message.set_purpose("p");
  message.set_trace_id("t");
  message.set_reply_to(reply_to);
  message.mutable_payload()->set_string_value("secret");
  message.mutable_created_at()->set_seconds(1767225600);
  return message;
}

}  // namespace sharedos::envelope::messaging::testing

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_TEST_MESSAGES_H_
