// A minimal stdio MCP server on Node's JSON.parse (plain script; the last duplicate key wins).
//
// Reads the way a hand-written JavaScript server does: msg.method, msg.params, params.name,
// params.arguments; a message with a method is handled whatever its jsonrpc or id, answered when it
// has an `id` property (any value), and a tools/call is executed with or without an id. Each execution
// is appended to $DIFF_EXEC_LOG as {"stack","tool","arguments","request"} before the answer.
import { appendFileSync } from "node:fs";

const STACK = "node";
const LOG = process.env.DIFF_EXEC_LOG;
const SEEN = process.env.DIFF_SEEN_LOG; // every line received, as it came
const str = { type: "string" };
const schema = (props) => ({ type: "object", properties: props });
const TOOLS = [
  { name: "echo", description: "Echoes message", inputSchema: schema({ message: str }) },
  { name: "read_file", description: "Reads path", inputSchema: schema({ path: str }) },
  { name: "wipe", description: "Wipes target", inputSchema: schema({ target: str }) },
];
const NAMES = new Set(TOOLS.map((t) => t.name));

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

function execute(tool, args, request) {
  let logged = args;
  let text = tool;
  if (tool === "read_file") {
    const path = args && typeof args === "object" ? args.path : undefined;
    logged = { path: path ?? null };
    text = `read ${path}`;
  } else if (tool === "echo" && args && typeof args === "object") {
    text = `Echo: ${args.message}`;
  }
  if (LOG) appendFileSync(LOG, JSON.stringify({ stack: STACK, tool, arguments: logged ?? null, request }) + "\n");
  return { content: [{ type: "text", text }] };
}

function handle(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: String(e) } });
    return;
  }
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || !("method" in msg)) return;
  const hasId = "id" in msg;
  const answer = (result, error) => {
    if (!hasId) return;
    send(error ? { jsonrpc: "2.0", id: msg.id, error } : { jsonrpc: "2.0", id: msg.id, result });
  };
  const params = msg.params;
  switch (msg.method) {
    case "initialize":
      answer({
        protocolVersion: params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "differential-node", version: "1" },
      });
      break;
    case "ping":
      answer({});
      break;
    case "tools/list":
      answer({ tools: TOOLS });
      break;
    case "tools/call": {
      if (!params || typeof params !== "object") {
        answer(undefined, { code: -32602, message: "params must be an object" });
        break;
      }
      if (!NAMES.has(params.name)) {
        answer(undefined, { code: -32602, message: `unknown tool ${JSON.stringify(params.name)}` });
        break;
      }
      answer(execute(params.name, params.arguments, text));
      break;
    }
    default:
      if (typeof msg.method === "string" && msg.method.startsWith("notifications/")) break;
      answer(undefined, { code: -32601, message: `method not found: ${msg.method}` });
  }
}

// Split on "\n" bytes only; decode each line as UTF-8 on its own.
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let nl;
  while ((nl = pending.indexOf(0x0a)) >= 0) {
    let line = pending.subarray(0, nl);
    pending = pending.subarray(nl + 1);
    if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (SEEN && line.length) appendFileSync(SEEN, Buffer.concat([line, Buffer.from("\n")]));
    const text = line.toString("utf8");
    if (text.trim()) {
      try {
        handle(text);
      } catch (e) {
        send({ jsonrpc: "2.0", id: null, error: { code: -32603, message: String(e) } });
      }
    }
  }
});
process.stdin.on("end", () => process.exit(0));
