// A Pi extension that makes Pi an MCP client of one SharedOS turn (Pi has no MCP client by
// design; extensions are its documented way). Loaded with `pi --extension <this file>`; the
// recipe is `sharedosctl mcp-config --cli=pi` (envelope_svc/mcp/README.md).
//
// At start-up it connects to $SHAREDOS_MCP_URL with `Authorization: Bearer $SHAREDOS_MCP_TOKEN`
// (the official MCP TypeScript SDK, Streamable HTTP), lists the turn's tools and registers each
// as a Pi tool under the name tools/list served (with ?tool_names=portable: files_read). A call
// goes to SharedOS as tools/call under that name; SharedOS resolves it to its canonical tool. A
// refusal (isError) is thrown, so Pi reports it to the model as an error whose text is SharedOS's
// refusal sentence (it names the code, and for a missing grant the requirement to escalate with).
// No credential is written anywhere; nothing is reached but the turn's URL.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

type Content = { type: string; text?: string };

function text(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as Content[])
    .map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : ''))
    .filter((part) => part.length > 0)
    .join('\n');
}

export default async function sharedos(pi: any) {
  const url = process.env.SHAREDOS_MCP_URL;
  const token = process.env.SHAREDOS_MCP_TOKEN;
  if (!url || !token) {
    throw new Error('sharedos_mcp: SHAREDOS_MCP_URL and SHAREDOS_MCP_TOKEN must be set');
  }
  const client = new Client({ name: 'sharedos-pi', version: '1.0.0' }, {});
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const listed = await client.listTools();
  for (const tool of listed.tools) {
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description: tool.description ?? tool.name,
      parameters: tool.inputSchema ?? { type: 'object', properties: {} },
      async execute(_id: string, params: Record<string, unknown>) {
        const result = await client.callTool({ name: tool.name, arguments: params ?? {} });
        const answer = text(result.content);
        if (result.isError) throw new Error(answer || 'SharedOS refused this call.');
        return { content: [{ type: 'text', text: answer }], details: {} };
      },
    });
  }
}
