"""Hostile and control messages for the differential tests (tests/differential/README.md).

Each case is one JSON-RPC line as raw text. In the template `@M@` becomes a fresh marker (so every
execution a server logs can be traced to the message that caused it) and `@ID@` a fresh integer
request id. `strict` is what the gateway's strict reading (DESIGN.md §8, fuzz/fuzz_targets/strict_reader.rs)
does with the message:

  "refuse"  Message::parse refuses it: the gateway must answer with an error and forward nothing;
  "accept"  it is an unambiguous message: it must go through the policy as usual;
  "either"  the strict reading leaves it open (only the no-slip invariant applies).

`runs` names the tool every stack must execute for a control message (the harness itself is checked by
these: an allowed call that never runs would make every other result meaningless).

Written for this project; the classes follow the problem statement: (1) id null / missing id,
(2) keys equal after unescaping or under case folding, duplicate keys, (3) ids that differ only in
their bytes, plus strict-JSON and shape rules.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    cls: str
    template: str
    strict: str = "refuse"
    runs: str | None = None

    def render(self, marker: str, rid: int) -> bytes:
        text = self.template.replace("@M@", marker).replace("@ID@", str(rid))
        return text.encode("utf-8", "surrogatepass")


J = '"jsonrpc":"2.0"'
WIPE = '{"name":"wipe","arguments":{"target":"@M@"}}'
ECHO = '{"name":"echo","arguments":{"message":"@M@"}}'
OK_PATH = '"/tmp/allowed/@M@"'
BAD_PATH = '"/etc/@M@"'


def call(params: str, extra: str = "") -> str:
    return '{' + J + ',"id":@ID@,"method":"tools/call","params":' + params + extra + '}'


CASES: list[Case] = [
    # ---- controls: must still work -------------------------------------------------------------
    Case("control-echo", "control", call(ECHO), "accept", runs="echo"),
    Case("control-echo-escaped-value", "control",
         call(r'{"name":"ech\u006f","arguments":{"message":"caf\u00e9 \u2028 \ud83d\ude00 @M@"}}'), "accept", runs="echo"),
    Case("control-echo-escaped-key", "control",
         call(r'{"n\u0061me":"echo","\u0061rguments":{"m\u0065ssage":"@M@"}}'), "accept", runs="echo"),
    Case("control-echo-meta", "control",
         call('{"name":"echo","arguments":{"message":"@M@"},"_meta":{"progressToken":"p-@M@"}}'), "accept", runs="echo"),
    Case("control-read-allowed", "control",
         call('{"name":"read_file","arguments":{"path":' + OK_PATH + '}}'), "accept", runs="read_file"),
    Case("control-read-denied", "control", call('{"name":"read_file","arguments":{"path":' + BAD_PATH + '}}'), "accept"),
    Case("control-wipe-denied", "control", call(WIPE), "accept"),
    Case("control-unlisted-denied", "control", call('{"name":"format_disk","arguments":{"target":"@M@"}}'), "accept"),
    Case("control-string-id", "control",
         '{' + J + ',"id":"s-@ID@","method":"tools/call","params":' + ECHO + '}', "accept", runs="echo"),
    Case("control-escaped-string-id", "id-bytes",
         '{' + J + r',"id":"\u0031@ID@","method":"tools/call","params":' + ECHO + '}', "accept", runs="echo"),
    Case("control-nul-in-name", "control",
         call(r'{"name":"wipe\u0000","arguments":{"target":"@M@"}}'), "accept"),
    Case("control-method-case", "method", '{' + J + ',"id":@ID@,"method":"Tools/Call","params":' + WIPE + '}', "accept"),
    Case("control-method-space", "method", '{' + J + ',"id":@ID@,"method":"tools/call ","params":' + WIPE + '}', "accept"),

    # ---- (1) what is a request ---------------------------------------------------------------
    Case("id-null-call", "id-null", '{' + J + ',"id":null,"method":"tools/call","params":' + WIPE + '}'),
    Case("id-null-ping", "id-null", '{' + J + ',"id":null,"method":"ping","params":{"_meta":{"m":"@M@"}}}'),
    Case("no-id-call", "no-id", '{' + J + ',"method":"tools/call","params":' + WIPE + '}'),
    Case("no-id-call-read", "no-id",
         '{' + J + ',"method":"tools/call","params":{"name":"read_file","arguments":{"path":' + BAD_PATH + '}}}'),
    Case("no-id-ping", "no-id", '{' + J + ',"method":"ping","params":{"_meta":{"m":"@M@"}}}'),
    Case("no-id-upper-ID", "envelope-case", '{' + J + ',"ID":@ID@,"method":"tools/call","params":' + WIPE + '}'),
    Case("notification-Method-call", "envelope-case",
         '{' + J + ',"method":"notifications/initialized","Method":"tools/call","params":' + WIPE + '}'),
    Case("id-bool", "id-shape", '{' + J + ',"id":true,"method":"tools/call","params":' + WIPE + '}'),
    Case("id-object", "id-shape", '{' + J + ',"id":{"a":1},"method":"tools/call","params":' + WIPE + '}'),
    Case("id-fraction", "id-shape", '{' + J + ',"id":1.0,"method":"tools/call","params":' + ECHO + '}'),
    Case("id-exponent", "id-shape", '{' + J + ',"id":1e0,"method":"tools/call","params":' + ECHO + '}'),
    Case("id-minus-zero", "id-shape", '{' + J + ',"id":-0,"method":"tools/call","params":' + ECHO + '}', "either"),
    Case("id-over-u64", "id-shape", '{' + J + ',"id":18446744073709551616,"method":"tools/call","params":' + ECHO + '}'),
    Case("jsonrpc-1.0", "jsonrpc", '{"jsonrpc":"1.0","id":@ID@,"method":"tools/call","params":' + ECHO + '}'),
    Case("jsonrpc-missing", "jsonrpc", '{"id":@ID@,"method":"tools/call","params":' + ECHO + '}'),
    Case("jsonrpc-number", "jsonrpc", '{"jsonrpc":2.0,"id":@ID@,"method":"tools/call","params":' + ECHO + '}'),
    Case("method-number", "method", '{' + J + ',"id":@ID@,"method":7,"params":' + WIPE + '}'),

    # ---- (2) envelope keys: duplicates and case folding ----------------------------------------
    Case("Method-after-method", "envelope-case",
         '{' + J + ',"id":@ID@,"method":"ping","Method":"tools/call","params":' + WIPE + '}'),
    Case("METHOD-after-method", "envelope-case",
         '{' + J + ',"id":@ID@,"method":"ping","METHOD":"tools/call","params":' + WIPE + '}'),
    Case("dup-method", "duplicate", '{' + J + ',"id":@ID@,"method":"ping","method":"tools/call","params":' + WIPE + '}'),
    Case("dup-method-escaped", "escaped-key",
         '{' + J + r',"id":@ID@,"method":"ping","m\u0065thod":"tools/call","params":' + WIPE + '}'),
    Case("Params-after-params", "envelope-case", call(ECHO, ',"Params":' + WIPE)),
    Case("paramſ-after-params", "fold", call(ECHO, ',"paramſ":' + WIPE)),
    Case(r"param\u017f-escaped", "fold", call(ECHO, r',"param\u017f":' + WIPE)),
    Case("dup-params", "duplicate", call(ECHO, ',"params":' + WIPE)),
    Case("ID-and-id", "envelope-case", '{' + J + ',"id":@ID@,"ID":null,"method":"tools/call","params":' + WIPE + '}'),
    Case("dup-id", "duplicate", '{' + J + ',"id":@ID@,"id":null,"method":"tools/call","params":' + WIPE + '}'),
    Case("dup-jsonrpc", "duplicate", '{"jsonrpc":"2.0","jsonrpc":"1.0","id":@ID@,"method":"tools/call","params":' + ECHO + '}'),

    # ---- (2) params keys ---------------------------------------------------------------------
    Case("Name-after-name", "params-case", call('{"name":"echo","Name":"wipe","arguments":{"message":"@M@","target":"@M@"}}')),
    Case("NAME-after-name", "params-case", call('{"name":"echo","NAME":"wipe","arguments":{"message":"@M@","target":"@M@"}}')),
    Case("nAme-after-name", "params-case", call('{"name":"echo","nAme":"wipe","arguments":{"message":"@M@","target":"@M@"}}')),
    Case("Name-only", "params-case", call('{"Name":"wipe","arguments":{"target":"@M@"}}')),
    Case("dup-name", "duplicate", call('{"name":"echo","name":"wipe","arguments":{"message":"@M@","target":"@M@"}}')),
    Case("dup-name-escaped", "escaped-key", call(r'{"name":"echo","n\u0061me":"wipe","arguments":{"message":"@M@","target":"@M@"}}')),
    Case("Arguments-after-arguments", "params-case",
         call('{"name":"read_file","arguments":{"path":' + OK_PATH + '},"Arguments":{"path":' + BAD_PATH + '}}')),
    Case("argumentſ-after-arguments", "fold",
         call('{"name":"read_file","arguments":{"path":' + OK_PATH + '},"argumentſ":{"path":' + BAD_PATH + '}}')),
    Case("argumentſ-only", "fold", call('{"name":"read_file","argumentſ":{"path":' + BAD_PATH + '}}')),
    Case("dup-arguments", "duplicate",
         call('{"name":"read_file","arguments":{"path":' + OK_PATH + '},"arguments":{"path":' + BAD_PATH + '}}')),
    Case("dup-arguments-reversed", "duplicate",
         call('{"name":"read_file","arguments":{"path":' + BAD_PATH + '},"arguments":{"path":' + OK_PATH + '}}')),

    # ---- (2) argument keys -------------------------------------------------------------------
    Case("PATH-after-path", "args-case", call('{"name":"read_file","arguments":{"path":' + OK_PATH + ',"PATH":' + BAD_PATH + '}}')),
    Case("Path-after-path", "args-case", call('{"name":"read_file","arguments":{"path":' + OK_PATH + ',"Path":' + BAD_PATH + '}}')),
    Case("Path-only", "args-case", call('{"name":"read_file","arguments":{"Path":' + BAD_PATH + '}}'), "accept"),
    Case("dup-path", "duplicate", call('{"name":"read_file","arguments":{"path":' + OK_PATH + ',"path":' + BAD_PATH + '}}')),
    Case("dup-path-reversed", "duplicate", call('{"name":"read_file","arguments":{"path":' + BAD_PATH + ',"path":' + OK_PATH + '}}')),
    Case("dup-path-escaped", "escaped-key",
         call(r'{"name":"read_file","arguments":{"path":' + OK_PATH + r',"p\u0061th":' + BAD_PATH + '}}')),
    Case("kelvin-key", "fold", call('{"name":"echo","arguments":{"message":"@M@","k":1,"\u212a":2}}'.replace("\u212a", r"\u212a"))),
    Case("sharp-s-keys", "fold", call('{"name":"echo","arguments":{"message":"@M@","stra\u00dfe":1,"stra\u1e9ee":2}}')),
    Case("sigma-keys", "fold", call('{"name":"echo","arguments":{"message":"@M@","\u03c3":1,"\u03c2":2}}')),
    Case("nested-dup", "duplicate", call('{"name":"echo","arguments":{"message":"@M@","deep":[{"a":1,"a":2}]}}')),
    Case("nested-case", "fold", call('{"name":"echo","arguments":{"message":"@M@","deep":{"x":{"Key":1,"key":2}}}}')),

    # ---- shape ---------------------------------------------------------------------------------
    Case("params-array", "shape", '{' + J + ',"id":@ID@,"method":"tools/call","params":["wipe",{"target":"@M@"}]}'),
    Case("params-string", "shape", '{' + J + ',"id":@ID@,"method":"tools/call","params":"wipe @M@"}'),
    Case("ping-params-array", "shape", '{' + J + ',"id":@ID@,"method":"ping","params":["@M@"]}'),
    Case("arguments-string", "shape", call('{"name":"echo","arguments":"{\\"message\\":\\"@M@\\"}"}')),
    Case("arguments-array", "shape", call('{"name":"wipe","arguments":["@M@"]}')),
    Case("name-number", "shape", call('{"name":7,"arguments":{"target":"@M@"}}')),
    Case("arguments-null", "shape", call('{"name":"wipe","arguments":null}'), "accept"),

    # ---- strict JSON -----------------------------------------------------------------------
    Case("bom", "json", "\ufeff" + call(WIPE)),
    Case("trailing-garbage", "json", call(ECHO) + 'x'),
    Case("second-object", "json", call(ECHO) + call(WIPE)),
    Case("trailing-comma", "json", call('{"name":"echo","arguments":{"message":"@M@",}}')),
    Case("comment", "json", call('{"name":"echo",/*x*/"arguments":{"message":"@M@"}}')),
    Case("lone-surrogate", "json", call(r'{"name":"echo","arguments":{"message":"\ud800 @M@"}}')),
    Case("lone-surrogate-key", "json", call(r'{"name":"echo","arguments":{"message":"@M@","\udc00":1}}')),
    Case("number-overflow", "json", call('{"name":"echo","arguments":{"message":"@M@","n":1e400}}')),
    Case("nan", "json", call('{"name":"echo","arguments":{"message":"@M@","n":NaN}}')),
    Case("deep-nesting", "json", call('{"name":"echo","arguments":{"message":"@M@","d":' + "[" * 200 + "]" * 200 + '}}')),
    Case("single-quotes", "json", call("{'name':'wipe','arguments':{'target':'@M@'}}")),
]


def by_name() -> dict[str, Case]:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    return {c.name: c for c in CASES}
