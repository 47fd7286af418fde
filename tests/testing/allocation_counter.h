// Counting heap allocations in a test: linking this library replaces the global operator
// new/delete of the whole test binary (malloc/free underneath) with ones that count while a
// CountAllocations call runs. One test binary, one counter: link it only into tests that count.

#ifndef SHAREDOS_TESTS_TESTING_ALLOCATION_COUNTER_H_
#define SHAREDOS_TESTS_TESTING_ALLOCATION_COUNTER_H_

namespace sharedos::testing {

// Starts counting from zero; StopCountingAllocations stops and answers how many operator new
// (and new[]) calls were made meanwhile, on any thread.
void StartCountingAllocations();
long StopCountingAllocations();

// How many allocations `run` makes.
template <typename F>
long CountAllocations(F run) {
  StartCountingAllocations();
  run();
  return StopCountingAllocations();
}

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_ALLOCATION_COUNTER_H_
