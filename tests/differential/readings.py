"""Spellings of denied values, for the semantic layer (tests/e2e/mcp1/test_readings_mcp1.py).

A deny rule is written against a value (`count` > 100, `force` = true, a path under a directory);
servers do not run the JSON as sent but what their SDK makes of it. This module spells each denied
value in the ways a mainstream SDK may read back as that value, sends them (the test does), and
states the invariant per tool as a predicate over what the server logged it executed:

    nothing a server executes was allowed by a deny rule

Probes come from three places, each with an `origin` (besides the controls, `control-allow` and
`control-deny`, and `symlink`, a documented limitation kept apart):
  * `issue`: every example of issue 28, by name (always sent);
  * `named`: hand-picked spellings per class (always sent);
  * `generated`: compositions drawn by a seeded `random.Random` (READINGS_SEED, default fixed;
    READINGS_CASES per class, default below), so a CI run is reproducible and a local run can explore.
"""

from __future__ import annotations

import json
import os
import random
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIG = 2**53  # 9007199254740992: the vm id the policy denies; 2^53 + 1 rounds onto it in a double
SEED = int(os.environ.get("READINGS_SEED", "28"))
CASES = int(os.environ.get("READINGS_CASES", "120"))


@dataclass(frozen=True)
class Probe:
    """One tools/call: `arguments` is JSON text (so spellings like `5e2` survive) minus the marker."""

    name: str
    tool: str
    arguments: str
    origin: str  # issue | named | generated | symlink | control-allow | control-deny

    def body(self, marker: str, rid: int) -> bytes:
        args = self.arguments.strip()
        inner = args[1:-1].strip()
        marked = '{"marker":' + json.dumps(marker) + ("," + inner if inner else "") + "}"
        return ('{"jsonrpc":"2.0","id":' + str(rid) + ',"method":"tools/call","params":{"name":'
                + json.dumps(self.tool) + ',"arguments":' + marked + "}}").encode()


def arg(key: str, value_json: str) -> str:
    return "{" + json.dumps(key) + ":" + value_json + "}"


def js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# What the policy denies, and the invariant over executions

def count_denied(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 100


def cap_violated(v: Any) -> bool:
    """`cap` is allowed only when count <= 100: anything else that ran (a non-number too) broke it."""
    return not (isinstance(v, (int, float)) and not isinstance(v, bool) and v <= 100)


def under(opened: str, directory: Path) -> bool:
    a = unicodedata.normalize("NFC", opened)
    d = unicodedata.normalize("NFC", str(directory))
    return a == d or a.startswith(d.rstrip("/") + "/")


def violation(tool: str, value: dict[str, Any], denied_dirs: list[Path]) -> str | None:
    """Why an execution breaks the policy, or None. `value` is the tool's logged typed arguments."""
    if tool.startswith("spend") and count_denied(value.get("count")):
        return f"count {value['count']!r} > 100 ran"
    if tool == "cap" and cap_violated(value.get("count")):
        return f"count {value.get('count')!r} ran under an allow rule for count <= 100"
    if tool.startswith("toggle") and value.get("force") is True:
        return "force true ran"
    if tool == "configure":
        opts = value.get("opts") or {}
        if opts.get("force") is True:
            return "opts.force true ran"
        if count_denied(opts.get("count")):
            return f"opts.count {opts['count']!r} > 100 ran"
    if tool == "skip" and value.get("skip") is True:
        return "skip true ran"
    if tool == "vm" and value.get("vm") == BIG:
        return f"vm {BIG} ran"
    if tool in ("open_path", "read_text_file", "read_file"):
        opened = str(value.get("opened", ""))
        for d in denied_dirs:
            if under(opened, d):
                return f"opened {opened} under denied {d}"
    return None


def policy(denied_dirs: list[Path], path_tools: tuple[str, ...] = ("open_path",)) -> dict[str, Any]:
    """The same rules on every server: default allow, so only the deny rules stand between a spelling
    and its execution (cap: default deny with an allow rule, the other direction)."""
    deny = "deny"
    count_rule = [{"when": {"arguments.count": {"gt": 100}}, "action": deny, "reason": "over budget"}]
    force_rule = [{"when": {"arguments.force": {"eq": True}}, "action": deny, "reason": "no forcing"}]
    tools: dict[str, Any] = {
        "spend": {"rules": count_rule},
        "spend_strict": {"rules": count_rule},
        "spend_float": {"rules": count_rule},
        "spend_decimal": {"rules": count_rule},
        "spend_held": {"approval_timeout": 1, "rules": [
            {"when": {"arguments.count": {"gt": 100}}, "action": "require_approval", "reason": "a person approves"}]},
        "cap": {"action": deny, "reason": "over the cap",
                "rules": [{"when": {"arguments.count": {"lte": 100}}, "action": "allow"}]},
        "toggle*": {"rules": force_rule},
        "configure": {"rules": [
            {"when": {"arguments.opts.force": {"eq": True}}, "action": deny, "reason": "no forcing"},
            {"when": {"arguments.opts.count": {"gt": 100}}, "action": deny, "reason": "over budget"},
        ]},
        "skip": {"rules": [{"when": {"arguments.skip": {"eq": True}}, "action": deny, "reason": "no skipping"}]},
        "vm": {"rules": [{"when": {"arguments.vm": {"eq": BIG}}, "action": deny, "reason": "the vm is protected"}]},
    }
    path_rules = [{"when": {"arguments.path": {"path_under": str(d)}}, "action": deny, "reason": "private"}
                  for d in denied_dirs]
    for t in path_tools:
        tools[t] = {"rules": path_rules}
    return {"version": "1", "default": "allow", "tools": tools}


# --------------------------------------------------------------------------------------------------
# Spellings

DIGITS = {  # digit systems str.isdigit()/Number()/pydantic might read: ASCII, fullwidth, Arabic-Indic...
    "ascii": "0123456789",
    "fullwidth": "０１２３４５６７８９",
    "arabic-indic": "٠١٢٣٤٥٦٧٨٩",
    "ext-arabic-indic": "۰۱۲۳۴۵۶۷۸۹",
    "devanagari": "०१२३४५६७८९",
}
SPACES = ["", " ", "\t", "\n", "\r\n", "\u00a0", "\ufeff", "\u2028", "\u3000", "\u2003", "\x0b", "\x0c"]
NUMBER_TEXTS = ["inf", "+inf", "nan", "500", "+500", "0500", "00500", "500.0", "500.", "5e2", "5E2", "5e+2", ".5e3", "0.5e3",
                "50000e-2", "500e0", "0x1F4", "0X1f4", "0o764", "0b111110100", "5_00", "5_0_0", "500.000",
                "1_000", "1e3", "Infinity", "1e400", "5.00e2", "0x1f4p0"]
# 100.00000000000001 is the double just above 100 when parsed correctly rounded (Python, JavaScript,
# Go); a best-effort float parser may read 100 and let it through a `gt 100` deny rule.
NUMBER_LITERALS = ["500", "500.0", "5e2", "5E+2", "0.5e3", "50000e-2", "500.00000000000001", "1e400",
                   "100.5", "100.0000000000001", "100.00000000000001", "1.0000000000000001e2", "101", "1e3"]
BOOL_TEXTS = ["true", "True", "TRUE", "tRuE", "yes", "Yes", "YES", "on", "On", "1", "y", "Y", "t", "T",
              "enabled", "1.0", "false", "0", "no", "off", "f", "n", "x", "disabled"]
BOOL_LITERALS = ["true", "1", "1.0", "1e0", "2", "-1", "0.5", "[]", "{}", "[false]", "[true]", '["true"]',
                 "0", "false"]


def digits(text: str, system: str) -> str:
    table = str.maketrans("0123456789", DIGITS[system])
    return text.translate(table)


def wrap(text: str, left: str, right: str) -> str:
    return left + text + right


def number_spellings() -> list[tuple[str, str, str]]:
    """(name, JSON text of the value, origin) spelling 500 (and neighbours over 100)."""
    out = [(f"number literal {t}", t, "named") for t in NUMBER_LITERALS]
    out += [(f"string {t!r}", js(t), "named") for t in NUMBER_TEXTS]
    out += [(f"string {t!r} in {s}", js(digits(t, s)), "named") for s in DIGITS if s != "ascii"
            for t in ("500", "5e2", "500.0")]
    out += [(f"string ' 500' wrapped in {sp!r}", js(wrap("500", sp, sp)), "named") for sp in SPACES if sp]
    out += [("array [500]", "[500]", "named"), ("array ['500']", '["500"]', "named"),
            ("nested array [[500]]", "[[500]]", "named"), ("string in array [' 5e2 ']", '[" 5e2 "]', "named")]
    rng = random.Random(SEED)
    for _ in range(CASES):
        t = rng.choice(NUMBER_TEXTS)
        s = rng.choice(list(DIGITS)) if rng.random() < 0.3 else "ascii"
        text = wrap(digits(t, s), rng.choice(SPACES), rng.choice(SPACES))
        if rng.random() < 0.2:
            text = text.upper()
        value = js(text) if rng.random() < 0.9 else "[" + js(text) + "]"
        out.append((f"generated {value}", value, "generated"))
    return out


def bool_spellings() -> list[tuple[str, str, str]]:
    out = [(f"literal {t}", t, "named") for t in BOOL_LITERALS]
    out += [(f"string {t!r}", js(t), "named") for t in BOOL_TEXTS]
    rng = random.Random(SEED + 1)
    for _ in range(CASES // 2):
        t = rng.choice(BOOL_TEXTS)
        t = "".join(c.upper() if rng.random() < 0.5 else c for c in t)
        value = js(wrap(t, rng.choice(SPACES), rng.choice(SPACES)))
        out.append((f"generated {value}", value, "generated"))
    return out


def opts_spellings() -> list[tuple[str, str, str]]:
    """An options object whose `force` is true or whose `count` is over 100, spelled many ways."""
    objs = ['{"force":true}', '{"force":"true"}', '{"force":1}', '{"force":"yes"}', '{"force":"on"}',
            '{"force":false,"force":true}', '{"FORCE":true}', '{"Force":true}', '{"count":500}',
            '{"count":"500"}', '{"count":5e2}', '{"count":" 0x1F4 "}', '{"count":"５００"}']
    out = [(f"object {o}", o, "named") for o in objs]
    out += [(f"JSON in a string {o}", js(o), "named") for o in objs]
    out += [(f"JSON in a string with spaces {o}", js(" " + o.replace(":", ": ") + "\n"), "named") for o in objs[:4]]
    out += [(f"JSON in a string in a string {o}", js(js(o)), "named") for o in objs[:2]]
    out += [("JSON in a string with escapes", js('{"\\u0066orce":true}'), "named"),
            ("array holding the object", '[{"force":true}]', "named")]
    rng = random.Random(SEED + 2)
    for _ in range(CASES // 3):
        inner = rng.choice(['{"force":%s}', '{"count":%s}'])
        val = rng.choice(BOOL_LITERALS[:6] + [js(t) for t in BOOL_TEXTS[:16]]) if "force" in inner \
            else rng.choice(NUMBER_LITERALS[:6] + [js(t) for t in NUMBER_TEXTS[:12]])
        o = inner % val
        value = js(o) if rng.random() < 0.6 else o
        out.append((f"generated {value}", value, "generated"))
    return out


def bigint_spellings() -> list[tuple[str, str, str]]:
    lits = ["9007199254740993", "9007199254740993.0", "9007199254740992.5", "9.007199254740993e15",
            "9007199254740992.0", "90071992547409925e-1", "9007199254740991.9999999", "9007199254740992e0",
            "0.9007199254740993e16"]
    out = [(f"literal {t}", t, "named") for t in lits]
    out += [(f"string {t!r}", js(t), "named") for t in ("9007199254740992", "9007199254740993", " 9007199254740993 ",
                                                        "9007199254740992.0", "9.007199254740992e15")]
    return out


def path_spellings(root: Path, targets: list[str], rng_cases: int = CASES) -> list[tuple[str, str, str]]:
    """Paths naming a file under a denied directory. `targets` are relative to `root`, NFC as on disk;
    the file `root/public/hello.txt` and the directory `root/public` exist; `$HOME` is `root`."""
    r = str(root)
    out: list[tuple[str, str]] = []
    for t in targets:
        d, f = t.rsplit("/", 1)
        nfd = unicodedata.normalize("NFD", t)
        out += [
            (f"{t}: absolute", f"{r}/{t}"),
            (f"{t}: repeated separators", f"{r}//{d}//{f}"),
            (f"{t}: dot segments", f"{r}/./{d}/./{f}"),
            (f"{t}: dot-dot through an existing dir", f"{r}/public/../{t}"),
            (f"{t}: dot-dot through a missing dir", f"{r}/missing/../{t}"),
            (f"{t}: dot-dot back into itself", f"{r}/{d}/../{t}"),
            (f"{t}: trailing separator", f"{r}/{t}/"),
            (f"{t}: trailing dot segment", f"{r}/{t}/."),
            (f"{t}: trailing dots on the directory", f"{r}/{d}./{f}"),
            (f"{t}: trailing dot on the file", f"{r}/{t}."),
            (f"{t}: relative", t),
            (f"{t}: relative ./", f"./{t}"),
            (f"{t}: relative through public/..", f"public/../{t}"),
            (f"{t}: relative repeated separators", f"{d}//{f}"),
            (f"{t}: tilde", f"~/{t}"),
            (f"{t}: tilde with dot segments", f"~/./public/../{t}"),
            *([(f"{t}: NFD", f"{r}/{nfd}"), (f"{t}: NFD relative", nfd)] if nfd != t else []),
            (f"{t}: upper case", f"{r}/{d.upper()}/{f}"),
            (f"{t}: file URI", f"file://{r}/{t}"),
            (f"{t}: leading space", f" {r}/{t}"),
            (f"{t}: up and back down from root's parent", f"{r}/../{root.name}/{t}"),
        ]
    named = [(name, js(p), "issue" if "tilde" == name.split(": ")[-1] or name.endswith(": relative")
              or name.endswith(": NFD") else "named") for name, p in out]
    rng = random.Random(SEED + 3)
    gen = []
    for _ in range(rng_cases):
        t = rng.choice(targets)
        parts = t.split("/")
        segs: list[str] = []
        for p in parts:
            for _ in range(rng.randint(0, 2)):
                segs.append(rng.choice([".", "", "public/..", "missing/..", f"{p}/.."]))
            segs.append(unicodedata.normalize(rng.choice(["NFC", "NFD"]), p))
        tail = rng.choice(["", "", "/", "/."])
        head = rng.choice([r + "/", "", "~/", "./", r + "//"])
        value = head + "/".join(segs) + tail
        gen.append((f"generated {value!r}", js(value), "generated"))
    return named + gen


def symlink_spellings(root: Path) -> list[tuple[str, str, str]]:
    """Paths through symbolic links the test makes in root/public (see make_links): the name is not under
    a denied directory, the file the server opens is. policies/README.md says `path_under` does not
    follow links, so these are a known limitation, kept apart (origin `symlink`)."""
    r = str(root)
    return [("symlink to the private directory", js(f"{r}/public/to-private/key.txt"), "symlink"),
            ("symlink to the private file", js(f"{r}/public/key-link.txt"), "symlink"),
            ("relative symlink to the private file", js("public/key-link.txt"), "symlink")]


def make_links(root: Path, target: str) -> None:
    (root / "public" / "to-private").symlink_to(root / target.rsplit("/", 1)[0], target_is_directory=True)
    (root / "public" / "key-link.txt").symlink_to(root / target)


# --------------------------------------------------------------------------------------------------
# The probe set per server

ISSUE_NUMBERS = {"string '500'": js("500"), "string ' 5e2 '": js(" 5e2 "), "string '0x1F4'": js("0x1F4"),
                 "string '５００'": js("５００")}
ISSUE_BOOLS = {"string 'true'": js("true"), "string 'yes'": js("yes"), "number 1": "1"}


def probes_for(tools: set[str], root: Path, path_tool: str, path_targets: list[str]) -> list[Probe]:
    """Every probe for a server offering `tools`; controls first."""
    out: list[Probe] = []

    def add(tool: str, key: str, items: list[tuple[str, str, str]]) -> None:
        if tool in tools:
            out.extend(Probe(f"{tool}.{key} {n}", tool, arg(key, v), o) for n, v, o in items)

    numbers = number_spellings()
    bools = bool_spellings()
    issue_numbers = [(f"issue: {n}", v, "issue") for n, v in ISSUE_NUMBERS.items()]
    issue_bools = [(f"issue: {n}", v, "issue") for n, v in ISSUE_BOOLS.items()]
    for t in ("spend", "spend_strict", "spend_float", "spend_decimal", "cap", "spend_held"):
        add(t, "count", [("control allowed 5", "5", "control-allow"), ("control denied 500", "500", "control-deny")])
        # held calls each wait out a 1 s approval: that lane gets the plain number strings only
        held = [n for n in numbers if n[0].startswith("string ") and " in " not in n[0] and "wrapped" not in n[0]]
        add(t, "count", issue_numbers + (held if t == "spend_held" else numbers))
    for t in ("toggle", "toggle_coerce", "toggle_stringbool"):
        # z.stringbool() takes only strings, and every non-empty string is `true` to JavaScript's
        # Boolean() (z.coerce.boolean()): a conservative gate rightly denies each of them, so that
        # tool has no allowed control.
        if t != "toggle_stringbool":
            add(t, "force", [("control allowed false", "false", "control-allow")])
        add(t, "force", [("control denied true", "true", "control-deny")])
        add(t, "force", issue_bools + bools)
    add("configure", "opts", [("control allowed", '{"force":false,"count":5}', "control-allow"),
                              ("control denied", '{"force":true}', "control-deny"),
                              ("issue: object sent as a string", js('{"force":true}'), "issue")]
        + opts_spellings())
    for key in ("FORCE", "Force"):
        add("toggle", key, [(f"key spelled {key}", "true", "named")])
    add("configure", "OPTS", [("key spelled OPTS", '{"force":true}', "named")])
    add("skip", "skip", [("control allowed false", "false", "control-allow"), ("control denied true", "true", "control-deny")])
    for key in ("SKIP", "Skip", "\u017fkip", "s\u212aip", "\u017f\u212aip", "S\u212aIP"):
        add("skip", key, [(f"key spelled {key!r} (Go folds it onto Skip)", "true", "named")])
    add("vm", "vm", [("control allowed 1", "1", "control-allow"), ("control denied 2^53", str(BIG), "control-deny"),
                     ("issue: 2^53+1 rounds onto 2^53", str(BIG + 1), "issue")] + bigint_spellings())
    if path_tool in tools:
        first = path_targets[0]
        out.append(Probe(f"{path_tool} control allowed", path_tool, arg("path", js(str(root / "public/hello.txt"))),
                         "control-allow"))
        out.append(Probe(f"{path_tool} control denied", path_tool, arg("path", js(str(root / first))), "control-deny"))
        out.extend(Probe(f"{path_tool}.path {n}", path_tool, arg("path", v), o)
                   for n, v, o in path_spellings(root, path_targets) + symlink_spellings(root))
    return out

