// The demo world as cross-service tests and benchmarks spell it (README "Quickstart"): namespace
// `world-demo`, agent:agent-assistant acting for its owner human:user-alice, who keeps
// Workspace/notes.txt. The grant and the turn are sharedosd's own (sharedosd/demo.h,
// sharedosd/demo_turn.h: what `sharedosd --demo` seeds and sharedosctl opens), so a test runs
// exactly the world a user starts; this fixture adds what only tests need — the three tools'
// registry for deployments that do not load the shipped one, the files provider's workspace
// layout, and named edits for scenarios that differ on purpose. Stateless; thread-safe.

#ifndef SHAREDOS_TESTS_TESTING_DEMO_WORLD_H_
#define SHAREDOS_TESTS_TESTING_DEMO_WORLD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::testing::demo {

inline constexpr char kNamespace[] = "world-demo";
inline constexpr char kAgent[] = "agent-assistant";
inline constexpr char kOwner[] = "user-alice";
inline constexpr char kOwnerKey[] = "human:user-alice";
// Workspace/notes.txt's content.
inline constexpr char kNotes[] = "buy milk\n";
// The instant the scripted turns are at (context.now, message.created_at).
inline constexpr int64_t kNowSeconds = 1786438800;

// The grant `sharedosd --demo` seeds (id grant-demo-assistant): run agent-assistant, read
// Workspace/**, create Scratch/**, request an escalation.
protocol::v1::CapabilityGrant Grant();

// The grant's capability on exactly `resource_namespace`/`path` (an empty path: the namespace
// itself), or null.
protocol::v1::Capability* FindCapability(protocol::v1::CapabilityGrant& grant,
                                         const std::string& resource_namespace,
                                         const std::vector<std::string>& path);
// Drops that capability from the grant (nothing when it has none).
void RemoveCapability(protocol::v1::CapabilityGrant& grant, const std::string& resource_namespace,
                      const std::vector<std::string>& path);

// The demo turn (sharedosd::DemoTurnRequest) at kNowSeconds: files.read, files.create and
// sharedos.escalate offered, tool namespaces files and sharedos enabled, purpose "keep notes".
envelope::v1::OpenTurnRequest TurnRequest(
    const std::string& execution_id, const std::string& trace_id,
    envelope::v1::Runtime runtime = envelope::v1::RUNTIME_DRIVER);

// The ToolRegistryConfig text of the demo turn's tools, for deployments that do not load the
// shipped registry: files.read, files.create (path from the `path` argument, the files
// provider) and sharedos.escalate, with short input schemas. `tools` selects some (in this
// order); empty: all three.
std::string RegistryText(const std::vector<std::string>& tools = {});

// The owner's workspace under a files provider's root: <files_root>/human/user-alice/workspace.
std::string WorkspaceRoot(const std::string& files_root);
// Creates <WorkspaceRoot>/Workspace, files_root included (directories that exist are kept), and
// writes notes.txt (kNotes) in it, as `sharedosd --demo` does. Errors: INTERNAL (a directory or the
// file cannot be written).
absl::Status WriteWorkspace(const std::string& files_root);

}  // namespace sharedos::testing::demo

#endif  // SHAREDOS_TESTS_TESTING_DEMO_WORLD_H_
