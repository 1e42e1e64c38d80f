"""`portcullis policy init` against the real reference servers (server-everything, server-filesystem).

The expected classes come from the servers' own annotations, read here through a direct mcp 1.x
connection, so a new tool in a newer server version is checked too: `destructiveHint: true` → delete
(require approval), `readOnlyHint: false` → at least write (never a plain allow), `readOnlyHint: true`
→ read (allowed) unless the name says worse — annotations may raise a class, never lower it. Then
the generated policies are put in force in a gateway and decide real calls.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from v1client import assert_denial, first_text, open_session, run

import harness

pytestmark = pytest.mark.gateway

# Tools whose name says more than their annotations: `readOnlyHint: true` cannot lower the class
# the name gives ("trigger" runs an operation).
NAME_OUTRANKS_READ_ONLY = {"trigger-long-running-operation": "execute"}
RANK = {"read": 0, "write": 1, "execute": 2, "delete": 3, "unknown": 4}


def policy_init(config: Path, server: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [str(harness.portcullis_bin()), "policy", "init", server, "--config", str(config), *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def scene(e2e_tmp: Path):
    root = e2e_tmp / "policy-init"
    fs_root = root / "fsroot"
    fs_root.mkdir(parents=True)
    (fs_root / "hello.txt").write_text("hello from policy init\n")
    servers = {"everything": harness.everything_stdio(), "filesystem": harness.filesystem_stdio(fs_root)}
    config = harness.write_config(root / "gateway", servers, policies={})
    return {"root": root, "fs_root": fs_root, "servers": servers, "config": config}


def annotated_tools(server: str, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    async def body():
        async with open_session("direct", server, spec) as (s, _):
            listed = await s.list_tools()
        return {t.name: (t.annotations.model_dump(exclude_none=True) if t.annotations else {}) for t in listed.tools}

    return run(body)


def expected_class(name: str, annotations: dict[str, Any]) -> str | None:
    """The class the annotations fix, or None when they leave it to the name."""
    if annotations.get("destructiveHint") is True and annotations.get("readOnlyHint") is not True:
        return "delete"
    if annotations.get("readOnlyHint") is True:
        return NAME_OUTRANKS_READ_ONLY.get(name, "read")
    return None


@pytest.mark.parametrize("server", ["everything", "filesystem"])
def test_classes_follow_annotations_and_rules_follow_classes(scene, server):
    tools = annotated_tools(server, scene["servers"][server])
    assert len(tools) >= 10, f"baseline: {server} lists its tools directly: {sorted(tools)}"

    r = policy_init(scene["config"], server)
    assert r.returncode == 0, f"policy init failed: {r.stderr}"
    path = scene["config"].parent / "policies" / f"{server}.json"
    policy = json.loads(path.read_text())
    entries = policy["tools"]

    assert set(entries) == set(tools), "every listed tool (all pages) gets an entry, and nothing else"
    assert policy["default"] == "require_approval", "a tool added later must ask a person"
    for name, annotations in tools.items():
        entry = entries[name]
        cls = entry["class"]
        want = expected_class(name, annotations)
        if want is not None:
            assert cls == want, f"{name}: annotations {annotations} mean class {want}, got {entry}"
        if annotations.get("readOnlyHint") is False:
            assert RANK[cls] >= RANK["write"], f"{name}: readOnlyHint false must be at least write: {entry}"
        rule = {
            "read": ("allow", False),
            "write": ("allow", True),
            "execute": ("require_approval", False),
            "delete": ("require_approval", False),
            "unknown": ("require_approval", False),
        }[cls]
        assert (entry["action"], "rate_limit" in entry) == rule, f"{name}: class {cls} must get rule {rule}: {entry}"
        assert entry["risk"] in ("low", "medium", "high", "critical")
        # The summary table on stdout has one row per tool: name, class, risk.
        assert any(line.split()[:3] == [name, cls, entry["risk"]] for line in r.stdout.splitlines()), (
            f"the summary must list {name} as {cls}/{entry['risk']}:\n{r.stdout}"
        )

    check = subprocess.run([str(harness.portcullis_bin()), "policy", "check", str(path)],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"the written policy must pass policy check: {check.stderr}"


def offered_lists(server: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The server's resources, templates and prompts, read directly (None for a kind it does not offer)."""
    async def body():
        async with open_session("direct", server, spec) as (s, init):
            caps = init.capabilities
            resources = templates = prompts = None
            if caps.resources is not None:
                resources = [str(r.uri) for r in (await s.list_resources()).resources]
                templates = [t.uriTemplate for t in (await s.list_resource_templates()).resourceTemplates]
            if caps.prompts is not None:
                prompts = [p.name for p in (await s.list_prompts()).prompts]
        return {"resources": resources, "templates": templates, "prompts": prompts}

    return run(body)


@pytest.mark.parametrize("server", ["everything", "filesystem"])
def test_every_door_gets_an_explicit_section(scene, server):
    """Issue 32: the starter policy names the resources, templates and prompts the server offers,
    and says what the server's own requests get; a kind the server does not offer has no section."""
    offered = offered_lists(server, scene["servers"][server])
    r = policy_init(scene["config"], server, "--stdout")
    assert r.returncode == 0, r.stderr
    policy = json.loads(r.stdout)

    assert policy["server_requests"] == {
        "sampling": {"action": "require_approval", "class": "execute", "risk": "high"},
        "elicitation": {"action": "require_approval", "class": "read", "risk": "medium"},
        "roots": {"action": "allow", "class": "read", "risk": "low"},
    }, "the server's own requests are written out, whatever the server offers"
    if offered["resources"] is None:
        assert "resources" not in policy, f"{server} offers no resources: {sorted(policy)}"
    else:
        assert offered["resources"], f"baseline: {server} lists resources directly"
        entries = policy["resources"]
        for uri in offered["resources"]:
            assert uri in entries, f"listed resource {uri} has no entry: {sorted(entries)}"
            assert entries[uri]["class"] == "read", entries[uri]
        globs = [k for k in entries if "*" in k]
        assert len(globs) == len(offered["templates"]), f"one glob per template {offered['templates']}: {globs}"
        for template in offered["templates"]:
            head = template.split("{", 1)[0]
            assert any(g.startswith(head) for g in globs), f"template {template}: no glob over {head!r} in {globs}"
        assert f"{len(entries)} resources" in r.stderr, r.stderr
    if offered["prompts"] is None:
        assert "prompts" not in policy, f"{server} offers no prompts: {sorted(policy)}"
    else:
        assert set(policy["prompts"]) == set(offered["prompts"]), "one entry per listed prompt"
        assert all(e == {"action": "allow", "class": "read", "risk": "low"} for e in policy["prompts"].values())

    check_path = scene["root"] / f"{server}-doors.json"
    check_path.write_text(r.stdout)
    check = subprocess.run([str(harness.portcullis_bin()), "policy", "check", str(check_path)],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"the printed policy must pass policy check: {check.stderr}"


def test_an_existing_policy_is_kept_without_force_and_replaced_with_it(scene):
    server = "everything"
    path = scene["config"].parent / "policies" / f"{server}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hand_written = '{"version": "1", "default": "deny"}\n'
    path.write_text(hand_written)

    r = policy_init(scene["config"], server)
    assert r.returncode == 1, f"an existing policy must be refused without --force: {r}"
    assert len(r.stderr.strip().splitlines()) == 1 and "--force" in r.stderr, r.stderr
    assert path.read_text() == hand_written, "the existing policy must be untouched"

    r = policy_init(scene["config"], server, "--stdout")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tools"]["echo"]["class"] == "read", "--stdout prints the policy"
    assert path.read_text() == hand_written, "--stdout writes no file"

    r = policy_init(scene["config"], server, "--force")
    assert r.returncode == 0, r.stderr
    assert json.loads(path.read_text())["tools"]["echo"]["action"] == "allow", "--force replaces the file"
    leftovers = [p.name for p in path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == [], f"the atomic write must leave no temporary file: {leftovers}"


def test_unknown_server_and_dead_server_are_clear_errors(scene, e2e_tmp):
    r = policy_init(scene["config"], "no-such-server")
    assert r.returncode == 1 and "no-such-server" in r.stderr and "everything" in r.stderr, r.stderr

    config = harness.write_config(e2e_tmp / "policy-init-dead", {"dead": {"command": "/nonexistent/server"}}, {})
    r = policy_init(config, "dead")
    assert r.returncode == 1 and "/nonexistent/server" in r.stderr, r.stderr
    assert not (config.parent / "policies" / "dead.json").exists(), "no policy is written for a server we could not list"


def test_generated_policies_decide_real_calls(scene, e2e_tmp):
    """The generated files, in force: a read tool runs, a destructive one is held (and, with no
    approver, refused at once), both recorded with the generated rule."""
    root = e2e_tmp / "policy-init-gateway"
    config = harness.write_config(root, scene["servers"], policies={})
    for server in scene["servers"]:
        r = policy_init(config, server, "--force")
        assert r.returncode == 0, r.stderr
    gw = harness.start_gateway(config, root / "data")
    m = "m" + uuid.uuid4().hex[:12]
    try:
        async def body():
            async with open_session("stdio", "everything", scene["servers"]["everything"], gw) as (s, _):
                echoed = await s.call_tool("echo", {"message": m})
            async with open_session("stdio", "filesystem", scene["servers"]["filesystem"], gw) as (s, _):
                read = await s.call_tool("read_text_file", {"path": str(scene["fs_root"] / "hello.txt"), "marker": m})
                held = await s.call_tool("write_file", {"path": str(scene["fs_root"] / f"{m}.txt"), "content": m})
            return echoed, read, held

        echoed, read, held = run(body)
        assert first_text(echoed) == f"Echo: {m}"
        assert "hello from policy init" in first_text(read)
        assert_denial(held, "requires approval", "no approver")
        assert not (scene["fs_root"] / f"{m}.txt").exists(), "a held write must not run"
        (row,) = gw.audit_rows_for("filesystem", "write_file", m)
        assert row["rule"] == "tools.write_file", row.raw
        assert (row["decision"], row["decided_by"]) == ("denied", "gateway"), row.raw
    finally:
        gw.stop()
        shutil.rmtree(root / "data", ignore_errors=True)


def test_policy_init_lists_a_streamable_http_server_too(e2e_tmp: Path, everything_http):
    """The same listing over the Streamable HTTP upstream transport: the same tools, the same classes."""
    root = e2e_tmp / "policy-init-http"
    config = harness.write_config(root, {"everything": {"url": everything_http.url}}, policies={})
    r = policy_init(config, "everything", "--stdout")
    assert r.returncode == 0, r.stderr
    via_http = json.loads(r.stdout)["tools"]
    tools = annotated_tools("everything", harness.everything_stdio())
    assert set(via_http) == set(tools), "every tool listed over HTTP"
    assert via_http["echo"] == {"action": "allow", "class": "read", "risk": "low"}
    assert via_http["gzip-file-as-resource"]["class"] == "write", "readOnlyHint false: at least write"
    assert via_http["gzip-file-as-resource"]["risk"] == "high", "openWorldHint true raises the risk"
