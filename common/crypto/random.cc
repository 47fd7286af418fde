#include "common/crypto/random.h"

#include <openssl/rand.h>
#include <pthread.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sharedos::common {

absl::StatusOr<std::string> SecureRandomBytes(size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot generate ", size, " random bytes at once"));
  }
  std::string bytes(size, '\0');
  if (size > 0 &&
      RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(size)) != 1) {
    return absl::UnavailableError("OpenSSL RAND_bytes failed");
  }
  return bytes;
}

namespace {

// Every RAND_bytes call costs ~1.3 µs here (OpenSSL 3 takes its DRBG's lock and reinitialises
// its cipher per call) whatever its size up to a few KiB, and a mediated call draws several
// UUIDs. So each thread draws kUuidBatch UUIDs' worth at once and hands them out; the bytes are
// the same generator's output, used once each. A forked child must not reuse its parent's
// unused bytes (it would repeat the parent's next UUIDs): the child bumps the generation, which
// discards every buffer filled before the fork.
constexpr size_t kUuidBatch = 32;
std::atomic<uint64_t> fork_generation{0};

void OnForkChild() { fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct UuidBytes {
  unsigned char bytes[16 * kUuidBatch];
  size_t next = sizeof(bytes);  // empty
  uint64_t generation = 0;
};

[[noreturn]] void GeneratorFailed() {
  std::fprintf(stderr, "FATAL: NewUuidV4: OpenSSL RAND_bytes failed\n");
  std::abort();
}

// Writes 16 fresh random bytes to `out` (each buffered byte is handed out once and wiped);
// aborts if the generator fails.
void NextUuidBytes(unsigned char out[16]) {
  static const bool fork_safe = pthread_atfork(nullptr, nullptr, OnForkChild) == 0;
  if (!fork_safe) {  // cannot tell a forked child: no buffering
    if (RAND_bytes(out, 16) != 1) GeneratorFailed();
    return;
  }
  thread_local UuidBytes buffer;
  const uint64_t generation = fork_generation.load(std::memory_order_relaxed);
  if (buffer.next == sizeof(buffer.bytes) || buffer.generation != generation) {
    if (RAND_bytes(buffer.bytes, static_cast<int>(sizeof(buffer.bytes))) != 1) GeneratorFailed();
    buffer.next = 0;
    buffer.generation = generation;
  }
  std::memcpy(out, buffer.bytes + buffer.next, 16);
  std::memset(buffer.bytes + buffer.next, 0, 16);
  buffer.next += 16;
}

}  // namespace

std::string NewUuidV4() {
  unsigned char bytes[16];
  NextUuidBytes(bytes);
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0F) | 0x40);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3F) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string uuid(36, '-');
  size_t out = 0;
  for (size_t i = 0; i < sizeof(bytes); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) ++out;  // the '-' already there
    uuid[out++] = kHex[bytes[i] >> 4];
    uuid[out++] = kHex[bytes[i] & 0x0F];
  }
  return uuid;
}

}  // namespace sharedos::common
