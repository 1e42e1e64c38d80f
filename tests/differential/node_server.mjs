// A minimal stdio MCP server on Node's JSON.parse (plain script; the last duplicate key wins).
//
// Reads the way a hand-written JavaScript server does: msg.method, msg.params, params.name,
// params.arguments; a message with a method is handled whatever its jsonrpc or id, answered when it
// has an `id` property (any value), and a tools/call is executed with or without an id. Each execution
// is appended to $DIFF_EXEC_LOG as {"stack","tool","arguments","request"} before the answer. Reading
// a line and the stdin loop are stdio.mjs's, shared with the doors server.
import { appendFileSync } from "node:fs";
import { request, serveLines } from "./stdio.mjs";

const STACK = "node";
const LOG = process.env.DIFF_EXEC_LOG;
const str = { type: "string" };
const schema = (props) => ({ type: "object", properties: props });
const TOOLS = [
  { name: "echo", description: "Echoes message", inputSchema: schema({ message: str }) },
  { name: "read_file", description: "Reads path", inputSchema: schema({ path: str }) },
  { name: "wipe", description: "Wipes target", inputSchema: schema({ target: str }) },
];
const NAMES = new Set(TOOLS.map((t) => t.name));

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
  const read = request(text);
  if (!read) return; // a parse error (answered), a response or junk: nothing to execute
  const { msg, answer } = read;
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

// Every line received, as it came, goes to $DIFF_SEEN_LOG.
serveLines(handle, { seen: process.env.DIFF_SEEN_LOG });
