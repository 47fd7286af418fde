// A list flag given more than once keeps every occurrence. absl keeps only a flag's last value
// (`--registry=a --registry=b` reads as {b}) and parses each occurrence afresh from the default,
// so no flag type can append; but absl calls a flag's update callback once per occurrence it
// parses (`--f=v`, `--f v`, a --flagfile line). A main whose flag is "comma-separated or
// repeated" declares it with an empty default and this library's RecordOccurrence as that
// callback, and reads every value, in command-line order, with AllOccurrences:
//
//   ABSL_FLAG(std::vector<std::string>, registry, {}, "... comma-separated or repeated.")
//       .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_registry>);
//   ...
//   std::vector<std::string> files = sharedos::common::server::AllOccurrences(FLAGS_registry);
//
// Every update is an occurrence (absl::SetFlag too), and the occurrences of one process
// accumulate: a main parses its command line once. Empty values (`--registry=a,,b`) are dropped.
// Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_REPEATED_FLAG_H_
#define SHAREDOS_COMMON_SERVER_REPEATED_FLAG_H_

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::server {

// Appends `values` (one occurrence of list flag `flag`) to the flag's record.
void RecordOccurrence(absl::string_view flag, const std::vector<std::string>& values);

// Every value recorded for list flag `flag`, in order.
std::vector<std::string> RecordedOccurrences(absl::string_view flag);

// The update callback of list flag `*kFlag`: records its value, the occurrence absl just parsed.
template <absl::Flag<std::vector<std::string>>* kFlag>
void RecordOccurrence() {
  RecordOccurrence(absl::GetFlagReflectionHandle(*kFlag).Name(), absl::GetFlag(*kFlag));
}

// Every value of `flag` given on the command line (each occurrence, comma-separated values
// split), in order; `flag`'s update callback must be RecordOccurrence<&flag>.
inline std::vector<std::string> AllOccurrences(const absl::Flag<std::vector<std::string>>& flag) {
  return RecordedOccurrences(absl::GetFlagReflectionHandle(flag).Name());
}

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_REPEATED_FLAG_H_
