// Plain-text tables for human-readable output: a header row, then rows, columns left-aligned
// and separated by two spaces; the last column is not padded. Every cell is printed through
// common::text::TerminalSafe: a control character in it (an ANSI escape, a newline) shows as an
// escape and can neither act on the terminal nor start a row of its own.
#ifndef SHAREDOS_COMMON_TEXT_TABLE_H_
#define SHAREDOS_COMMON_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace sharedos::common::text {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // Missing cells render empty; extra cells are kept (and widen the table).
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  // Every line ends with '\n'. Empty cells render as "-".
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sharedos::common::text

#endif  // SHAREDOS_COMMON_TEXT_TABLE_H_
