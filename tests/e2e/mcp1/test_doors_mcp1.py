"""Every door (issue 32): resources, prompts and the server's own requests decided by the gateway,
seen by a Python mcp 1.x client through both entries ("http": the keeper's Streamable HTTP entry,
"stdio": `portcullis connect`), in front of server-everything over stdio (`everything_doors`) and
over Streamable HTTP (`everything_doors_http`), both under conftest.DOORS_POLICY:

  resources  architecture.md allowed, features.md denied, startup.md hidden, structure.md held;
             the blob template hidden; dynamic text allowed, ids 7… held and 8… denied by rules on `uri`
  prompts    simple-prompt allowed, resource-prompt hidden, completable-prompt denied, args-prompt
             allowed unless `arguments.city` starts "Forbidden"
  server_requests  sampling denied unless maxTokens is 77 (held), elicitation and roots denied

A refused client request is a JSON-RPC error (-32001) whose message starts `[portcullis]`; the
client raises McpError. A refused server request is answered to the server as a client saying no
would (sampling: error -1; elicitation: decline; roots: error) and the client's callback is never
called. Each test opens its own sessions with a client name unique to it (`doors-<marker>`) and
finds its audit rows by server, method, tool and that client name.
"""

from __future__ import annotations

import json
import uuid
import warnings
from typing import Any

import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from v1client import ROOT_URI, Callbacks, first_text, open_session, run

import harness
from approvals import AutoApprover, ControlApi

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
UPSTREAMS = ["everything_doors", "everything_doors_http"]
DOC = "demo://resource/static/document/"
ALLOWED_DOC = DOC + "architecture.md"
DENIED_DOC = DOC + "features.md"
HIDDEN_DOC = DOC + "startup.md"
HELD_DOC = DOC + "structure.md"
REFUSED_CODE = -32001


def marker() -> str:
    return uuid.uuid4().hex[:12]


def client(m: str) -> types.Implementation:
    return types.Implementation(name=f"doors-{m}", version="1.0.0")


def dump(value: Any) -> Any:
    d = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(d, dict):
        d.pop("_meta", None)
    return d


def rows(gw: harness.Gateway, server: str, method: str, tool: str, m: str, count: int = 1,
         settled: bool = False, timeout: float = 10.0) -> list[harness.AuditRow]:
    """Wait (bounded) for `count` audit rows of server/method/tool made by the client `doors-<m>`."""

    def fetch() -> list[harness.AuditRow] | None:
        found = [r for r in gw.audit_cli("--server", server, "--method", method, "--tool", tool, "--limit", "1000")
                 if r.get("client_name") == f"doors-{m}"]
        found.sort(key=lambda r: (r.get("time_ms") or 0, r.get("id") or 0))
        if len(found) < count:
            return None
        if settled and any(r.get("decision") in ("allowed", "approved") and r.get("outcome") is None for r in found):
            return None
        return found

    try:
        return harness.wait_until(fetch, timeout, f"{count} audit row(s) {server} {method} {tool} doors-{m}", 0.2)
    except harness.HarnessError:
        recent = [r.raw for r in gw.audit_cli("--server", server, "--limit", "30")]
        raise AssertionError(f"expected {count} row(s) {server} {method} {tool!r} for doors-{m}; "
                             f"recent rows: {json.dumps(recent)[-3000:]}") from None


def assert_refused(err: McpError, *needles: str) -> str:
    text = err.error.message
    assert text.startswith(harness.DENIAL_PREFIX), f"a refusal must start {harness.DENIAL_PREFIX!r}: {text!r}"
    assert err.error.code == REFUSED_CODE, f"a refused request is JSON-RPC error {REFUSED_CODE}: {err.error!r}"
    for needle in needles:
        assert needle.lower() in text.lower(), f"refusal must mention {needle!r}: {text!r}"
    return text


async def refused(coro) -> McpError:
    try:
        value = await coro
    except McpError as e:
        return e
    raise AssertionError(f"expected the gateway to refuse, got {dump(value)!r}")


async def read_raw(session, uri: str, method: str = "resources/read") -> types.ReadResourceResult:
    """resources/read (or subscribe) with the URI exactly as written: the mcp 1.x client would bring
    it to pydantic's AnyUrl form first (lower-case scheme, dot segments removed), which is not what
    every client sends."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns that the str is not an AnyUrl
        if method == "resources/read":
            params = types.ReadResourceRequestParams.model_construct(uri=uri)
            request = types.ReadResourceRequest(method="resources/read", params=params)
            return await session.send_request(types.ClientRequest(request), types.ReadResourceResult)
        params = types.SubscribeRequestParams.model_construct(uri=uri)
        request = types.SubscribeRequest(method="resources/subscribe", params=params)
        return await session.send_request(types.ClientRequest(request), types.EmptyResult)


def texts(result: types.ReadResourceResult) -> list[Any]:
    return [getattr(c, "text", None) or getattr(c, "blob", None) for c in result.contents]


# --------------------------------------------------------------------------------------------------
# Resources


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_resource_read_allowed_matches_direct_and_is_audited(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await s.read_resource(ALLOWED_DOC)
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            via = await s.read_resource(ALLOWED_DOC)
        return direct, via

    direct, via = run(body)
    assert dump(via) == dump(direct), "an allowed read must give the server's own contents"
    assert texts(via)[0], "the document has text"

    (row,) = rows(gateway, upstream, "resources/read", ALLOWED_DOC, m, settled=True)
    assert row["method"] == "resources/read"
    assert row["decision"] == "allowed" and row["decided_by"] == "policy", row.raw
    assert row["rule"] == f"resources.{ALLOWED_DOC}", row.raw
    assert row["outcome"] == "ok", row.raw
    assert row.arguments() == {"uri": ALLOWED_DOC}, row.raw


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_resource_read_and_subscribe_denied_give_reason(world, gateway, route, upstream):
    m = marker()

    async def body():
        async with open_session(route, upstream, world.spec(upstream), gateway, client_info=client(m)) as (s, _):
            read = await refused(s.read_resource(DENIED_DOC))
            sub = await refused(s.subscribe_resource(DENIED_DOC))
            after = await s.call_tool("echo", {"message": m})
        return read, sub, after

    read, sub, after = run(body)
    assert_refused(read, "feature lists are not for agents")
    assert_refused(sub, "feature lists are not for agents")
    assert first_text(after) == f"Echo: {m}", "the session stays usable after a refused read"
    for method in ("resources/read", "resources/subscribe"):
        (row,) = rows(gateway, upstream, method, DENIED_DOC, m)
        assert row["decision"] == "denied", row.raw
        assert row["rule"] == f"resources.{DENIED_DOC}", row.raw
        assert row["reason"] == "feature lists are not for agents", row.raw
        assert row["outcome"] is None, f"a denied read is never forwarded: {row.raw}"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_hidden_resources_and_templates_are_absent_and_refused(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)
    blob = "demo://resource/dynamic/blob/5"

    async def lists(s):
        return dump(await s.list_resources()), dump(await s.list_resource_templates())

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await lists(s)
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            via = await lists(s)
            hidden_read = await refused(s.read_resource(HIDDEN_DOC))
            blob_read = await refused(s.read_resource(blob))
        return direct, via, hidden_read, blob_read

    (d_res, d_tpl), (v_res, v_tpl), hidden_read, blob_read = run(body)
    d_uris = [r["uri"] for r in d_res["resources"]]
    assert HIDDEN_DOC in d_uris and ALLOWED_DOC in d_uris, f"baseline resources: {d_uris}"
    assert [r for r in d_res["resources"] if r["uri"] != HIDDEN_DOC] == v_res["resources"], \
        "resources/list loses exactly the hidden resource; the rest passes untouched"
    d_tpls = [t["uriTemplate"] for t in d_tpl["resourceTemplates"]]
    assert "demo://resource/dynamic/blob/{resourceId}" in d_tpls, f"baseline templates: {d_tpls}"
    assert [t for t in d_tpl["resourceTemplates"] if "/dynamic/blob/" not in t["uriTemplate"]] == \
        v_tpl["resourceTemplates"], "the hidden template is left out, the text template stays"
    assert_refused(hidden_read)
    assert_refused(blob_read)
    for uri in (HIDDEN_DOC, blob):
        (row,) = rows(gateway, upstream, "resources/read", uri, m)
        assert row["decision"] == "hidden" and row["outcome"] is None, row.raw


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_held_resource_read_approved_then_denied(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)
    held_text = f"demo://resource/dynamic/text/7{uuid.uuid4().int % 10**8}"
    api = ControlApi.of(gateway)

    def decide(approval: dict[str, Any]):
        if approval.get("server") != upstream or approval.get("method") != "resources/read":
            return None
        if approval.get("tool") == HELD_DOC:
            return ("approve", "once")
        if approval.get("tool") == held_text:
            return ("deny", f"not now {m}")
        return None

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await s.read_resource(HELD_DOC)
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            approved = await s.read_resource(HELD_DOC)
            rejected = await refused(s.read_resource(held_text))
        return direct, approved, rejected

    with api.subscribe() as stream:
        approver = AutoApprover(stream, decide)
        try:
            direct, approved, rejected = run(body)
        finally:
            approver.stop()
    asked = [(a["tool"], a.get("method"), action[0], reply.status) for a, action, reply, _ in approver.decided]
    assert (HELD_DOC, "resources/read", "approve", 200) in asked, asked
    assert (held_text, "resources/read", "deny", 200) in asked, asked
    assert dump(approved) == dump(direct), "an approved read gives the server's own contents"
    assert_refused(rejected)

    (row,) = rows(gateway, upstream, "resources/read", HELD_DOC, m, settled=True)
    assert row["decision"] == "approved" and row["outcome"] == "ok", row.raw
    (row,) = rows(gateway, upstream, "resources/read", held_text, m)
    assert row["decision"] == "rejected" and row["outcome"] is None, row.raw
    assert row["rule"] == "resources.demo://resource/dynamic/text/*.rules[0]", row.raw


# Spellings of the denied document (and of a dynamic id a rule denies) that every server reads as
# that resource: each must be decided as its normal form.
DENIED_SPELLINGS = [
    "DEMO://resource/static/document/features.md",           # upper-case scheme
    "demo://RESOURCE/static/document/features.md",           # upper-case host
    "demo://resource/static/document/%66eatures.md",         # %66 = f, an unreserved char escaped
    "demo://resource/static/document/feature%73.md",         # %73 = s
    "demo://resource/static/document/../document/features.md",  # dot segments
    "demo://resource/static/./document/features.md",
]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_uri_spellings_are_decided_as_their_normal_form(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)
    eight = str(8 * 10**7 + uuid.uuid4().int % 10**7)  # a dynamic id the uri rule denies (8…)
    eight_spelled = f"demo://resource/dynamic/text/%38{eight[1:]}"  # %38 = 8
    upper_allowed = "DEMO://resource/static/document/architecture.md"

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await s.read_resource(ALLOWED_DOC)
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            errors = [await refused(read_raw(s, uri)) for uri in DENIED_SPELLINGS]
            eight_error = await refused(read_raw(s, eight_spelled))
            allowed = await read_raw(s, upper_allowed)
        return direct, errors, eight_error, allowed

    direct, errors, eight_error, allowed = run(body)
    for uri, err in zip(DENIED_SPELLINGS, errors):
        text = assert_refused(err, "feature lists are not for agents")
        assert text, uri
    assert_refused(eight_error, "eights are not read")
    assert texts(allowed) == texts(direct), "the upper-case scheme reads the allowed document itself"

    denied = rows(gateway, upstream, "resources/read", DENIED_DOC, m, count=len(DENIED_SPELLINGS))
    assert len(denied) == len(DENIED_SPELLINGS), [r.raw for r in denied]
    assert sorted(r.arguments()["uri"] for r in denied) == sorted(DENIED_SPELLINGS), \
        "each row keeps the URI as sent beside the normal form in `tool`"
    for r in denied:
        assert r["decision"] == "denied" and r["rule"] == f"resources.{DENIED_DOC}", r.raw
    (row,) = rows(gateway, upstream, "resources/read", f"demo://resource/dynamic/text/{eight}", m)
    assert row["decision"] == "denied" and row["rule"].endswith(".rules[1]"), row.raw
    (row,) = rows(gateway, upstream, "resources/read", ALLOWED_DOC, m, settled=True)
    assert row["decision"] == "allowed" and row.arguments() == {"uri": upper_allowed}, row.raw


# URIs a server could read differently from the gateway: refused whatever the entry they seem to name.
UNNORMALIZABLE = [
    "demo://resource/static/document%2Farchitecture.md",         # encoded slash
    "demo://resource/static/document/..%2Farchitecture.md",
    "demo://resource/static/document/%2e%2e/document/architecture.md",  # escaped dot segment
    "demo://resource/static/document/architecture.md%00",         # encoded NUL
    "demo://user@resource/static/document/architecture.md",       # userinfo
    "demo://resource/static/document\\architecture.md",            # backslash
]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_uri_that_cannot_be_normalized_is_refused(world, gateway, route, upstream):
    m = marker()

    async def body():
        async with open_session(route, upstream, world.spec(upstream), gateway, client_info=client(m)) as (s, _):
            errors = [await refused(read_raw(s, uri)) for uri in UNNORMALIZABLE]
            after = await s.read_resource(ALLOWED_DOC)
        return errors, after

    errors, after = run(body)
    for uri, err in zip(UNNORMALIZABLE, errors):
        assert_refused(err, "refused")
    assert texts(after)[0], "the session stays usable"
    for uri in UNNORMALIZABLE:
        (row,) = rows(gateway, upstream, "resources/read", uri, m)
        assert row["decision"] == "denied" and row["outcome"] is None, row.raw
        assert row["rule"] == "default", f"no entry can match a URI without a normal form: {row.raw}"


@pytest.mark.parametrize("route", ROUTES)
def test_file_without_sections_decides_other_doors_by_its_default(world, gateway, route):
    """`everything` has only `tools` and default allow; `unpoliced` has no file (approval, no approver)."""
    m = marker()

    async def body():
        async with open_session(route, "everything", world.spec("everything"), gateway, client_info=client(m)) as (s, _):
            read = await s.read_resource(ALLOWED_DOC)
            prompt = await s.get_prompt("simple-prompt")
        async with open_session(route, "unpoliced", world.spec("unpoliced"), gateway, client_info=client(m)) as (s, _):
            held = await refused(s.read_resource(ALLOWED_DOC))
        return read, prompt, held

    read, prompt, held = run(body, timeout=60)
    assert texts(read)[0] and prompt.messages, "default allow lets reads and prompts through"
    assert_refused(held, "no approver")
    (row,) = rows(gateway, "everything", "resources/read", ALLOWED_DOC, m, settled=True)
    assert row["decision"] == "allowed" and row["rule"] == "default" and row["outcome"] == "ok", row.raw
    (row,) = rows(gateway, "everything", "prompts/get", "simple-prompt", m, settled=True)
    assert row["decision"] == "allowed" and row["rule"] == "default", row.raw
    (row,) = rows(gateway, "unpoliced", "resources/read", ALLOWED_DOC, m)
    assert row["decision"] not in ("allowed", "approved") and row["outcome"] is None, row.raw


# --------------------------------------------------------------------------------------------------
# Prompts


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_prompt_get_allowed_matches_direct(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)

    async def gets(s):
        return dump(await s.get_prompt("simple-prompt")), dump(await s.get_prompt("args-prompt", {"city": f"Oslo-{m}"}))

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await gets(s)
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            via = await gets(s)
        return direct, via

    direct, via = run(body)
    assert via == direct, "allowed prompts pass through untouched"
    assert via[1]["messages"][0]["content"]["text"] == f"What's weather in Oslo-{m}?"
    (row,) = gateway.audit_rows_for(upstream, "args-prompt", m, settled=True, method="prompts/get")
    assert row["method"] == "prompts/get" and row["decision"] == "allowed", row.raw
    assert row["rule"] == "prompts.args-prompt" and row["outcome"] == "ok", row.raw
    assert row.arguments() == {"city": f"Oslo-{m}"}, row.raw
    (row,) = rows(gateway, upstream, "prompts/get", "simple-prompt", m, settled=True)
    assert row["rule"] == "prompts.simple-prompt" and row["outcome"] == "ok", row.raw


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_prompt_denied_by_entry_and_by_argument_rule(world, gateway, route, upstream):
    m = marker()

    async def body():
        async with open_session(route, upstream, world.spec(upstream), gateway, client_info=client(m)) as (s, _):
            entry = await refused(s.get_prompt("completable-prompt", {"department": "Engineering", "name": m}))
            rule = await refused(s.get_prompt("args-prompt", {"city": f"Forbidden-{m}"}))
            fine = await s.get_prompt("args-prompt", {"city": f"Bergen-{m}"})
        return entry, rule, fine

    entry, rule, fine = run(body)
    assert_refused(entry, "no completable prompts here")
    assert_refused(rule, "that city is off limits")
    assert fine.messages[0].content.text == f"What's weather in Bergen-{m}?", "the rule reads this city only"
    (row,) = gateway.audit_rows_for(upstream, "completable-prompt", m, method="prompts/get")
    assert row["decision"] == "denied" and row["rule"] == "prompts.completable-prompt", row.raw
    rows_ = gateway.audit_rows_for(upstream, "args-prompt", m, count=2, settled=True, method="prompts/get")
    by_city = {r.arguments()["city"]: r for r in rows_}
    assert by_city[f"Forbidden-{m}"]["decision"] == "denied", by_city[f"Forbidden-{m}"].raw
    assert by_city[f"Forbidden-{m}"]["rule"] == "prompts.args-prompt.rules[0]"
    assert by_city[f"Forbidden-{m}"]["outcome"] is None
    assert by_city[f"Bergen-{m}"]["decision"] == "allowed" and by_city[f"Bergen-{m}"]["outcome"] == "ok"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_hidden_prompt_is_absent_and_refused(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = dump(await s.list_prompts())
        async with open_session(route, upstream, spec, gateway, client_info=client(m)) as (s, _):
            via = dump(await s.list_prompts())
            hidden = await refused(s.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"}))
        return direct, via, hidden

    direct, via, hidden = run(body)
    assert "resource-prompt" in [p["name"] for p in direct["prompts"]], "baseline: the prompt is offered"
    assert via["prompts"] == [p for p in direct["prompts"] if p["name"] != "resource-prompt"], \
        "prompts/list loses exactly the hidden prompt"
    assert_refused(hidden)
    (row,) = rows(gateway, upstream, "prompts/get", "resource-prompt", m)
    assert row["decision"] == "hidden" and row["outcome"] is None, row.raw


# --------------------------------------------------------------------------------------------------
# The server's own requests


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_server_requests_denied_never_reach_the_client(world, gateway, route, upstream):
    m = marker()
    cb = Callbacks()

    async def body():
        async with open_session(route, upstream, world.spec(upstream), gateway, callbacks=cb,
                                client_info=client(m)) as (s, _):
            sampling = await s.call_tool("trigger-sampling-request", {"prompt": f"prompt {m}", "maxTokens": 20})
            elicitation = await s.call_tool("trigger-elicitation-request", {})
            roots = await s.call_tool("get-roots-list", {})
            after = await s.call_tool("echo", {"message": m})
        return sampling, elicitation, roots, after

    sampling, elicitation, roots, after = run(body)
    assert cb.sampling == [], "a denied sampling request must never reach the client's callback"
    assert cb.elicitation == [], "a denied elicitation must never reach the client's callback"
    assert cb.roots == 0, "a denied roots/list must never reach the client's callback"

    s_text = first_text(sampling)
    assert sampling.isError is True, f"the server's trigger tool reports the refused sampling: {dump(sampling)}"
    assert harness.DENIAL_PREFIX in s_text and "this server may not use the model" in s_text, s_text
    assert "sampled reply" not in s_text
    e_text = " ".join(c.text for c in elicitation.content if c.type == "text")
    assert "declined" in e_text, f"the server must get a decline: {e_text!r}"
    r_text = first_text(roots)
    assert ROOT_URI not in r_text and "no roots" in r_text, f"the server gets no roots: {r_text!r}"
    assert first_text(after) == f"Echo: {m}"

    (row,) = gateway.audit_rows_for(upstream, "sampling", m, method="sampling/createMessage")
    assert row["decision"] == "denied" and row["rule"] == "server_requests.sampling", row.raw
    assert row["reason"] == "this server may not use the model" and row["outcome"] is None, row.raw
    (row,) = rows(gateway, upstream, "elicitation/create", "elicitation", m)
    assert row["decision"] == "denied" and row["rule"] == "server_requests.elicitation", row.raw
    roots_rows = rows(gateway, upstream, "roots/list", "roots", m)
    assert all(r["decision"] == "denied" and r["rule"] == "server_requests.roots" for r in roots_rows), \
        [r.raw for r in roots_rows]
    (row,) = gateway.audit_rows_for(upstream, "trigger-sampling-request", m, settled=True)
    assert row["decision"] == "allowed" and row["method"] == "tools/call", "the triggering call itself went on"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_held_sampling_approved_reaches_the_client_once(world, gateway, route, upstream):
    m = marker()
    cb = Callbacks()
    api = ControlApi.of(gateway)

    def decide(approval: dict[str, Any]):
        if approval.get("server") == upstream and approval.get("method") == "sampling/createMessage" \
                and m in json.dumps(approval.get("arguments")):
            return ("approve", "once")
        return None

    async def body():
        async with open_session(route, upstream, world.spec(upstream), gateway, callbacks=cb,
                                client_info=client(m)) as (s, _):
            return await s.call_tool("trigger-sampling-request", {"prompt": f"held {m}", "maxTokens": 77})

    with api.subscribe() as stream:
        approver = AutoApprover(stream, decide)
        try:
            result = run(body)
        finally:
            approver.stop()
    assert [(a["tool"], action[0], reply.status) for a, action, reply, _ in approver.decided] == \
        [("sampling", "approve", 200)], "the sampling request was held once and approved"
    assert len(cb.sampling) == 1, "an approved sampling request reaches the client's callback exactly once"
    assert f"held {m}" in cb.sampling[0].messages[0].content.text
    assert result.isError is not True and "sampled reply to:" in first_text(result), dump(result)

    (row,) = gateway.audit_rows_for(upstream, "sampling", m, method="sampling/createMessage", settled=True)
    assert row["decision"] == "approved" and row["rule"] == "server_requests.sampling.rules[0]", row.raw
    assert row["outcome"] == "ok", row.raw
