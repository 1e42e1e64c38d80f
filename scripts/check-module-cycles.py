#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

Each source file is a node (its module path); an edge is any `crate::…`, `super::…` or
`self::…` path in the file's code (comments, strings and `#[cfg(test)]` code left out),
resolved to the longest module it names. A module using one of its own ancestors (`super::`
from a child) is not counted: a child lives inside its parent's context. Everything else
that closes a loop is reported, with one loop per strongly connected group.

Usage: scripts/check-module-cycles.py [CRATE_DIR ...]   (default: crates/* and src-tauri)
       scripts/check-module-cycles.py --self-test
"""
import os
import re
import sys
import tempfile
from pathlib import Path

PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"\buse\s+(crate|super|self)\s*::")
TEST_FILE_RE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
TEST_BLOCK_RE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def strip_comments_and_strings(src):
    """Blanks comments, string and char literals, keeping line structure."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", src[i:i + 12]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", src[i:i + 12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            i += len(m.group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_blocks(code):
    """Removes `#[cfg(test)] mod x { … }` blocks (braces matched on comment-free code)."""
    while True:
        m = TEST_BLOCK_RE.search(code)
        if not m:
            return code
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        code = code[:m.start()] + code[i:]


def use_trees(code):
    """Yields (root, [segments]) for every path in `use` trees, braces expanded."""
    for m in USE_RE.finditer(code):
        end = code.find(";", m.end())
        tree = code[m.end():end]
        yield from expand(m.group(1), [], tree)


def expand(root, prefix, tree):
    tree = tree.strip()
    if "{" not in tree:
        segs = [s.strip() for s in tree.split(" as ")[0].split("::") if s.strip()]
        yield root, prefix + [s for s in segs if s not in ("*",)]
        return
    head, _, rest = tree.partition("{")
    head_segs = [s.strip() for s in head.split("::") if s.strip()]
    body = rest[: rest.rfind("}")]
    for part in split_top(body):
        if part.strip():
            yield from expand(root, prefix + head_segs, part)


def split_top(body):
    parts, depth, cur = [], 0, []
    for ch in body:
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def crate_modules(crate_dir):
    """Maps module path tuples to files for each crate root (lib.rs, main.rs) of a crate."""
    src = crate_dir / "src"
    roots = [r for r in (src / "lib.rs", src / "main.rs") if r.exists()]
    crates = []
    for root in roots:
        mods, test_files = {}, set()
        walk(root, (), mods, test_files, is_root=True)
        crates.append((root, {k: v for k, v in mods.items() if k not in test_files}))
    return crates


def walk(path, modpath, mods, test_files, is_root=False):
    if modpath in mods:
        return
    mods[modpath] = path
    code = strip_comments_and_strings(path.read_text(encoding="utf-8"))
    for m in TEST_FILE_RE.finditer(code):
        test_files.add(modpath + (m.group(1),))
    code = drop_test_blocks(code)
    base = path.parent if (is_root or path.name == "mod.rs") else path.parent / path.stem
    for m in re.finditer(r"(?:#\[path\s*=\s*\"([^\"]+)\"\]\s*)?\bmod\s+(\w+)\s*;", code):
        name = m.group(2)
        for cand in (base / f"{name}.rs", base / name / "mod.rs"):
            if cand.exists():
                walk(cand, modpath + (name,), mods, test_files)
                break


def edges_of(modpath, path, mods):
    code = drop_test_blocks(strip_comments_and_strings(path.read_text(encoding="utf-8")))
    refs = list(use_trees(code))
    for m in PATH_RE.finditer(code):
        refs.append((m.group(1), [s.strip() for s in m.group(2).split("::") if s.strip()]))
    out = set()
    for root, segs in refs:
        if root == "crate":
            base = ()
        elif root == "self":
            base = modpath
        else:
            base = modpath[:-1]
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
        full = base + tuple(segs)
        target = max((full[:k] for k in range(len(full) + 1) if full[:k] in mods), key=len)
        # Using oneself or one's ancestors is not an edge.
        if target != modpath[: len(target)]:
            out.add(target)
    return out


def cycles(graph):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sccs


def one_loop(graph, comp):
    """A shortest loop through the first module of a component, for the message."""
    start, members = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def check(crate_dirs):
    problems = []
    for crate_dir in crate_dirs:
        for root, mods in crate_modules(crate_dir):
            graph = {m: edges_of(m, p, mods) for m, p in mods.items()}
            for comp in cycles(graph):
                loop = one_loop(graph, comp)
                names = [os.path.relpath(mods[m], crate_dir) for m in loop]
                problems.append(f"{crate_dir.name}: " + " -> ".join(names))
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "crates" / "demo" / "src"
        (src / "a").mkdir(parents=True)
        (src / "lib.rs").write_text("mod a;\nmod b;\nmod c;\n")
        (src / "a.rs").write_text("mod inner;\nuse crate::b::Thing; // crate::c in a comment\n")
        (src / "a" / "inner.rs").write_text('use super::super::c; const S: &str = "crate::b";\n')
        (src / "b.rs").write_text("pub struct Thing;\nfn f() { crate::a::g() }\n")
        (src / "c.rs").write_text("use super::*;\n#[cfg(test)]\nmod tests { use crate::a; }\n")
        found = check([src.parent])
        assert len(found) == 1 and "a.rs" in found[0] and "b.rs" in found[0], found
        (src / "b.rs").write_text("pub struct Thing;\n")
        assert check([src.parent]) == [], check([src.parent])
    print("check-module-cycles self-test: ok")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    repo = Path(__file__).resolve().parent.parent
    dirs = [Path(a).resolve() for a in argv] or sorted(p for p in (repo / "crates").iterdir() if (p / "src").is_dir()) + [repo / "src-tauri"]
    problems = check(dirs)
    for p in problems:
        print("import cycle:", p)
    print(f"module import graph: {len(dirs)} crates, {len(problems)} cycle(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
