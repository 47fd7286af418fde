#include "audit_svc/core/redaction.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;
using ::testing::Not;

AuditEvent Parse(const std::string& text) {
  AuditEvent event;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &event)) << text;
  return event;
}

TEST(RedactionTest, AllowsTheMetadataTheKernelRecords) {
  AuditEvent event = Parse(R"pb(
    metadata {
      fields {
        key: "catalogHash"
        value { string_value: "abc" }
      }
      fields {
        key: "withheldCount"
        value { number_value: 3 }
      }
      fields {
        key: "rejectedGrants"
        value {
          list_value {
            values {
              struct_value {
                fields {
                  key: "grantId"
                  value { string_value: "g1" }
                }
                fields {
                  key: "reason"
                  value { string_value: "window" }
                }
              }
            }
          }
        }
      }
      fields {
        key: "detail"
        value { string_value: "needs a human" }
      }
      fields {
        key: "authority"
        value { string_value: "grant_source_failed" }
      }
    })pb");
  EXPECT_THAT(CheckRedaction(event), IsOk());
}

TEST(RedactionTest, RejectsEachForbiddenKeyAtTopLevel) {
  for (const char* key : {"arguments", "payload", "content", "output", "result", "goldFacts",
                          "verdict", "errorMessage", "stack", "password", "token", "apiKey",
                          "api_key", "API-KEY", "credentials", "authorization", "secret"}) {
    AuditEvent event;
    (*event.mutable_metadata()->mutable_fields())[key].set_string_value("x");
    EXPECT_THAT(CheckRedaction(event),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(std::string("event.metadata.") + key + ": key")))
        << key;
  }
}

TEST(RedactionTest, FindsForbiddenKeysAnywhereInTheTree) {
  AuditEvent event = Parse(R"pb(
    metadata {
      fields {
        key: "explanation"
        value {
          list_value {
            values { string_value: "fine" }
            values {
              struct_value {
                fields {
                  key: "nested"
                  value {
                    struct_value {
                      fields {
                        key: "arguments"
                        value { string_value: "rm -rf /" }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    })pb");
  EXPECT_THAT(CheckRedaction(event),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("event.metadata.explanation[1].nested.arguments")));
}

TEST(RedactionTest, ChecksTheRequestedAuthorityMetadataToo) {
  AuditEvent event = Parse(R"pb(
    requested_authority {
      metadata {
        fields {
          key: "payload"
          value { string_value: "p" }
        }
      }
    })pb");
  EXPECT_THAT(CheckRedaction(event),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("event.requested_authority.metadata.payload")));
}

TEST(RedactionTest, NeverEchoesTheValue) {
  AuditEvent event;
  (*event.mutable_metadata()->mutable_fields())["token"].set_string_value("sk-live-123");
  absl::Status status = CheckRedaction(event);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), Not(HasSubstr("sk-live-123")));
}

TEST(RedactionTest, KeysThatMerelyContainAForbiddenWordAreAllowed) {
  EXPECT_FALSE(IsRedactedKey("tokenCount"));
  EXPECT_FALSE(IsRedactedKey("contentHash"));
  EXPECT_FALSE(IsRedactedKey("outputSchemaHash"));
  EXPECT_TRUE(IsRedactedKey("Output"));
}

}  // namespace
}  // namespace sharedos::audit::core
