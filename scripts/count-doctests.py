#!/usr/bin/env python3
"""Prints how many code blocks in the workspace's Rust doc comments rustdoc would run as doctests.

A fenced block in a `///` or `//!` comment is a doctest unless its info string names another
language (text, json, sh, ...) or says `ignore`. scripts/test.sh runs `cargo test --doc` only when
this prints more than 0: rustdoc's pass over the workspace costs about 40 s even with nothing to run.
"""

from __future__ import annotations

import re
import subprocess
import sys

NOT_RUST = {"text", "json", "sh", "bash", "console", "toml", "yaml", "ignore", "plain", "sql", "ts", "js",
            "python", "html", "css", "diff", "ini", "xml", "mermaid"}
DOC_LINE = re.compile(r"^\s*//[/!]\s?(.*)$")


def is_doctest(info: str) -> bool:
    words = {w.strip() for w in info.split(",") if w.strip()}
    return not (words & NOT_RUST)


def count(path: str) -> list[str]:
    found, fence = [], None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            doc = DOC_LINE.match(line)
            if not doc:
                fence = None  # a doc comment ended: so did any block in it
                continue
            text = doc.group(1).strip()
            if not text.startswith("```"):
                continue
            if fence is None:
                fence = text[3:].strip()
                if is_doctest(fence):
                    found.append(f"{path}:{number}")
            else:
                fence = None
    return found


def self_test() -> None:
    import os
    import tempfile
    cases = {
        "/// ```\n/// assert!(true);\n/// ```\nfn a() {}\n": 1,
        "//! ```rust,no_run\n//! x();\n//! ```\n": 1,
        "/// ```text\n/// a -> b\n/// ```\n/// ```json\n/// {}\n/// ```\n": 0,
        "/// ```ignore\n/// x\n/// ```\n// ```\nlet s = \"```\";\n": 0,
    }
    for source, want in cases.items():
        with tempfile.NamedTemporaryFile("w", suffix=".rs", delete=False) as f:
            f.write(source)
        try:
            got = len(count(f.name))
        finally:
            os.unlink(f.name)
        assert got == want, f"{source!r}: {got} doctests, expected {want}"


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    files = subprocess.run(["git", "ls-files", "*.rs"], check=True, capture_output=True, text=True).stdout.split()
    found = [where for path in files for where in count(path)]
    for where in found:
        print(f"doctest: {where}", file=sys.stderr)
    print(len(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
