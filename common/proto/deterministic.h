// A message's wire bytes, serialized deterministically: map entries in key order, so two equal
// messages give the same bytes whatever order their maps were filled in. The one place SharedOS
// asks protobuf for that (digests of filters in page tokens, the grant store's comparison of a
// grant with its stored form, the tool registry's fingerprints). Deterministic, not canonical:
// the bytes may differ across protobuf versions, so they are for comparison and hashing within
// one build, never a format kept or exchanged. Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_PROTO_DETERMINISTIC_H_
#define SHAREDOS_COMMON_PROTO_DETERMINISTIC_H_

#include <string>

#include "google/protobuf/message.h"

namespace sharedos::common {

// `message` serialized with CodedOutputStream::SetSerializationDeterministic(true).
std::string DeterministicBytes(const google::protobuf::Message& message);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_PROTO_DETERMINISTIC_H_
