// A minimal stdio MCP server that reads resources/read, resources/subscribe and prompts/get the way a
// hand-written JavaScript server does: JSON.parse (the last duplicate key wins), params.uri /
// params.name, and the WHATWG URL parser (`new URL(uri)`, which drops tabs and newlines, trims
// spaces and controls, and reads `\` as `/` in special schemes such as file:) with
// decodeURIComponent for the path it would open. Every such request is appended to $DOORS_LOG as
// {"stack","method","uri","name","path","host","user","parse_error","request"} before the answer.
// tools/call echo is answered too (the suite's barrier). Reading a line and the stdin loop are the
// differential Node server's (tests/differential/stdio.mjs).
import { appendFileSync } from "node:fs";
import { request, serveLines } from "../../differential/stdio.mjs";

const LOG = process.env.DOORS_LOG;

function log(entry) {
  if (LOG) appendFileSync(LOG, JSON.stringify(entry) + "\n");
}

function decode(path) {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function handle(text) {
  const read = request(text);
  if (!read) return;
  const { msg, answer } = read;
  const params = msg.params && typeof msg.params === "object" ? msg.params : {};
  switch (msg.method) {
    case "initialize":
      answer({
        protocolVersion: "2025-06-18",
        capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
        serverInfo: { name: "doors-node", version: "1" },
      });
      break;
    case "ping":
      answer({});
      break;
    case "tools/list":
      answer({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
      break;
    case "tools/call":
      answer({ content: [{ type: "text", text: "Echo" }] });
      break;
    case "prompts/get":
      log({ stack: "node", method: msg.method, name: params.name, request: text });
      answer({ messages: [{ role: "user", content: { type: "text", text: `prompt ${params.name}` } }] });
      break;
    case "resources/read":
    case "resources/subscribe": {
      const entry = { stack: "node", method: msg.method, uri: params.uri, request: text };
      try {
        const u = new URL(params.uri);
        entry.path = decode(u.pathname);
        entry.host = u.hostname;
        entry.user = u.username || null;
      } catch (e) {
        entry.parse_error = String(e);
      }
      log(entry);
      if (msg.method === "resources/subscribe") answer({});
      else answer({ contents: [{ uri: params.uri, text: `read ${entry.path}` }] });
      break;
    }
    default:
      if (typeof msg.method === "string" && msg.method.startsWith("notifications/")) break;
      answer(undefined, { code: -32601, message: `method not found: ${msg.method}` });
  }
}

serveLines(handle);
