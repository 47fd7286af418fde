// Deliberately wrong: reads a guarded member without its lock. tools/thread_safety.sh builds this
// with --config=tsa and expects the build to FAIL; if it compiles, the analysis is not running
// (a flag or the compiler changed) and every other target's clean build would prove nothing.
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sharedos::tools {

class Counter {
 public:
  int Unlocked() const { return value_; }  // the violation the analysis must report

 private:
  mutable absl::Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

int Read() { return Counter().Unlocked(); }

}  // namespace sharedos::tools
