#include "tests/conformance/run_suite.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "tests/conformance/cli_client.h"
#include "tests/conformance/deployment.h"
#include "tests/conformance/mcp_client.h"

namespace sharedos::conformance {

std::map<std::string, std::vector<Cell>> RunSuite(const Declarations& declarations,
                                                  const SuiteOptions& options) {
  std::vector<std::string> columns = options.columns;
  if (columns.empty()) columns = declarations.cases["columns"].get<std::vector<std::string>>();
  std::map<std::string, std::vector<Cell>> cells;
  for (const std::string& column : columns) {
    const std::string dir = absl::StrCat(options.scratch, "/", column);
    mkdir(dir.c_str(), 0700);
    const std::string files_root = dir + "/files";
    if (absl::Status prepared = PrepareFiles(declarations, files_root); !prepared.ok()) {
      cells[column] = UnrunColumn(declarations, column, "not exercised",
                                  absl::StrCat("world files: ", prepared.message()));
      continue;
    }
    DeploymentOptions deployment_options = DeploymentOptionsFor(declarations, dir, files_root);
    deployment_options.allow_everything = options.allow_everything && column == "kernel";
    deployment_options.broker_listing_fails = options.broker_listing_fails && column == "kernel";
    const bool mcp = column == "mcp-legacy" || column == "mcp-modern";
    const bool cli = !CliOfColumn(column).empty();
    const nlohmann::json cli_columns = declarations.cases.value("cliColumns", nlohmann::json());
    if (cli_columns.contains("unavailable") && cli_columns["unavailable"].contains(column)) {
      cells[column] = UnrunColumn(declarations, column, "not available",
                                  cli_columns["unavailable"][column].get<std::string>());
      continue;
    }
    deployment_options.mcp = mcp || cli;
    deployment_options.replicated = column == "grpc-replicated";
    std::unique_ptr<McpClient> client;
    if (mcp) {
      absl::StatusOr<std::unique_ptr<McpClient>> started =
          StartMcpClient(options.node_root, column);
      if (!started.ok()) {
        cells[column] = UnrunColumn(declarations, column, "not exercised",
                                    std::string(started.status().message()));
        continue;
      }
      client = *std::move(started);
    } else if (cli) {
      CliClientOptions cli_options;
      cli_options.column = column;
      cli_options.node_root = options.node_root;
      cli_options.sharedosctl = options.sharedosctl;
      cli_options.scratch = dir;
      cli_options.tool_names = declarations.tool_names;
      cli_options.tool_names.push_back("messages.request");
      absl::StatusOr<std::unique_ptr<McpClient>> started = StartCliClient(cli_options);
      if (!started.ok()) {
        cells[column] = UnrunColumn(declarations, column, "not exercised",
                                    std::string(started.status().message()));
        continue;
      }
      client = *std::move(started);
    }
    absl::StatusOr<std::unique_ptr<Deployment>> deployment =
        column == "kernel" ? StartKernelDeployment(deployment_options)
                           : StartProcessDeployment(deployment_options);
    if (!deployment.ok() && deployment.status().code() == absl::StatusCode::kUnimplemented) {
      // The system lacks the capability this column reaches it through.
      cells[column] = UnrunColumn(declarations, column, "not implemented",
                                  std::string(deployment.status().message()));
      continue;
    }
    if (!deployment.ok()) {
      cells[column] = UnrunColumn(declarations, column, "not exercised",
                                  absl::StrCat("deployment: ", deployment.status().message()));
      continue;
    }
    cells[column] = RunColumn(declarations, **deployment, column, client.get());
  }
  return cells;
}

}  // namespace sharedos::conformance
