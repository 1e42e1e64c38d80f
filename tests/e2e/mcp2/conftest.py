"""The mcp 2.3.0 suite's world: a legacy server (server-everything) and a modern one
(tests/e2e/peers/modern_server.py, MCPServer from mcp 2.3.0), both stdio upstreams of one gateway,
plus server-everything over Streamable HTTP for the TypeScript client's direct baseline."""

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
        "gzip-file-as-resource": {"action": "deny", "reason": "no downloads from agents"},
    },
}
MODERN_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "allow",
    "hide": ["internal_*"],
    "tools": {
        "echo": {},
        "greet": {},
        "delete_everything": {"action": "deny", "reason": "nothing gets deleted by agents"},
    },
}


# The same modern server under a policy that refuses what it asks of the client (issue 32): its
# elicitation (an MRTR input request) and the roots it could ask for.
MODERN_STRICT_POLICY: dict[str, Any] = {
    "version": "1",
    "default": "allow",
    "tools": {"greet": {}, "echo": {}},
    "server_requests": {
        "elicitation": {"action": "deny", "reason": "no forms from this server"},
        "roots": {"action": "deny", "reason": "folders stay private"},
    },
}


@dataclass
class World:
    root: Path
    modern_log: Path
    servers: dict[str, dict[str, Any]]

    def spec(self, server: str) -> dict[str, Any]:
        return self.servers[server]


@pytest.fixture(scope="session")
def world(e2e_tmp: Path, everything_http) -> World:
    root = e2e_tmp / "mcp2"
    root.mkdir(parents=True)
    modern_log = root / "modern.log"
    servers = {
        "everything": harness.everything_stdio(),
        "everything_http": {"url": everything_http.url},
        "modern": harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "modern_server.py",
                                       {"MODERN_SERVER_LOG": str(modern_log)}),
        "modern_strict": harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "modern_server.py",
                                              {"MODERN_SERVER_LOG": str(root / "modern_strict.log")}),
    }
    return World(root=root, modern_log=modern_log, servers=servers)


@pytest.fixture(scope="session")
def gateway(world: World):
    policies = {"everything": EVERYTHING_POLICY, "everything_http": EVERYTHING_POLICY, "modern": MODERN_POLICY,
                "modern_strict": MODERN_STRICT_POLICY}
    config = harness.write_config(world.root / "gateway", world.servers, policies)
    gw = harness.start_gateway(config, world.root / "data")
    yield gw
    harness.log(f"portcullis serve exited with {gw.stop()}")
