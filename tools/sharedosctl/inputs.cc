#include "tools/sharedosctl/inputs.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace sharedos::sharedosctl {

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the token file ", path));
  }
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the token file ", path, " is empty"));
  }
  return token;
}

absl::Status ParseMessageText(const std::string& path, const std::string& text,
                              google::protobuf::Message* message) {
  const std::string trimmed(absl::StripLeadingAsciiWhitespace(text));
  if (absl::EndsWith(path, ".json") || absl::StartsWith(trimmed, "{")) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(text, message, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON ", message->GetTypeName(),
                                                     ": ", std::string(status.message())));
    }
    return absl::OkStatus();
  }
  // Collect the parser's complaints instead of logging them.
  class Collector : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
    }
    std::string first;
  } collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  if (!parser.ParseFromString(text, message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a textproto ", message->GetTypeName(), ": ", collector.first));
  }
  return absl::OkStatus();
}

absl::Status LoadMessageFile(const std::string& path, google::protobuf::Message* message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read --file ", path));
  std::stringstream content;
  content << in.rdbuf();
  return ParseMessageText(path, content.str(), message);
}

}  // namespace sharedos::sharedosctl
