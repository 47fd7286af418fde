// Deliberately wrong: reads guarded members without their lock. tools/thread_safety.sh builds this
// with --config=tsa and expects the build to FAIL with both violations reported; if it compiles,
// the analysis is not running (a flag or the compiler changed) and every other target's clean
// build would prove nothing. The second violation is in a class template, reported only when
// the template is instantiated: the check's compiler runs clang's front end alone
// (-fsyntax-only), and this proves that it still analyses instantiated templates.
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

template <typename T>
class Box {
 public:
  T UnlockedGet() const { return boxed_; }  // reported at the instantiation below

 private:
  mutable absl::Mutex mu_;
  T boxed_ ABSL_GUARDED_BY(mu_){};
};

int Read() { return Counter().Unlocked() + Box<int>().UnlockedGet(); }

}  // namespace sharedos::tools
