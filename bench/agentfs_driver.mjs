// store_bench's reference (d): the small-file workload on AgentFS
// (npm agentfs-sdk, installed by scripts/install-agentfs.sh), each
// operation awaited before the next, as store_bench runs it on the other
// stores: create FILES files of SIZE bytes in DIRS directories (file i in
// directory i % DIRS), read them all (file i * 7919 % FILES in turn), list
// the directories, overwrite OVERWRITES of them (file j * FILES / OVERWRITES).
// Contents are random and distinct, generated before the clock starts.
// AgentFS runs at its default durability: WAL, synchronous=FULL.
// Prints one JSON line: seconds per phase and the number of operations.
//
//   node agentfs_driver.mjs AGENTFS_DIR DB_FILE FILES DIRS SIZE OVERWRITES
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";

const [moduleDir, dbFile, ...numbers] = process.argv.slice(2);
const [files, dirs, size, overwrites] = numbers.map(Number);
if (!moduleDir || !dbFile || [files, dirs, size, overwrites].some((n) => !Number.isInteger(n) || n <= 0)) {
  console.error("usage: node agentfs_driver.mjs AGENTFS_DIR DB_FILE FILES DIRS SIZE OVERWRITES");
  process.exit(2);
}
const { AgentFS } = await import(pathToFileURL(`${moduleDir}/node_modules/agentfs-sdk/dist/index_node.js`).href);

const pad = (n, width) => String(n).padStart(width, "0");
const dirOf = (i) => `/d${pad(i % dirs, 2)}`;
const pathOf = (i) => `${dirOf(i)}/f${pad(i, 5)}`;
const paths = Array.from({ length: files }, (_, i) => pathOf(i));
const contents = Array.from({ length: files }, () => randomBytes(size));
const rewritten = Array.from({ length: overwrites }, () => randomBytes(size));

const agent = await AgentFS.open({ path: dbFile });
const fs = agent.fs;
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

let start = process.hrtime.bigint();
for (let i = 0; i < files; ++i) await fs.writeFile(paths[i], contents[i]);
const create = seconds(start);

start = process.hrtime.bigint();
for (let k = 0; k < files; ++k) {
  const i = (k * 7919) % files;
  const data = await fs.readFile(paths[i]);
  if (!data.equals(contents[i])) throw new Error(`${paths[i]}: read back other bytes`);
}
const read = seconds(start);

start = process.hrtime.bigint();
let listed = 0;
for (let d = 0; d < dirs; ++d) listed += (await fs.readdir(`/d${pad(d, 2)}`)).length;
const list = seconds(start);
if (listed !== files) throw new Error(`listing found ${listed} entries, not ${files}`);

start = process.hrtime.bigint();
for (let j = 0; j < overwrites; ++j) await fs.writeFile(paths[Math.floor((j * files) / overwrites)], rewritten[j]);
const overwrite = seconds(start);

await agent.close();
console.log(JSON.stringify({ create, read, list, overwrite }));
