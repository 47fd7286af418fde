#include "audit_svc/storage/memory_audit_store.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_replace.h"
#include "audit_svc/storage/audit_store_conformance.h"
#include "gtest/gtest.h"

namespace sharedos::audit::storage {
namespace {

using Records = std::map<int64_t, MemoryAuditStore::StoredRecord>;

// Edits the store's records through its testing hook.
class MemoryTamperer final : public testing::AuditStoreTamperer {
 public:
  explicit MemoryTamperer(MemoryAuditStore& store) : store_(store) {}

  absl::Status EditEvent(int64_t sequence, const std::string& from,
                         const std::string& to) override {
    return Edit([&](Records& records) {
      auto it = records.find(sequence);
      if (it == records.end()) return false;
      it->second.event_json = absl::StrReplaceAll(it->second.event_json, {{from, to}});
      return true;
    });
  }
  absl::Status DeleteRecords(int64_t first, int64_t last) override {
    return Edit([&](Records& records) {
      records.erase(records.lower_bound(first), records.upper_bound(last));
      return true;
    });
  }
  absl::Status SwapRecords(int64_t a, int64_t b) override {
    return Edit([&](Records& records) {
      if (!records.count(a) || !records.count(b)) return false;
      std::swap(records.at(a), records.at(b));
      return true;
    });
  }
  absl::Status SetHash(int64_t sequence, const std::string& hash) override {
    return Edit([&](Records& records) {
      auto it = records.find(sequence);
      if (it == records.end()) return false;
      it->second.hash = hash;
      return true;
    });
  }
  absl::Status CopyRecord(int64_t sequence, int64_t at, const std::string& event_id) override {
    return Edit([&](Records& records) {
      auto it = records.find(sequence);
      if (it == records.end() || records.count(at)) return false;
      MemoryAuditStore::StoredRecord copy = it->second;
      copy.event_id = event_id;
      records.emplace(at, std::move(copy));
      return true;
    });
  }

 private:
  template <typename F>
  absl::Status Edit(F edit) {
    bool edited = false;
    store_.TamperForTesting([&](Records& records) { edited = edit(records); });
    return edited ? absl::OkStatus() : absl::NotFoundError("no such record");
  }

  MemoryAuditStore& store_;
};

class MemoryStore : public testing::AuditStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<AuditStore>> Create() override {
    auto store = std::make_unique<MemoryAuditStore>();
    tamperer_ = std::make_unique<MemoryTamperer>(*store);
    return std::unique_ptr<AuditStore>(std::move(store));
  }
  testing::AuditStoreTamperer* Tamperer() override { return tamperer_.get(); }

 private:
  std::unique_ptr<MemoryTamperer> tamperer_;
};

using Backends = ::testing::Types<MemoryStore>;

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Memory, AuditStoreConformanceTest, Backends);
}  // namespace testing

}  // namespace sharedos::audit::storage
