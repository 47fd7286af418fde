// mcp_bench's official-client series: the MCP TypeScript SDK v1 (StreamableHTTPClientTransport,
// legacy era) calling files.read on a SharedOS turn, timed in the client.
// The same calls as bare fetch POSTs (node's HTTP alone, no SDK) are timed too.
// Usage: node mcp_bench_client.mjs <url> <token> <warmup> <calls>.
// Prints {"micros": [...], "fetchMicros": [...]}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token, warmup, calls] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'sharedos-mcp-bench', version: '1.0.0' });
await client.connect(transport);
await client.listTools();  // caches the output schema, as a harness would
const call = async () => {
  const result = await client.callTool({ name: 'files.read',
                                          arguments: { path: 'Workspace/notes.txt' } });
  if (result.isError) throw new Error(`refused: ${JSON.stringify(result._meta)}`);
};
for (let i = 0; i < Number(warmup); ++i) await call();
const micros = [];
for (let i = 0; i < Number(calls); ++i) {
  const start = process.hrtime.bigint();
  await call();
  micros.push(Number(process.hrtime.bigint() - start) / 1000);
}
await client.close();

let id = 0;
const fetchCall = async () => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json',
               Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call',
                           params: { name: 'files.read',
                                     arguments: { path: 'Workspace/notes.txt' } } }),
  });
  const answer = await response.json();
  if (answer.result?.isError !== false) throw new Error(`refused: ${JSON.stringify(answer)}`);
};
for (let i = 0; i < Number(warmup); ++i) await fetchCall();
const fetchMicros = [];
for (let i = 0; i < Number(calls); ++i) {
  const start = process.hrtime.bigint();
  await fetchCall();
  fetchMicros.push(Number(process.hrtime.bigint() - start) / 1000);
}
console.log(JSON.stringify({ micros, fetchMicros }));
