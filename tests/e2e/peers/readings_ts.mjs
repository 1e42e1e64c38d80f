// TypeScript SDK (@modelcontextprotocol/sdk 1.x McpServer, zod 4) stdio server that logs what each
// tool received after zod's conversions.
//
// Used by tests/e2e/mcp1/test_readings_mcp1.py (the semantic layer of tests/differential, see its
// README). Schemas are the ones real servers write: plain `z.number()`/`z.boolean()`, and the lenient
// `z.coerce.number()`, `z.coerce.boolean()` (JavaScript truthiness: the string "false" is true),
// `z.stringbool()` and a JSON-in-a-string preprocessor. Each tool appends one JSON line with the
// values it runs with to $READINGS_LOG (synchronously, before answering). Numbers are logged as
// JavaScript holds them (an integer beyond 2^53 sent is logged rounded).
//
// Usage: node readings_ts.mjs ROOT   (relative paths resolve against ROOT; `~/` against $HOME)

import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(resolve(here, '..', '..', 'peers', 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const root = process.argv[2] || process.cwd();
const logPath = process.env.READINGS_LOG;
const server = new McpServer({ name: 'readings-ts', version: '1.0.0' });

function record(tool, marker, value) {
  const line = JSON.stringify({ stack: 'ts', tool, marker, value });
  appendFileSync(logPath, `${line}\n`);
  return { content: [{ type: 'text', text: line }] };
}

// JSON held in a string is parsed first, as servers do for agents that send objects as text.
const jsonText = (schema) => z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  try { return JSON.parse(v); } catch { return v; }
}, schema);

const marker = z.string().optional();
const tools = {
  spend: { count: z.coerce.number() },
  spend_strict: { count: z.number() },
  cap: { count: z.coerce.number() },
  spend_held: { count: z.coerce.number() },
  toggle: { force: z.boolean() },
  toggle_coerce: { force: z.coerce.boolean() },
  toggle_stringbool: { force: z.stringbool() },
  configure: { opts: jsonText(z.object({ force: z.boolean().default(false), count: z.number().default(0) })) },
  vm: { vm: z.number() },
};
for (const [name, shape] of Object.entries(tools)) {
  server.registerTool(name, { description: `readings probe ${name}`, inputSchema: { ...shape, marker } },
    async (args) => {
      const { marker: m, ...value } = args;
      return record(name, m ?? '', value);
    });
}

server.registerTool('open_path', {
  description: 'Read a file; relative paths are under the server root',
  inputSchema: { path: z.string(), marker },
}, async ({ path, marker: m }) => {
  const expanded = path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
  const target = isAbsolute(expanded) ? resolve(expanded) : resolve(root, expanded);
  const content = readFileSync(target, 'utf8'); // throws (an isError result) when it cannot
  record('open_path', m ?? '', { opened: realpathSync(target) });
  return { content: [{ type: 'text', text: content }] };
});

await server.connect(new StdioServerTransport());
