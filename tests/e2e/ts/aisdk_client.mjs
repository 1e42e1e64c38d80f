// The Vercel AI SDK's MCP client (@ai-sdk/mcp), driven by tests/e2e/mcp2/test_aisdk_client_mcp2.py.
// It is its own dual-era implementation (no @modelcontextprotocol package underneath): over
// stdio it probes `server/discover` first and falls back to `initialize` when no answer comes
// within a second, and it validates every message against its own strict JSON-RPC schemas.
//
// Usage: node aisdk_client.mjs '<json plan>'
//   plan = {
//     "stdio": {"command": "...", "args": [...], "env": {...}},   // a server the client launches, or:
//     "url": "http://127.0.0.1:PORT/mcp/everything", "token": "...",   // Streamable HTTP
//     "discovery": true | false,   // protocolVersionDiscovery (default true, the SDK's default)
//     "waitForDiscover": true,     // stdio: wait for server/discover's answer instead of the SDK's
//                                  // 1 s (for a baseline against a server slow to start)
//     "calls": [{"name": "echo", "arguments": {...}}]   // tools/call in order; two other steps:
//                                                      //   {"signal": "label"}: print {"signal": "label"}
//                                                      //   {"await": true}: read one line from stdin first
//   }
// Prints one JSON object on stdout (after any signal lines):
//   {"protocolVersion", "era", "serverName", "tools": [{name, ...}], "results": [CallToolResult | {"thrown": msg}],
//    "callMs": [ms per call]}
// Exits 0 when the plan ran (tool errors are results), 1 when connecting or listing failed.
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.PORTCULLIS_TEST_PEERS ?? resolve(here, '..', '..', 'peers');
const require = createRequire(resolve(peers, 'package.json'));
// ESM-only packages: resolve them from tests/peers, then import by path.
const { createMCPClient } = await import(require.resolve('@ai-sdk/mcp'));
const { StdioMCPTransport } = await import(require.resolve('@ai-sdk/mcp/mcp-stdio'));

const plan = JSON.parse(process.argv[2] ?? '{}');
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function transportFor(p) {
    if (p.stdio) {
        const transport = new StdioMCPTransport({
            command: p.stdio.command,
            args: p.stdio.args ?? [],
            env: { ...process.env, ...(p.stdio.env ?? {}) },
            stderr: 'inherit',
        });
        transport.waitsForProtocolVersionDiscovery = p.waitForDiscover ?? false;
        return transport;
    }
    if (p.url) {
        const headers = p.token ? { Authorization: `Bearer ${p.token}` } : {};
        return { type: 'http', url: p.url, headers };
    }
    throw new Error('plan needs "stdio" or "url"');
}

async function runCalls(client, calls) {
    const results = [];
    const callMs = [];
    for (const call of calls) {
        if (call.signal) {
            process.stdout.write(JSON.stringify({ signal: call.signal }) + '\n');
        } else if (call.await) {
            await stdinLines.next();
        } else {
            const started = performance.now();
            try {
                results.push(await client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
            } catch (err) {
                results.push({ thrown: String(err?.message ?? err) });
            }
            callMs.push(performance.now() - started);
        }
    }
    return { results, callMs };
}

async function main() {
    const timer = setTimeout(() => {
        console.error('aisdk_client.mjs: gave up after 45 s');
        process.exit(3);
    }, 45_000);
    const client = await createMCPClient({
        transport: transportFor(plan),
        clientName: 'portcullis-e2e-aisdk',
        protocolVersionDiscovery: plan.discovery ?? true,
    });
    try {
        const { tools } = await client.listTools();
        const { results, callMs } = await runCalls(client, plan.calls ?? []);
        process.stdout.write(
            JSON.stringify({
                protocolVersion: client.protocolVersion ?? null,
                era: client.protocolEra ?? null,
                serverName: client.serverInfo?.name ?? null,
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
        console.error(`aisdk_client.mjs: ${err?.stack ?? err}`);
        process.exit(1);
    },
);
