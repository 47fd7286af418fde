// Puts the calling process (and every process it starts from then on) in a network namespace of
// its own with only loopback up: the CLI columns (issue 35) run real agent CLIs that must make no
// outside connection, and in here none can. Call first thing in main, before any thread starts.

#ifndef SHAREDOS_TESTS_CONFORMANCE_LOOPBACK_NETWORK_H_
#define SHAREDOS_TESTS_CONFORMANCE_LOOPBACK_NETWORK_H_

#include "absl/status/status.h"

namespace sharedos::conformance {

// unshare(CLONE_NEWNET), `lo` brought up, then checked: a connection to an outside address is
// refused at once (no route). Errors: FAILED_PRECONDITION (not permitted: run as root) or
// INTERNAL naming the step.
absl::Status EnterLoopbackOnlyNetwork();

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_LOOPBACK_NETWORK_H_
