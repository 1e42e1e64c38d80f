"""The gateway's HTTP entry: bearer token, Origin and Host checks (DNS rebinding), with plain urllib."""

from __future__ import annotations

import urllib.parse

import pytest

import harness

pytestmark = pytest.mark.gateway


def post_initialize(gateway, server="everything", headers=None):
    return harness.http_post(gateway.mcp_url(server), harness.INITIALIZE_BODY, headers=headers)


def test_valid_token_is_accepted(gateway):
    reply = post_initialize(gateway, headers=gateway.auth_headers())
    assert reply.status == 200, f"positive control: initialize with the token must work: {reply.status} {reply.text()}"
    msgs = harness.sse_json_messages(reply.body)
    init = next(m for m in msgs if m.get("id") == 1)
    assert init["result"]["serverInfo"]["name"] == "mcp-servers/everything", init


def test_missing_token_is_401(gateway):
    reply = post_initialize(gateway)
    assert reply.status == 401, f"no Authorization header must be refused with 401: {reply.status} {reply.text()}"


def test_wrong_token_is_401(gateway):
    reply = post_initialize(gateway, headers={"Authorization": "Bearer not-the-token"})
    assert reply.status == 401, f"a wrong token must be refused with 401: {reply.status} {reply.text()}"
    reply = post_initialize(gateway, headers={"Authorization": gateway.token})  # no "Bearer" scheme
    assert reply.status == 401, f"a token without the Bearer scheme must be refused: {reply.status}"


def test_foreign_origin_is_403(gateway):
    headers = dict(gateway.auth_headers(), Origin="http://evil.example")
    reply = post_initialize(gateway, headers=headers)
    assert reply.status == 403, f"a foreign Origin must be refused with 403 even with the token: {reply.status}"


def test_foreign_host_is_refused(gateway):
    port = urllib.parse.urlsplit(gateway.url).port
    headers = dict(gateway.auth_headers(), Host=f"evil.example:{port}")
    reply = post_initialize(gateway, headers=headers)
    assert reply.status in (403, 421), f"a foreign Host (DNS rebinding) must be refused: {reply.status}"


def test_unknown_server_is_404(gateway):
    reply = post_initialize(gateway, server="no-such-server", headers=gateway.auth_headers())
    assert reply.status == 404, f"an unknown server name should be 404: {reply.status} {reply.text()}"


def test_gateway_file_and_bind(gateway):
    info_path = gateway.data_dir / "gateway.json"
    assert (info_path.stat().st_mode & 0o777) == 0o600, "gateway.json holds the token: mode 0600"
    host = urllib.parse.urlsplit(gateway.url).hostname
    assert host in ("127.0.0.1", "localhost", "::1"), f"the gateway must bind loopback only: {gateway.url}"
    assert "ready" in gateway.ready_line


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_other_http_methods_need_the_token(gateway, method):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(gateway.mcp_url("everything"), method=method,
                                 headers={"Accept": "text/event-stream", "Mcp-Session-Id": "whatever"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status = resp.status
    except urllib.error.HTTPError as e:
        status = e.code
    assert status == 401, f"{method} without the token must be refused with 401: {status}"
