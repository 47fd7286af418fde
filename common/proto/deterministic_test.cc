#include "common/proto/deterministic.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::google::protobuf::Struct;

constexpr int kKeys = 64;

std::string Key(int i) { return "key-" + std::to_string(1000 + i); }

// A Struct (a map<string, Value>) with every key, inserted in `order`.
Struct Filled(const std::vector<int>& order) {
  Struct message;
  for (int i : order) (*message.mutable_fields())[Key(i)].set_number_value(i);
  return message;
}

std::vector<int> Ascending() {
  std::vector<int> order;
  for (int i = 0; i < kKeys; ++i) order.push_back(i);
  return order;
}

std::vector<int> Scrambled() {
  std::vector<int> order;
  for (int i = 0; i < kKeys; ++i) order.push_back((i * 37 + 11) % kKeys);  // 37 is prime to 64
  return order;
}

TEST(DeterministicBytesTest, MapsFilledInDifferentOrdersSerializeIdentically) {
  std::vector<int> descending = Ascending();
  std::reverse(descending.begin(), descending.end());
  const std::string bytes = DeterministicBytes(Filled(Ascending()));
  EXPECT_FALSE(bytes.empty());
  EXPECT_EQ(DeterministicBytes(Filled(descending)), bytes);
  EXPECT_EQ(DeterministicBytes(Filled(Scrambled())), bytes);
}

TEST(DeterministicBytesTest, MapEntriesComeInKeyOrder) {
  // A one-entry Struct serializes as exactly that entry, so the whole map is the entries'
  // bytes concatenated in key order (Key(i) sorts as i does).
  std::string in_key_order;
  for (int i = 0; i < kKeys; ++i) in_key_order += DeterministicBytes(Filled({i}));
  EXPECT_EQ(DeterministicBytes(Filled(Scrambled())), in_key_order);
}

TEST(DeterministicBytesTest, ParsesBackToTheSameMessage) {
  const Struct original = Filled(Scrambled());
  Struct parsed;
  ASSERT_TRUE(parsed.ParseFromString(DeterministicBytes(original)));
  EXPECT_EQ(parsed.fields().size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(parsed.fields().at(Key(7)).number_value(), 7);
}

TEST(DeterministicBytesTest, AnEmptyMessageIsNoBytes) {
  EXPECT_EQ(DeterministicBytes(Struct()), "");
}

}  // namespace
}  // namespace sharedos::common
