// A TypeScript SDK 1.x client (@modelcontextprotocol/sdk, 2025 era) driven by the interop matrix
// (tests/e2e/mcp2/test_matrix_mcp2.py, row ts1).
//
// Usage: node client1.mjs '<json plan>'
//   plan = {
//     "url": "http://127.0.0.1:PORT/mcp/everything",   // HTTP target, or:
//     "stdio": {"command": "...", "args": [...], "env": {...}},
//     "sse": true,                                     // with "url": the legacy HTTP+SSE transport
//     "token": "...",                                  // sent as Authorization: Bearer <token>
//     "calls": [{"name": "echo", "arguments": {...}}]   // tools/call, in order
//   }
// Prints one JSON object on stdout: {"serverVersion", "capabilities", "instructions", "tools" (every
// page), "results": [CallToolResult | {"thrown": msg}], "resources", "read", "prompts", "ping"}.
// Exits 0 when the plan ran (tool errors are results), 1 when connecting or listing failed.
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.PORTCULLIS_TEST_PEERS ?? resolve(here, '..', '..', 'peers');
const require = createRequire(resolve(peers, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');

const plan = JSON.parse(process.argv[2] ?? '{}');

function transportFor(p) {
    if (p.url) {
        const headers = p.token ? { Authorization: `Bearer ${p.token}` } : {};
        if (p.sse) {
            // The SSE transport opens its GET with eventSourceInit and POSTs with requestInit.
            const fetchWithAuth = (url, init) => fetch(url, { ...init, headers: { ...(init?.headers ?? {}), ...headers } });
            return new SSEClientTransport(new URL(p.url), { eventSourceInit: { fetch: fetchWithAuth }, requestInit: { headers } });
        }
        return new StreamableHTTPClientTransport(new URL(p.url), { requestInit: { headers } });
    }
    if (p.stdio) {
        return new StdioClientTransport({
            command: p.stdio.command,
            args: p.stdio.args ?? [],
            env: { ...process.env, ...(p.stdio.env ?? {}) },
            stderr: 'inherit',
        });
    }
    throw new Error('plan needs "url" or "stdio"');
}

// Every page of a list method.
async function allPages(list, field) {
    const items = [];
    let cursor;
    for (let i = 0; i < 100; i++) {
        const page = await list(cursor ? { cursor } : undefined);
        items.push(...page[field]);
        cursor = page.nextCursor;
        if (!cursor) return items;
    }
    throw new Error(`${field}: more than 100 pages`);
}

async function attempt(fn) {
    try {
        return await fn();
    } catch (err) {
        return { thrown: String(err?.message ?? err) };
    }
}

async function main() {
    const client = new Client({ name: 'portcullis-e2e-ts1', version: '1.0.0' }, { capabilities: {} });
    const timer = setTimeout(() => {
        console.error('client1.mjs: gave up after 45 s');
        process.exit(3);
    }, 45_000);
    try {
        await client.connect(transportFor(plan));
        const caps = client.getServerCapabilities() ?? {};
        const out = {
            serverVersion: client.getServerVersion() ?? null,
            capabilities: caps,
            instructions: client.getInstructions() ?? null,
            tools: await allPages((p) => client.listTools(p), 'tools'),
            results: [],
        };
        const names = new Set(out.tools.map((t) => t.name));
        for (const call of plan.calls ?? []) {
            if (names.has(call.name)) {
                out.results.push(await attempt(() => client.callTool({ name: call.name, arguments: call.arguments ?? {} })));
            }
        }
        if (caps.resources) {
            out.resources = await allPages((p) => client.listResources(p), 'resources');
            out.templates = await allPages((p) => client.listResourceTemplates(p), 'resourceTemplates');
            if (out.resources.length > 0) {
                out.read = await attempt(() => client.readResource({ uri: out.resources[0].uri }));
            }
        }
        if (caps.prompts) out.prompts = await allPages((p) => client.listPrompts(p), 'prompts');
        out.ping = await attempt(() => client.ping());
        process.stdout.write(JSON.stringify(out) + '\n');
    } finally {
        clearTimeout(timer);
        await client.close().catch(() => {});
    }
}

main().then(
    () => process.exit(0),
    (err) => {
        console.error(`client1.mjs: ${err?.stack ?? err}`);
        process.exit(1);
    },
);
