// gMock matcher for protocol buffer messages:
//
//   EXPECT_THAT(response.address(), EqualsProto(expected_address));
//
// Matches a message equal to `expected` field by field (MessageDifferencer::Compare); on a
// mismatch it explains which fields differ.

#ifndef SHAREDOS_COMMON_STATUS_PROTO_MATCHERS_H_
#define SHAREDOS_COMMON_STATUS_PROTO_MATCHERS_H_

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"

namespace sharedos::common {

MATCHER_P(EqualsProto, expected, "equals " + expected.ShortDebugString()) {
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  if (differencer.Compare(expected, arg)) return true;
  *result_listener << diff;
  return false;
}

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_STATUS_PROTO_MATCHERS_H_
