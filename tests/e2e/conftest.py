"""Fixtures shared by tests/e2e/mcp1 (Python mcp 1.x) and tests/e2e/mcp2 (Python mcp 2.3.0)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """Tests marked `gateway` need target/debug/portcullis (or $PORTCULLIS_BIN).

    Without it they are skipped, so the direct baselines can run on their own; CI sets
    PORTCULLIS_E2E_REQUIRE_GATEWAY=1 so a missing binary fails instead.
    """
    ok, reason = harness.gateway_available()
    if ok or os.environ.get("PORTCULLIS_E2E_REQUIRE_GATEWAY") == "1":
        return
    skip = pytest.mark.skip(reason=f"gateway unavailable: {reason}")
    for item in items:
        if "gateway" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def e2e_tmp():
    """A scratch directory for the whole run (configs, data dirs, repos), removed at the end."""
    path = Path(tempfile.mkdtemp(prefix="portcullis-e2e-"))
    yield path
    if os.environ.get("PORTCULLIS_E2E_KEEP") != "1":
        shutil.rmtree(path, ignore_errors=True)
    else:
        print(f"\nkept e2e scratch dir {path}", file=sys.stderr)


@pytest.fixture(scope="session")
def everything_http():
    """server-everything over Streamable HTTP on a free loopback port."""
    peer = harness.start_everything_http("streamableHttp")
    yield peer
    peer.stop()


@pytest.fixture(scope="session")
def everything_sse():
    """server-everything over legacy HTTP+SSE on a free loopback port."""
    peer = harness.start_everything_http("sse")
    yield peer
    peer.stop()


def in_ci() -> bool:
    """`CI` is set to anything but empty, `0` or `false` (CI services set `CI=true`)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def fail_a_skip_in_ci(report, marker) -> None:
    """Under CI a skip is a failure: a green run must mean every collected test ran. Only a test
    marked `allowed_skip(reason=...)`, a reason that does not depend on the machine, may skip
    there. An expected failure (xfail) stays what it is."""
    if not report.skipped or hasattr(report, "wasxfail") or not in_ci():
        return
    if marker is not None and marker.kwargs.get("reason"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (f"skipped under CI=true, where a test that cannot run fails instead: {reason}\n"
                       "(a skip whose reason does not depend on the machine may be marked "
                       "@pytest.mark.allowed_skip(reason=...))")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A module skipped while collected (`pytest.skip(allow_module_level=True)`, `importorskip`)
    fails under CI like any other skip."""
    outcome = yield
    fail_a_skip_in_ci(outcome.get_result(), None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skip fails (see `fail_a_skip_in_ci`). On a failed test that used a gateway, attach
    the tail of `portcullis serve`'s stderr."""
    outcome = yield
    report = outcome.get_result()
    fail_a_skip_in_ci(report, item.get_closest_marker("allowed_skip"))
    if report.when != "call" or not report.failed:
        return
    for value in getattr(item, "funcargs", {}).values():
        candidates = value if isinstance(value, tuple) else (value,)
        for gw in candidates:
            if isinstance(gw, harness.Gateway):
                report.sections.append(("portcullis serve stderr (last 40 lines)", "\n".join(gw.proc.lines[-40:])))
                return
