// A test peer: the official TypeScript SDK client (@modelcontextprotocol/sdk)
// drives `toolvfs mcp` over stdio, or over Streamable HTTP, then prints one
// JSON object with what it saw for mcp_sdk_test to check. Over stdio, the
// project's toolvfs.toml has `nap` (a tool that sleeps for minutes), `slow`
// (one that sleeps 2.5 s) and `scribe` (a vfs tool writing a file its
// policy does not cover).
// Usage: node sdk_client.cjs NPM_DIR TOOLVFS PROJECT
//        node sdk_client.cjs NPM_DIR --http URL
//        node sdk_client.cjs NPM_DIR --http-features URL
const path = require('path');
const { execFileSync } = require('child_process');
const [npmDir, toolvfs, project] = process.argv.slice(2);
const sdk = path.join(npmDir, 'node_modules/@modelcontextprotocol/sdk/dist/cjs');
const { Client } = require(path.join(sdk, 'client/index.js'));
const { StdioClientTransport } = require(path.join(sdk, 'client/stdio.js'));
const { ElicitRequestSchema, CallToolResultSchema } = require(path.join(sdk, 'types.js'));

// Whether a process whose command line starts with `prefix` is alive.
function alive(prefix) {
  try {
    execFileSync('pgrep', ['-f', `^${prefix}`]);
    return true;
  } catch {
    return false;
  }
}

// Calls `nap` (its process's command line is `command`), aborts the call
// once the process runs, and reports whether it ran, the call's error and
// whether the process is gone within 10 s.
async function cancelNap(client, command) {
  const controller = new AbortController();
  const napping = client.callTool({ name: 'nap', arguments: {} }, CallToolResultSchema, { signal: controller.signal });
  for (let waited = 0; waited < 100 && !alive(command); ++waited) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const napStarted = alive(command);
  controller.abort('the user pressed stop');
  let cancelError = '';
  try {
    await napping;
  } catch (error) {
    cancelError = String(error.message ?? error);
  }
  let napGone = false;
  for (let waited = 0; waited < 100 && !napGone; ++waited) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    napGone = !alive(command);
  }
  return { napStarted, cancelError, napGone };
}

async function main() {
  const transport = new StdioClientTransport({
    command: toolvfs,
    args: ['mcp', '--no-audit', '--project', project],
    cwd: project,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'toolvfs-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  // The user's answers to the approvals, in order.
  const answers = [
    { action: 'accept', content: { decision: 'allow_once' } },
    { action: 'decline' },
    { action: 'accept', content: { decision: 'allow_session' } },
    { action: 'accept', content: { decision: 'allow_once' } },
  ];
  const elicitations = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return answers.shift() ?? { action: 'cancel' };
  });
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
  // Structured results, checked by the SDK against the output schemas.
  const info = await client.callTool({ name: 'file_info', arguments: { path: 'a.txt' } });
  const grep = await client.callTool({ name: 'grep_files', arguments: { pattern: 'via' } });
  // Approvals: the first write is allowed once, the second declined, the
  // third allowed for the session (so its repeat is not asked).
  const allowed = await client.callTool({ name: 'write_file', arguments: { path: 'allowed.txt', content: 'yes' } });
  const declined = await client.callTool({ name: 'write_file', arguments: { path: 'declined.txt', content: 'no' } });
  const session = [];
  for (const content of ['one', 'two']) {
    session.push(await client.callTool({ name: 'write_file', arguments: { path: 'session.txt', content } }));
  }
  // A vfs tool's uncovered write: asked the same way; the tool gets the
  // host's `pending` notification while the user decides.
  const scribe = await client.callTool({ name: 'scribe', arguments: {} });
  // Progress while a slow tool runs.
  const progress = [];
  const slow = await client.callTool({ name: 'slow', arguments: {} }, CallToolResultSchema, {
    onprogress: (update) => progress.push(update),
  });
  // Cancellation: the SDK sends notifications/cancelled when aborted.
  const { napStarted, cancelError, napGone } = await cancelNap(client, 'sleep 314.159');
  await client.ping();
  const afterCancel = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
  console.log(JSON.stringify({
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    tools: listed.tools.map((tool) => tool.name),
    annotations: Object.fromEntries(listed.tools.map((tool) => [tool.name, tool.annotations ?? null])),
    read,
    escaped,
    unknownError,
    info,
    grep,
    elicitations,
    allowed,
    declined,
    session,
    asked: elicitations.length,
    scribe,
    progress,
    slow,
    napStarted,
    cancelError,
    napGone,
    afterCancel,
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

// Over Streamable HTTP, one session doing what a host does beyond plain
// calls: the snapshot tools (their structuredContent validated by the SDK
// against their outputSchema), an approval asked by elicitation and
// answered, a tool's own progress and log lines, and a call cancelled with
// AbortController (its tool process must be gone afterwards). The
// project's toolvfs.toml has `scribe` (a vfs tool writing what its policy
// does not cover), `reporter` (a vfs tool reporting progress and logging)
// and `nap` (sleeps for minutes).
async function mainHttpFeatures(url) {
  const { StreamableHTTPClientTransport } = require(path.join(sdk, 'client/streamableHttp.js'));
  const { LoggingMessageNotificationSchema } = require(path.join(sdk, 'types.js'));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'toolvfs-test-features', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const elicitations = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return { action: 'accept', content: { decision: 'allow_once' } };
  });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => logs.push(notification.params));
  await client.connect(transport);
  await client.setLoggingLevel('info');
  // Snapshot tools: the SDK rejects a result whose structuredContent does
  // not match the tool's outputSchema (or is missing while one is declared).
  const created = await client.callTool({ name: 'snapshot_create', arguments: { label: 'before' } });
  await client.callTool({ name: 'write_file', arguments: { path: 'notes/a.txt', content: 'after the snapshot' } });
  const unlabelled = await client.callTool({ name: 'snapshot_create', arguments: {} });
  const listed = await client.callTool({ name: 'snapshot_list', arguments: {} });
  const diff = await client.callTool({
    name: 'snapshot_diff', arguments: { from: created.structuredContent.id },
  });
  const restored = await client.callTool({
    name: 'snapshot_restore', arguments: { id: created.structuredContent.id },
  });
  // An approval over HTTP, answered by this client.
  const scribe = await client.callTool({ name: 'scribe', arguments: {} });
  // A tool's own progress and log lines.
  const progress = [];
  const reporter = await client.callTool({ name: 'reporter', arguments: {} }, CallToolResultSchema, {
    onprogress: (update) => progress.push(update),
  });
  // Cancellation of a running call.
  const { napStarted, cancelError, napGone } = await cancelNap(client, 'sleep 161.803');
  await client.ping();
  await transport.terminateSession();
  await client.close();
  console.log(JSON.stringify({
    created, unlabelled, listed, diff, restored, elicitations, scribe, progress, reporter, logs,
    napStarted, cancelError, napGone,
  }));
}

const modes = { '--http': mainHttp, '--http-features': mainHttpFeatures };
(modes[toolvfs] ? modes[toolvfs](project) : main()).catch((error) => {
  console.error(`sdk_client: ${error.stack || error}`);
  process.exit(1);
});
