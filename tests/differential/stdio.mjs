// The stdio plumbing of the hand-written Node servers: node_server.mjs here and the doors server
// (tests/e2e/peers/doors_node_server.mjs, which imports it by its path relative to itself).
//
// request(text) reads a line the way a hand-written JavaScript server does, and serveLines(handle)
// feeds it the lines of stdin; what a server does with a message stays in that server.
import { appendFileSync } from "node:fs";

export function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

// JSON.parse (the last duplicate key wins), a parse error answered at once. Gives { msg, answer }
// for an object with a `method` property, whatever its jsonrpc or id; null for responses and junk.
// answer(result) or answer(undefined, error) sends only when the message has an `id` property (any
// value, null too).
export function request(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: String(e) } });
    return null;
  }
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || !("method" in msg)) return null;
  const hasId = "id" in msg;
  const answer = (result, error) => {
    if (!hasId) return;
    send(error ? { jsonrpc: "2.0", id: msg.id, error } : { jsonrpc: "2.0", id: msg.id, result });
  };
  return { msg, answer };
}

// Calls handle(text) for each line of stdin: split on "\n" bytes only (U+2028 may come raw), one
// trailing CR dropped, each line decoded as UTF-8 on its own, blank lines skipped. With `seen`, every
// non-empty line is appended to that file as it came (what the gateway forwarded). A message that
// crashes the handler is answered with an internal error and serving goes on: a dead server would
// hide what later messages do. Exits when stdin ends.
export function serveLines(handle, { seen } = {}) {
  let pending = Buffer.alloc(0);
  process.stdin.on("data", (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      let line = pending.subarray(0, nl);
      pending = pending.subarray(nl + 1);
      if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      if (seen && line.length) appendFileSync(seen, Buffer.concat([line, Buffer.from("\n")]));
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
}
