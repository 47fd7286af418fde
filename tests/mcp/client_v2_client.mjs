// The official MCP TypeScript client v2 (@modelcontextprotocol/client) pinned to the modern era
// (2026-07-28: server/discover, per-request _meta, Mcp-Method/Mcp-Name headers), playing
// scenario.mjs against a SharedOS MCP endpoint.
// Usage: node client_v2_client.mjs <url> <execution token>. Prints one JSON summary line.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { playScenario } from './scenario.mjs';

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'sharedos-test-client-v2', version: '2.0.0' },
                          { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(transport);
const summary = await playScenario(client, { legacy: false });
summary.client = 'client-v2';
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
await client.close();
console.log(JSON.stringify(summary));
