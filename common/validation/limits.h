// Contract limits of protocol "1" (semantics §1 and §6.11), named once for
// every service.
//
// String lengths are UTF-16 code units, as in the reference (a supplementary
// character counts 2). Counts are inclusive maxima unless the name says
// otherwise.

#ifndef SHAREDOS_COMMON_VALIDATION_LIMITS_H_
#define SHAREDOS_COMMON_VALIDATION_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace sharedos::common::validation {

// The only protocol version a "1" reader accepts.
inline constexpr char kProtocolVersion[] = "1";

// Strings (UTF-16 code units).
inline constexpr size_t kMaxIdentifierLength = 256;
inline constexpr size_t kMaxPurposeLength = 512;
inline constexpr size_t kMaxActionLength = 128;
inline constexpr size_t kMaxPathSegmentLength = 256;
inline constexpr size_t kMaxToolNameLength = 128;
inline constexpr size_t kMaxToolDescriptionLength = 8192;
inline constexpr size_t kMaxErrorMessageLength = 4096;
inline constexpr size_t kMaxEscalationReasonLength = 512;
inline constexpr size_t kMaxEventTypeLength = 128;
inline constexpr size_t kMaxSearchQueryLength = 8192;
// A catalogue hash and other content digests: lowercase hex SHA-256.
inline constexpr size_t kContentHashLength = 64;

// Counts.
inline constexpr size_t kMaxPathSegments = 64;
inline constexpr size_t kMaxCapabilities = 64;
inline constexpr size_t kMaxActions = 64;
inline constexpr size_t kMaxPurposes = 64;
inline constexpr size_t kMaxEnabledToolNamespaces = 256;
inline constexpr size_t kMaxCatalogNamespaces = 256;
inline constexpr size_t kMaxRequestTools = 512;
inline constexpr size_t kMaxCatalogTools = 512;
inline constexpr size_t kMaxParentIds = 64;
inline constexpr size_t kMaxDelegationChain = 16;
inline constexpr size_t kMaxResolvedGrants = 256;
inline constexpr size_t kMaxReachEntries = 16384;
inline constexpr size_t kMaxSearchResults = 100;
inline constexpr size_t kMaxGrepContextLines = 100;

// Turn limits (ExecutionOptions); each is 1..max.
inline constexpr int32_t kMaxSteps = 1000;
inline constexpr int32_t kDefaultMaxSteps = 16;
inline constexpr int32_t kMaxToolCalls = 10000;
inline constexpr int32_t kMaxTimeoutMs = 600000;
inline constexpr int32_t kDefaultTimeoutMs = 120000;

// Context capsule (bytes, items).
inline constexpr size_t kMaxCapsuleEncodedBytes = 128 * 1024;
inline constexpr size_t kMaxCapsuleItemBytes = 96 * 1024;
inline constexpr size_t kMaxCapsuleItems = 12;

// google.protobuf.Timestamp range: 0001-01-01T00:00:00Z ..
// 9999-12-31T23:59:59.999999999Z.
inline constexpr int64_t kMinTimestampSeconds = -62135596800;
inline constexpr int64_t kMaxTimestampSeconds = 253402300799;
inline constexpr int32_t kMaxTimestampNanos = 999999999;

}  // namespace sharedos::common::validation

#endif  // SHAREDOS_COMMON_VALIDATION_LIMITS_H_
