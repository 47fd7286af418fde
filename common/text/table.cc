#include "common/text/table.h"

#include <algorithm>

#include "common/text/terminal_safe.h"

namespace sharedos::common::text {
namespace {

// Display width: counts UTF-8 code points, not bytes.
size_t Width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++width;
  }
  return width;
}

}  // namespace

std::string Table::Render() const {
  std::vector<std::vector<std::string>> lines;
  lines.push_back(header_);
  for (const auto& row : rows_) lines.push_back(row);
  size_t columns = 0;
  for (const auto& line : lines) columns = std::max(columns, line.size());
  std::vector<size_t> widths(columns, 1);
  for (auto& line : lines) {
    line.resize(columns);
    for (size_t i = 0; i < columns; ++i) {
      // A cell is one line of inert text whatever a request or a record put in it.
      line[i] = common::text::TerminalSafe(line[i]);
      if (line[i].empty()) line[i] = "-";
      widths[i] = std::max(widths[i], Width(line[i]));
    }
  }
  std::string out;
  for (const auto& line : lines) {
    std::string text;
    for (size_t i = 0; i < columns; ++i) {
      text += line[i];
      if (i + 1 < columns) text += std::string(widths[i] - Width(line[i]) + 2, ' ');
    }
    out += text;
    out += '\n';
  }
  return out;
}

}  // namespace sharedos::common::text
