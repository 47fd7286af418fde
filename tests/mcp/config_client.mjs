// The official MCP TypeScript SDK v1 connected with a harness configuration's URL and headers
// (the .mcp.json and config.toml examples of envelope_svc/mcp/README.md, filled in by the test):
// lists the tools, then calls each of the given calls by its listed (portable) name.
// Usage: node config_client.mjs <url> <headers JSON> <calls JSON [{name, arguments}]>.
// Prints one JSON summary line: {tools: [names], calls: [{name, isError, code}]}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, headers, calls] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: JSON.parse(headers) },
});
const client = new Client({ name: 'sharedos-test-config', version: '1.0.0' });
await client.connect(transport);
const listed = await client.listTools();
const summary = { tools: listed.tools.map((tool) => tool.name), calls: [] };
for (const { name, arguments: args } of JSON.parse(calls)) {
  const result = await client.callTool({ name, arguments: args });
  summary.calls.push({ name, isError: result.isError ?? false,
                       code: result._meta?.['sharedos/code'] ?? null });
}
await client.close();
console.log(JSON.stringify(summary));
