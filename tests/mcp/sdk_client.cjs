// A test peer: the official TypeScript SDK client (@modelcontextprotocol/sdk)
// drives `toolvfs mcp` over stdio, or over Streamable HTTP, then prints one
// JSON object with what it saw for mcp_sdk_test to check.
// Usage: node sdk_client.cjs NPM_DIR TOOLVFS PROJECT
//        node sdk_client.cjs NPM_DIR --http URL
const path = require('path');
const [npmDir, toolvfs, project] = process.argv.slice(2);
const sdk = path.join(npmDir, 'node_modules/@modelcontextprotocol/sdk/dist/cjs');
const { Client } = require(path.join(sdk, 'client/index.js'));
const { StdioClientTransport } = require(path.join(sdk, 'client/stdio.js'));

async function main() {
  const transport = new StdioClientTransport({
    command: toolvfs,
    args: ['mcp', '--no-audit', '--project', project],
    cwd: project,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'toolvfs-test', version: '1.0.0' });
  await client.connect(transport);
  const listed = await client.listTools();
  const read = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
  const escaped = await client.callTool({ name: 'read_file', arguments: { path: '../outside.txt' } });
  let unknownError = '';
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (error) {
    unknownError = String(error.message);
  }
  await client.ping();
  console.log(JSON.stringify({
    server: client.getServerVersion(),
    tools: listed.tools.map((tool) => tool.name),
    read,
    escaped,
    unknownError,
  }));
  await client.close();
}

// Over Streamable HTTP: two clients at once, each in its own MCP session
// with its own workspace; both write the same path, each reads back its
// own content; then each ends its session (DELETE).
async function mainHttp(url) {
  const { StreamableHTTPClientTransport } = require(path.join(sdk, 'client/streamableHttp.js'));
  async function session(name) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: `toolvfs-test-${name}`, version: '1.0.0' });
    await client.connect(transport);
    const listed = await client.listTools();
    const written = await client.callTool({
      name: 'write_file', arguments: { path: 'shared/name.txt', content: `written by ${name}` },
    });
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'shared/name.txt' } });
    const escaped = await client.callTool({ name: 'read_file', arguments: { path: '../outside.txt' } });
    await client.ping();
    const sessionId = transport.sessionId;
    await transport.terminateSession();
    await client.close();
    return {
      sessionId,
      protocolVersion: transport.protocolVersion,
      tools: listed.tools.map((tool) => tool.name),
      written: written.isError,
      read: JSON.parse(read.content[0].text).content,
      escaped,
    };
  }
  const [first, second] = await Promise.all([session('first'), session('second')]);
  console.log(JSON.stringify({ first, second }));
}

(toolvfs === '--http' ? mainHttp(project) : main()).catch((error) => {
  console.error(`sdk_client: ${error.stack || error}`);
  process.exit(1);
});
