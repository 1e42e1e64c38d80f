#!/usr/bin/env python3
"""A tiny MCP server (stdio, Python standard library only, no network) for the demo: a safe tool
to try an approval on. `write_note` writes a text file into the notes folder given on the command
line (the demo puts it in its data dir), `list_notes` lists them. The demo policy lets
`list_notes` through and holds `write_note` for a person, so "try a held call" has something
harmless to hold.

    python3 demo/notes_server.py NOTES_DIR

Speaks the initialize era of MCP (2024-11-05 … 2025-11-25), one JSON-RPC message per line."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MAX_TEXT = 10_000

TOOLS = [
    {
        "name": "write_note",
        "title": "Write a note",
        "description": "Writes a short text note into the demo's notes folder (nothing else on disk is touched).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "the note's name: letters, digits, - and _"},
                "text": {"type": "string", "description": f"the note, at most {MAX_TEXT} characters"},
            },
            "required": ["title", "text"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "list_notes",
        "title": "List the notes",
        "description": "Lists the notes in the demo's notes folder.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]


def text_result(text: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def write_note(notes: Path, args: dict[str, Any]) -> dict[str, Any]:
    title, text = args.get("title"), args.get("text")
    if not isinstance(title, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", title):
        return text_result("title must be 1-64 letters, digits, - or _", error=True)
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return text_result(f"text must be a string of at most {MAX_TEXT} characters", error=True)
    notes.mkdir(parents=True, exist_ok=True)
    path = notes / f"{title}.txt"
    path.write_text(text + "\n", encoding="utf-8")
    return text_result(f"wrote {path}")


def list_notes(notes: Path) -> dict[str, Any]:
    names = sorted(p.name for p in notes.glob("*.txt")) if notes.is_dir() else []
    return text_result("\n".join(names) if names else "no notes yet")


def answer(notes: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "portcullis-demo-notes", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "write_note":
            return write_note(notes, args)
        if name == "list_notes":
            return list_notes(notes)
        return text_result(f"unknown tool {name!r}", error=True)
    raise LookupError(method)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: notes_server.py NOTES_DIR", file=sys.stderr)
        return 2
    notes = Path(sys.argv[1]).resolve()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications and responses need no answer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
        try:
            reply["result"] = answer(notes, msg["method"], msg.get("params") or {})
        except LookupError:
            reply["error"] = {"code": -32601, "message": f"method not found: {msg['method']}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
