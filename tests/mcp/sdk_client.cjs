// A test peer: the official TypeScript SDK client (@modelcontextprotocol/sdk)
// drives `toolvfs mcp` over stdio, then prints one JSON object with what it
// saw for mcp_sdk_test to check.
// Usage: node sdk_client.cjs NPM_DIR TOOLVFS PROJECT
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

main().catch((error) => {
  console.error(`sdk_client: ${error.stack || error}`);
  process.exit(1);
});
