// A TypeScript-SDK v2 client (@modelcontextprotocol/client, dual-era) driven by tests/e2e/mcp2.
//
// Usage: node client.mjs '<json plan>'
//   plan = {
//     "url": "http://127.0.0.1:PORT/mcp/everything",   // Streamable HTTP target, or:
//     "sse": true,                                     // with "url": the legacy HTTP+SSE transport
//     "stdio": {"command": "...", "args": [...], "env": {...}},
//     "token": "...",                                  // sent as Authorization: Bearer <token>
//     "mode": "auto" | "legacy",                       // version negotiation (default "auto")
//     "calls": [{"name": "echo", "arguments": {...}}]   // tools/call, in order; two other steps:
//                                                      //   {"signal": "label"}: print {"signal": "label"} on stdout
//                                                      //   {"await": true}: read one line from stdin first
//   }
// Prints one JSON object on stdout (after any signal lines):
//   {"protocolVersion", "era", "serverVersion", "tools": [{name, ...}], "results": [CallToolResult | {"thrown": msg}],
//    "callMs": [ms per call]}
// Exits 0 when the plan ran (tool errors are results), 1 when connecting or listing failed.
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.PORTCULLIS_TEST_PEERS ?? resolve(here, '..', '..', 'peers');
const require = createRequire(resolve(peers, 'package.json'));
const { Client, SSEClientTransport, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

const plan = JSON.parse(process.argv[2] ?? '{}');
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function transportFor(p) {
    if (p.url) {
        const headers = p.token ? { Authorization: `Bearer ${p.token}` } : {};
        if (p.sse) return new SSEClientTransport(new URL(p.url), { requestInit: { headers } });
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

async function main() {
    const client = new Client(
        { name: 'portcullis-e2e-ts', version: '2.0.0' },
        { versionNegotiation: { mode: plan.mode ?? 'auto' } },
    );
    const timer = setTimeout(() => {
        console.error('client.mjs: gave up after 45 s');
        process.exit(3);
    }, 45_000);
    try {
        await client.connect(transportFor(plan));
        const { tools } = await client.listTools();
        const results = [];
        const callMs = [];
        for (const call of plan.calls ?? []) {
            if (call.signal) {
                process.stdout.write(JSON.stringify({ signal: call.signal }) + '\n');
                continue;
            }
            if (call.await) {
                await stdinLines.next();
                continue;
            }
            const started = performance.now();
            try {
                results.push(await client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
            } catch (err) {
                results.push({ thrown: String(err?.message ?? err) });
            }
            callMs.push(performance.now() - started);
        }
        process.stdout.write(
            JSON.stringify({
                protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
                era: client.getProtocolEra() ?? null,
                serverVersion: client.getServerVersion() ?? null,
                tools,
                results,
                callMs,
            }) + '\n',
        );
    } finally {
        clearTimeout(timer);
        await client.close().catch(() => {});
    }
}

main().then(
    () => process.exit(0),
    (err) => {
        console.error(`client.mjs: ${err?.stack ?? err}`);
        process.exit(1);
    },
);
