#include "common/server/repeated_flag.h"

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sharedos::common::server {
namespace {

// The values recorded per flag name. Reached from flags' update callbacks, the first of which
// runs during static initialisation (absl calls a callback once when it is set): constructed on
// first use, never destroyed.
struct Occurrences {
  absl::Mutex mu;
  std::map<std::string, std::vector<std::string>, std::less<>> values ABSL_GUARDED_BY(mu);
};

Occurrences& Recorded() {
  static Occurrences* const recorded = new Occurrences;
  return *recorded;
}

}  // namespace

void RecordOccurrence(absl::string_view flag, const std::vector<std::string>& values) {
  Occurrences& recorded = Recorded();
  absl::MutexLock lock(&recorded.mu);
  std::vector<std::string>& kept = recorded.values[std::string(flag)];
  for (const std::string& value : values) {
    if (!value.empty()) kept.push_back(value);
  }
}

std::vector<std::string> RecordedOccurrences(absl::string_view flag) {
  Occurrences& recorded = Recorded();
  absl::MutexLock lock(&recorded.mu);
  auto it = recorded.values.find(flag);
  return it == recorded.values.end() ? std::vector<std::string>() : it->second;
}

}  // namespace sharedos::common::server
