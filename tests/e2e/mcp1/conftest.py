"""The mcp 1.x suite's world: upstream specs, their policies, and one gateway for the whole run.

Upstreams (config names):
  everything       server-everything over stdio (one child per downstream session)
  everything_http  server-everything over Streamable HTTP (a node process started here)
  everything_sse   server-everything over legacy HTTP+SSE (a node process started here)
  fs               server-filesystem rooted at a scratch directory
  git              mcp-server-git on a scratch repository with one staged change
  slow             tests/e2e/peers/slow_server.py (records cancellation to a file)
  unpoliced        server-everything over stdio with NO policy file (every call needs approval)
  everything_doors       server-everything over stdio with DOORS_POLICY (resources, prompts,
                         server_requests sections: tests/e2e/mcp1/test_doors_mcp1.py)
  everything_doors_http  the Streamable HTTP server-everything above, with DOORS_POLICY

Tests share the gateway; each one tags its calls with a unique marker in the arguments and finds its
own audit rows by that marker, so tests stay independent of each other and of their order.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import harness

sys.path.insert(0, str(Path(__file__).resolve().parent))

EVERYTHING_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "allow",
    "hide": ["get-env"],
    "tools": {
        "echo": {},
        "get-sum": {"rate_limit": {"max": 2, "window": 60}},
        "gzip-file-as-resource": {"action": "deny", "reason": "no downloads from agents"},
        "get-tiny-image": {"action": "require_approval"},
    },
}
FS_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "allow",
    "tools": {
        "write_file": {"action": "deny", "reason": "no writes from agents"},
        "edit_file": {"action": "deny", "reason": "no writes from agents"},
        "move_file": {"action": "deny", "reason": "no writes from agents"},
    },
}
GIT_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "deny",
    "tools": {
        "git_status": {},
        "git_log": {},
        "git_diff_staged": {},
        "git_commit": {"action": "deny", "reason": "commits are made by people"},
        "git_reset": {"action": "deny", "reason": "resetting the index loses work"},
    },
}
SLOW_POLICY: dict[str, Any] = {"version": "1", "default": "allow"}

# server-everything's static documents and resource templates (discovered with resources/list and
# resources/templates/list, see test_doors_mcp1.py).
DOC = "demo://resource/static/document/"
DOORS_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "allow",
    "tools": {"echo": {}, "trigger-sampling-request": {}, "trigger-elicitation-request": {}, "get-roots-list": {}},
    "resources": {
        f"{DOC}architecture.md": {},
        f"{DOC}features.md": {"action": "deny", "reason": "feature lists are not for agents"},
        f"{DOC}startup.md": {"action": "hide"},
        f"{DOC}structure.md": {"action": "require_approval"},
        "demo://resource/dynamic/blob/*": {"action": "hide"},
        "demo://resource/dynamic/text/*": {
            "rules": [
                {"when": {"uri": {"regex": "/text/7[0-9]+$"}}, "action": "require_approval"},
                {"when": {"uri": {"regex": "/text/8[0-9]+$"}}, "action": "deny", "reason": "eights are not read"},
            ],
        },
    },
    "prompts": {
        "simple-prompt": {},
        "resource-prompt": {"action": "hide"},
        "completable-prompt": {"action": "deny", "reason": "no completable prompts here"},
        "args-prompt": {
            "rules": [{"when": {"arguments.city": {"regex": "^Forbidden"}}, "action": "deny",
                       "reason": "that city is off limits"}],
        },
    },
    "server_requests": {
        "sampling": {
            "action": "deny",
            "reason": "this server may not use the model",
            "rules": [{"when": {"max_tokens": {"eq": 77}}, "action": "require_approval"}],
        },
        "elicitation": {"action": "deny", "reason": "no forms from this server"},
        "roots": {"action": "deny", "reason": "the folders are private"},
    },
}


@dataclass
class World:
    root: Path
    fs_root: Path
    repo: Path
    slow_log: Path
    servers: dict[str, dict[str, Any]]
    policies: dict[str, dict[str, Any]]

    def spec(self, server: str) -> dict[str, Any]:
        return self.servers[server]


@pytest.fixture(scope="session")
def world(e2e_tmp: Path, everything_http, everything_sse) -> World:
    root = e2e_tmp / "mcp1"
    fs_root = root / "fsroot"
    fs_root.mkdir(parents=True)
    (fs_root / "hello.txt").write_text("hello from the e2e suite\n")
    repo = harness.make_git_repo(root / "repo")
    slow_log = root / "slow.log"
    python = Path(sys.executable)
    servers = {
        "everything": harness.everything_stdio(),
        "everything_http": {"url": everything_http.url},
        "everything_sse": {"type": "sse", "url": everything_sse.url},
        "fs": harness.filesystem_stdio(fs_root),
        "git": harness.git_stdio(repo),
        "slow": harness.python_stdio(python, harness.PEERS_DIR / "slow_server.py", {"SLOW_SERVER_LOG": str(slow_log)}),
        "unpoliced": harness.everything_stdio(),
        "everything_doors": harness.everything_stdio(),
        "everything_doors_http": {"url": everything_http.url},
    }
    policies = {
        "everything": EVERYTHING_POLICY,
        "everything_http": EVERYTHING_POLICY,
        "everything_sse": EVERYTHING_POLICY,
        "fs": FS_POLICY,
        "git": GIT_POLICY,
        "slow": SLOW_POLICY,
        "everything_doors": DOORS_POLICY,
        "everything_doors_http": DOORS_POLICY,
    }
    return World(root=root, fs_root=fs_root, repo=repo, slow_log=slow_log, servers=servers, policies=policies)


@pytest.fixture(scope="session")
def gateway(world: World):
    """One `portcullis serve` for the run, with every upstream above."""
    config = harness.write_config(world.root / "gateway", world.servers, world.policies, approval_timeout_secs=10)
    gw = harness.start_gateway(config, world.root / "data")
    yield gw
    code = gw.stop()
    harness.log(f"portcullis serve exited with {code}")
