// The official MCP TypeScript SDK v1 (@modelcontextprotocol/sdk) over Streamable HTTP, legacy era
// (initialize, protocol 2025-11-25), playing scenario.mjs against a SharedOS MCP endpoint.
// Usage: node sdk_v1_client.mjs <url> <execution token>. Prints one JSON summary line.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { playScenario } from './scenario.mjs';

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'sharedos-test-sdk-v1', version: '1.0.0' });
await client.connect(transport);
const summary = await playScenario(client, { legacy: true });
summary.client = 'sdk-v1';
summary.protocolVersion = transport.protocolVersion ?? null;
summary.serverInfo = client.getServerVersion() ?? null;
await client.close();
console.log(JSON.stringify(summary));
