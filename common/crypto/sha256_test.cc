#include "common/crypto/sha256.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, RawDigestMatchesHex) {
  const std::string digest = Sha256("abc");
  EXPECT_EQ(digest.size(), kSha256Size);
  EXPECT_EQ(absl::BytesToHexString(digest), Sha256Hex("abc"));
}

TEST(Sha256Test, HashesEmbeddedNulBytes) {
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("a"));
  EXPECT_EQ(Sha256Hex(std::string("\0", 1)),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
}

TEST(Sha256HasherTest, PiecesHashAsTheirConcatenation) {
  Sha256Hasher empty;
  EXPECT_EQ(empty.HexDigest(), Sha256Hex(""));

  std::string whole;
  Sha256Hasher hasher;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece(static_cast<size_t>(i % 97), static_cast<char>('a' + i % 26));
    whole += piece;
    hasher.Update(piece);
  }
  EXPECT_EQ(hasher.HexDigest(), Sha256Hex(whole));

  Sha256Hasher split;
  split.Update("abcdbcdecdefdefgefghfghighijhijk");
  split.Update("");
  split.Update("ijkljklmklmnlmnomnopnopq");
  EXPECT_EQ(split.HexDigest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

struct HmacCase {
  std::string key;
  std::string data;
  const char* expected_hex;
};

TEST(HmacSha256Test, Rfc4231Vectors) {
  const HmacCase cases[] = {
      // Test case 1.
      {std::string(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      // Test case 2.
      {"Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      // Test case 3.
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      // Test case 6: a key longer than the block size.
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
  };
  for (const HmacCase& c : cases) {
    const std::string mac = HmacSha256(c.key, c.data);
    EXPECT_EQ(mac.size(), kSha256Size);
    EXPECT_EQ(absl::BytesToHexString(mac), c.expected_hex);
  }
}

TEST(HmacSha256Test, EmptyKeyAndData) {
  EXPECT_EQ(absl::BytesToHexString(HmacSha256("", "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  // An empty key after a non-empty one must not reuse the earlier key.
  HmacSha256("Jefe", "x");
  EXPECT_EQ(absl::BytesToHexString(HmacSha256("", "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(ConstantTimeEqualsTest, ComparesBytesAndLengths) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("Secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace sharedos::common
