// The MCP columns' driver (tests/conformance): an official MCP TypeScript client playing the
// harness seat of a RUNTIME_MCP turn, driven by the conformance runner over JSON lines.
//
//   node mcp_driver.mjs --client=legacy   @modelcontextprotocol/sdk v1 (protocol 2025-11-25)
//   node mcp_driver.mjs --client=modern   @modelcontextprotocol/client v2 (protocol 2026-07-28)
//
// stdin, one request per line; stdout, one answer per line, in order:
//   {"op":"connect","url":…,"token":…} → {"ok":true,"tools":[names],"protocolVersion":…}
//   {"op":"call","tool":…,"arguments":{…}} → {"ok":true,"result":CallToolResult}
//                                          | {"ok":false,"error":…,"code":…,"local":bool}
//   {"op":"close"}                         → {"ok":true}
// "local": the client refused before sending anything (the attempt never reached SharedOS).
// The driver judges nothing: it reports what the client got back.
import { createInterface } from 'node:readline';

const kind = (process.argv.find((a) => a.startsWith('--client=')) ?? '--client=legacy').slice(9);

async function loadClient() {
  if (kind === 'legacy') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    return { Client, StreamableHTTPClientTransport, version: '2025-11-25' };
  }
  if (kind === 'modern') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    return { Client, StreamableHTTPClientTransport, version: '2026-07-28' };
  }
  throw new Error(`unknown --client=${kind}`);
}

const sdk = await loadClient();
let client = null;
let sent = false;

function answer(value) {
  process.stdout.write(JSON.stringify(value) + '\n');
}

async function connect({ url, token }) {
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  client = new sdk.Client({ name: `sharedos-conformance-${kind}`, version: '1.0.0' }, {});
  await client.connect(transport);
  const listed = await client.listTools();
  return {
    ok: true,
    tools: listed.tools.map((tool) => tool.name),
    protocolVersion: transport.protocolVersion ?? null,
  };
}

async function call({ tool, arguments: args }) {
  sent = false;
  try {
    const result = await client.callTool({ name: tool, arguments: args ?? {} });
    return { ok: true, result };
  } catch (error) {
    return {
      ok: false,
      error: String(error?.message ?? error),
      code: error?.code ?? null,
      local: !sent,
    };
  }
}

// Marks that a request left the process (fetch is what both transports send with).
const realFetch = globalThis.fetch;
globalThis.fetch = (...args) => {
  sent = true;
  return realFetch(...args);
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
    if (request.op === 'connect') answer(await connect(request));
    else if (request.op === 'call') answer(await call(request));
    else if (request.op === 'close') {
      if (client) await client.close();
      client = null;
      answer({ ok: true });
    } else answer({ ok: false, error: `unknown op ${request.op}` });
  } catch (error) {
    answer({ ok: false, error: String(error?.message ?? error), local: false });
  }
}
