"""Drives tests/rmcp-peer's `client` (rmcp, the official Rust MCP SDK) one command at a time.

The peer launches the server's command over stdio, prints a `ready` line after the handshake, then
answers each JSON command on its stdin with one JSON line on its stdout. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import harness

ANSWER_TIMEOUT = 30.0


def peer_bin() -> Path:
    """Built beside `portcullis` by the workspace's `cargo build` (tests/rmcp-peer)."""
    return harness.require_file(harness.portcullis_bin().parent / "rmcp-peer", "build it: cargo build --all-targets")


def server_stdio() -> dict[str, Any]:
    """The rmcp server (tools `echo` and `drop_table`) as a stdio upstream."""
    return {"command": str(peer_bin()), "args": ["server"], "env": {}}


def argv_of(spec: dict[str, Any]) -> list[str]:
    return [spec["command"], *spec["args"]]


class RmcpClient:
    def __init__(self, command: list[str], lifecycle: str = "auto", env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            [str(peer_bin()), "client", "--lifecycle", lifecycle, "--", *command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})})
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.ready: dict[str, Any] = self._next("the handshake")["ready"]

    def _pump_stdout(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _next(self, what: str, timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise harness.HarnessError(f"rmcp client: no answer to {what} within {timeout}s; "
                                       f"stderr: {''.join(self.stderr)[-2000:]}") from None
        if line is None:
            raise harness.HarnessError(f"rmcp client exited ({self.proc.wait(5)}) before answering {what}; "
                                       f"stderr: {''.join(self.stderr)[-2000:]}")
        return json.loads(line)

    def _ask(self, command: dict[str, Any], timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._next(json.dumps(command), timeout)

    def tools(self) -> list[dict[str, Any]]:
        answer = self._ask({"op": "tools"})
        assert "tools" in answer, answer
        return answer["tools"]

    def call(self, name: str, arguments: dict[str, Any], timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        """{"result": CallToolResult} or {"error": "..."} (a protocol-level failure)."""
        return self._ask({"op": "call", "name": name, "arguments": arguments}, timeout)

    def close(self) -> int | None:
        """End stdin (rmcp ends its session and the server's stdin); the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            return None

    def __enter__(self) -> RmcpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def echoes_across_a_restart(client: RmcpClient, gateways: list[harness.Gateway], config: Path, data: Path,
                            tag: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Stop the newest gateway under `client`, start another on the same data dir, then `echo`
    `after {i} {tag}` three times: the answers, and the figures (new gateway ready, three calls
    answered, seconds from the stop). The new gateway is appended to `gateways` for teardown."""
    stopped_at = time.monotonic()
    assert gateways[-1].stop() is not None, "the old gateway stopped"
    gateways.append(harness.start_gateway(config, data))
    ready_s = time.monotonic() - stopped_at
    answers = [client.call("echo", {"message": f"after {i} {tag}"}) for i in range(3)]
    figures = {"new_gateway_ready_s": round(ready_s, 3), "three_calls_answered_s": round(time.monotonic() - stopped_at, 3)}
    return answers, figures
