// The harness scenario both official MCP clients play against a live SharedOS turn (issue 8):
// list, an allowed call, a denied call, a tool not offered, the escalation ask, a call after it.
// `client` is a connected Client of either SDK (their callTool/listTools shapes agree).
// Returns a summary the Bazel test (mcp_clients_test.cc) asserts on.

function parseText(result) {
  const text = result.content?.find((block) => block.type === 'text')?.text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function summarize(result) {
  return {
    isError: result.isError === true,
    meta: result._meta ?? null,
    text: parseText(result),
    structuredContent: result.structuredContent ?? null,
  };
}

// A call the client itself may refuse (a name it never listed): the refusal is reported, not
// thrown, so the test sees what happened.
async function call(client, name, args) {
  try {
    return summarize(await client.callTool({ name, arguments: args }));
  } catch (error) {
    return { thrown: String(error?.message ?? error) };
  }
}

// `legacy`: the 2025 era, where ping exists (2026-07-28 dropped it).
export async function playScenario(client, { legacy }) {
  const summary = {};
  summary.instructions = client.getInstructions?.() ?? null;
  const listed = await client.listTools();
  summary.tools = listed.tools.map((tool) => tool.name);
  summary.listMeta = listed._meta ?? null;
  summary.readHasOutputSchema = listed.tools.some(
    (tool) => tool.name === 'files.read' && tool.outputSchema !== undefined);
  summary.allowed = await call(client, 'files.read', { path: 'Workspace/notes.txt' });
  summary.denied = await call(client, 'files.create',
                              { path: 'Workspace/summary.txt', content: 'summary: buy milk\n' });
  summary.notOffered = await call(client, 'files.delete', { path: 'Workspace/notes.txt' });
  summary.escalate = await call(client, 'sharedos.escalate',
                                { reason: 'need to create Workspace/summary.txt' });
  summary.afterEscalation = await call(client, 'files.read', { path: 'Workspace/notes.txt' });
  if (legacy) summary.pingOk = (await client.ping()) !== undefined;
  return summary;
}
