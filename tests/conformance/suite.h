// The conformance suite (cases.md; issue 9): declarations as data (cases.json, world.json), the
// world armed through the real control plane, the rows run on a column, every cell graded from
// what the system recorded, and the manifest.
//
// Grading reads two things only: the answers the column received (ToolResult, ExecutionResult,
// RPC status) and the audit log read back through AuditLog.Query (source, cause, fail_closed,
// authority_hash, turn.ended, escalation.requested). The declarations say what a cell must show;
// nothing the runner believes about its own script counts as evidence.
//
// Grades (cases.md "Grades"): pass, fail, not exercised, not applicable (structural reason),
// not implemented (named capability), pass (driver).

#ifndef SHAREDOS_TESTS_CONFORMANCE_SUITE_H_
#define SHAREDOS_TESTS_CONFORMANCE_SUITE_H_

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sharedos/protocol/v1/tool.pb.h"
#include "tests/conformance/deployment.h"
#include "tests/testing/reference_vocabulary.h"

namespace sharedos::conformance {

inline constexpr char kCasesPath[] = "tests/conformance/cases.json";
inline constexpr char kWorldPath[] = "tests/conformance/world.json";
inline constexpr char kManifestJsonPath[] = "docs/conformance/manifest.json";
inline constexpr char kManifestMdPath[] = "docs/conformance/manifest.md";

struct Declarations {
  nlohmann::json cases;
  nlohmann::json world;
  // Runfiles-relative registry path → ToolRegistryConfig as canonical proto JSON.
  nlohmann::json registries;
  // SHA-256 (hex) of canonical JSON: the cases without prose; the world with every registered
  // tool's full definition.
  std::string case_set_hash;
  std::string world_set_hash;
  protocol::v1::ToolDefinition notion_definition;
  // Every registered tool name (what each turn requests).
  std::vector<std::string> tool_names;
  // The reference's "1" vocabulary, for row 36's strict reader (tests/testing).
  testing::ReferenceVocabulary vocabulary;
};

// Reads and hashes the declarations (runfiles-relative paths, see tests/testing RunfilePath).
// Errors: NOT_FOUND / INVALID_ARGUMENT naming the file.
absl::StatusOr<Declarations> LoadDeclarations(const char* argv0 = nullptr);

// Writes world.json "files" (owner) and "otherOwnerFiles" (the other owner) under `root`, in
// the files provider's layout. Errors: INTERNAL.
absl::Status PrepareFiles(const Declarations& declarations, const std::string& root);

DeploymentOptions DeploymentOptionsFor(const Declarations& declarations, const std::string& dir,
                                       const std::string& files_root);

struct Cell {
  std::string column;
  // pass | fail | not exercised | not applicable | not implemented | pass (driver)
  std::string status;
  int declared = 0;
  int attempted = 0;
  std::set<std::string> refused_by;
  std::set<std::string> reason_codes;
  bool record_usable = false;
  std::vector<std::string> record_gaps;
  // Why the cell is not a pass, or the reason / capability for not applicable / implemented.
  std::string detail;
  // What a probe observed (e.g. each grant-material surface and its answer).
  std::vector<std::string> notes;
  // What the column observed, step by step (deterministic: no ids or times minted by the run):
  // `step` names an attempt ("`id` (role, tool)") or a turn's ending ("turn 1 ended");
  // `observed` is the answer and, for a refused call, the boundary and cause the audit recorded.
  struct Observation {
    std::string step;
    std::string observed;
  };
  std::vector<Observation> observed;
};

// One MCP session per turn, played by the node driver (mcp_driver.mjs) with an official client.
class McpClient {
 public:
  virtual ~McpClient() = default;
  // Connects to the turn's MCP endpoint; answers tools/list names.
  virtual absl::StatusOr<std::vector<std::string>> Connect(const std::string& url,
                                                           const std::string& token) = 0;
  // tools/call; the answer is the CallToolResult as JSON.
  virtual absl::StatusOr<nlohmann::json> Call(const std::string& tool,
                                              const nlohmann::json& arguments) = 0;
  virtual absl::Status Close() = 0;
  // True for a real agent CLI (tests/conformance/cli_client.h): its own router refuses a name it
  // did not offer its model before SharedOS sees it, which is structural (seed ADR 0018).
  virtual bool RouterRefusesUnlisted() const { return false; }
};

// Runs every row on `deployment` as column `column`. `mcp` non-null: the MCP columns (turns
// opened RUNTIME_MCP, calls made by the client). One cell per row, in the declarations' order.
std::vector<Cell> RunColumn(const Declarations& declarations, Deployment& deployment,
                            const std::string& column, McpClient* mcp = nullptr);

// The rows a CLI column runs (cases.json "cliColumns"): every row for a column that is not one.
bool RunsOnColumn(const Declarations& declarations, const nlohmann::json& row,
                  const std::string& column);

// The cells of `column` in a manifest's JSON (BuildManifest's), in the declarations' row order,
// to rebuild the manifest with some columns rerun. Errors: NOT_FOUND (no such column or row).
absl::StatusOr<std::vector<Cell>> CellsFromManifest(const Declarations& declarations,
                                                    const nlohmann::json& manifest,
                                                    const std::string& column);

// Cells for a column that could not run at all (e.g. the MCP front door is missing): every row
// `status` with `detail`, except rows declared not implemented or not applicable there.
std::vector<Cell> UnrunColumn(const Declarations& declarations, const std::string& column,
                              const std::string& status, const std::string& detail);

struct Manifest {
  nlohmann::json json;
  std::string markdown;
};
// `cells`: column id → one cell per row (declaration order).
Manifest BuildManifest(const Declarations& declarations,
                       const std::map<std::string, std::vector<Cell>>& cells);

// The cells that break the build: fail, not exercised, and not implemented without a named
// capability. Each as "row <n> <column>: <status> (<detail>)".
std::vector<std::string> BuildBreakers(const Declarations& declarations,
                                       const std::map<std::string, std::vector<Cell>>& cells);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_SUITE_H_
