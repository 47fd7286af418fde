#include "tests/testing/demo_world.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedosd/demo.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/process.h"

namespace sharedos::testing::demo {
namespace {

static_assert(std::string_view(kNamespace) == sharedosd::kDemoNamespace);

// One `tools { … }` entry of a ToolRegistryConfig per demo tool.
const std::map<std::string, std::string>& ToolTexts() {
  static const auto* texts = new std::map<std::string, std::string>{
      {"files.read", R"pb(
         tools {
           definition {
             name: 'files.read'
             description: 'Read a file of the workspace.'
             namespace: 'files'
             source: 'sharedos'
             read_write: READ_WRITE_READ
             annotations { read_only: true idempotent: true }
             required_capability {
               resource { namespace: 'files' }
               action: 'read'
             }
           }
           requirement { path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND } }
           provider { files {} }
           input_schema_json: '{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}'
         }
       )pb"},
      {"files.create", R"pb(
         tools {
           definition {
             name: 'files.create'
             description: 'Create a file of the workspace.'
             namespace: 'files'
             source: 'sharedos'
             read_write: READ_WRITE_WRITE
             required_capability {
               resource { namespace: 'files' }
               action: 'create'
             }
           }
           requirement { path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND } }
           provider { files {} }
           input_schema_json: '{"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false}'
         }
       )pb"},
      {"sharedos.escalate", R"pb(
         tools {
           definition {
             name: 'sharedos.escalate'
             description: 'Ask a human for authority this turn lacks. Give the reason, and as requirement the capreq- id a refusal of this turn named; the turn ends escalated and a reviewer decides on exactly that authority.'
             namespace: 'sharedos'
             source: 'sharedos'
             read_write: READ_WRITE_READ
             annotations { read_only: true }
             required_capability {
               resource { namespace: 'sharedos' path: 'escalation' }
               action: 'request'
             }
           }
           requirement { ceiling {} }
           provider { none {} }
           input_schema_json: '{"type": "object", "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": 512}, "requirement": {"type": "string", "pattern": "^capreq-[0-9a-f]{64}$"}}, "required": ["reason"], "additionalProperties": false}'
         }
       )pb"},
  };
  return *texts;
}

bool SamePath(const protocol::v1::ResourceRef& resource, const std::string& resource_namespace,
              const std::vector<std::string>& path) {
  if (resource.namespace_() != resource_namespace ||
      resource.path_size() != static_cast<int>(path.size())) {
    return false;
  }
  for (size_t i = 0; i < path.size(); ++i) {
    if (resource.path(static_cast<int>(i)) != path[i]) return false;
  }
  return true;
}

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
}

}  // namespace

protocol::v1::CapabilityGrant Grant() { return sharedosd::DemoGrant(); }

protocol::v1::Capability* FindCapability(protocol::v1::CapabilityGrant& grant,
                                         const std::string& resource_namespace,
                                         const std::vector<std::string>& path) {
  for (protocol::v1::Capability& capability : *grant.mutable_capabilities()) {
    if (SamePath(capability.resource(), resource_namespace, path)) return &capability;
  }
  return nullptr;
}

void RemoveCapability(protocol::v1::CapabilityGrant& grant, const std::string& resource_namespace,
                      const std::vector<std::string>& path) {
  auto* capabilities = grant.mutable_capabilities();
  for (int i = capabilities->size() - 1; i >= 0; --i) {
    if (SamePath(capabilities->Get(i).resource(), resource_namespace, path)) {
      capabilities->DeleteSubrange(i, 1);
    }
  }
}

envelope::v1::OpenTurnRequest TurnRequest(const std::string& execution_id,
                                          const std::string& trace_id,
                                          envelope::v1::Runtime runtime) {
  google::protobuf::Timestamp now;
  now.set_seconds(kNowSeconds);
  return sharedosd::DemoTurnRequest(runtime, execution_id, trace_id, now);
}

std::string RegistryText(const std::vector<std::string>& tools) {
  const std::vector<std::string> all = {"files.read", "files.create", "sharedos.escalate"};
  std::string text;
  for (const std::string& tool : tools.empty() ? all : tools) {
    auto entry = ToolTexts().find(tool);
    // An unknown name leaves text no registry parses, so the deployment fails to start.
    text += entry != ToolTexts().end() ? entry->second : "unknown_demo_tool: '" + tool + "'\n";
  }
  return text;
}

std::string WorkspaceRoot(const std::string& files_root) {
  return absl::StrCat(files_root, "/human/", kOwner, "/workspace");
}

absl::Status WriteWorkspace(const std::string& files_root) {
  std::string dir = files_root;
  if (absl::Status made = MakeDir(dir); !made.ok()) return made;
  for (const char* part : {"human", kOwner, "workspace", "Workspace"}) {
    dir = absl::StrCat(dir, "/", part);
    if (absl::Status made = MakeDir(dir); !made.ok()) return made;
  }
  return WriteFile(dir + "/notes.txt", kNotes);
}

}  // namespace sharedos::testing::demo
