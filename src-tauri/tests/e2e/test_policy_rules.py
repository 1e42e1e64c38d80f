"""Argument rules edited in the policy editor's Tools view of the real app: built with the
condition builder (the same one as the prompt's scoped "always"), ordered, saved into the file,
and then deciding the calls they match. A rule the gateway refuses is shown under the rule and
cannot be saved.

The tests share one app and run in file order.
"""

from __future__ import annotations

import json
import uuid

from conftest import MAIN_TITLE, App, result_text, wait_until


def marker() -> str:
    return f"m-{uuid.uuid4().hex[:10]}"


def type_into(app: App, testid: str, text: str) -> None:
    """Sets a text field as typing would (an input event). Not send_keys: WebKitWebDriver reads a
    path sent as keys as a file to upload."""
    el = app.wait_testid(testid)
    app.driver.execute_script(
        "const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true}));",
        el, text)


def select(app: App, testid: str, value: str) -> None:
    el = app.wait_testid(testid)
    app.driver.execute_script(
        "const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('change', {bubbles: true}));",
        el, value)
    wait_until(lambda: el.get_attribute("value") == value, 5, f"{testid} set to {value}")


def add_rule(app: App, tool: str, op: str, value: str, action: str, reason: str = "", shot: str | None = None) -> None:
    app.click(f"add-rule-{tool}", timeout=40)  # the tool list comes from the server itself
    argument = app.wait_testid("rule-cond-argument-0")
    # The server listed echo with an inputSchema: its property is offered, and the first is taken.
    wait_until(lambda: argument.get_attribute("value") == "message", 5, "the schema's property as the argument")
    select(app, "rule-cond-op-0", op)
    type_into(app, "rule-cond-value-0", value)
    select(app, "rule-action", action)
    if reason:
        type_into(app, "rule-reason", reason)
    if shot:
        app.screenshot(shot, MAIN_TITLE)
    app.click("rule-apply")


def rule_texts(app: App, tool: str) -> list[str]:
    return [e.text for e in app.driver.find_elements("css selector", f'[data-testid^="rule-text-{tool}-"]')]


def test_an_argument_rule_added_in_the_tools_view_is_saved_and_decides_matching_calls(app: App) -> None:
    m = marker()
    policy = app.policies / "everything.json"
    app.window("main")
    app.click("tab-policies")
    app.click("policy-server-everything")

    add_rule(app, "echo", "prefix", f"/etc/{m}/", "deny", "no system files")
    wait_until(lambda: rule_texts(app, "echo") == [f"deny when message starts with /etc/{m}/ — reason “no system files”"],
               15, "the new rule as a line under echo")
    # A second rule that overlaps the first; moved up, it is tried first and so wins for its calls.
    add_rule(app, "echo", "path_under", f"/etc/{m}/public", "allow", shot="policy-rule-form")
    wait_until(lambda: len(rule_texts(app, "echo")) == 2, 15, "the second rule")
    app.click("rule-up-echo-1")
    wait_until(lambda: rule_texts(app, "echo")[0].startswith(f"allow when message is under /etc/{m}/public"),
               15, "the allow rule to be tried first")
    assert "first whose conditions all hold decides" in app.find("rules-echo").text, "the UI says order matters"
    app.wait_testid("policy-dirty")
    app.screenshot("policy-rules", MAIN_TITLE)

    app.click("policy-save")
    want = [
        {"when": {"arguments.message": {"path_under": f"/etc/{m}/public"}}, "action": "allow"},
        {"when": {"arguments.message": {"prefix": f"/etc/{m}/"}}, "action": "deny", "reason": "no system files"},
    ]
    echo = wait_until(lambda: (e := json.loads(policy.read_text())["tools"]["echo"]).get("rules") == want and e, 10,
                      "the rules in the policy file")
    assert echo["action"] == "require_approval", f"the entry's own action is kept: {echo}"
    assert policy.read_text().endswith("}\n") and '\n  "tools": {\n' in policy.read_text(), "pretty-printed as the editor saves"
    app.wait_testid("policy-message")

    client = app.client()
    denied = client.call_tool("echo", {"message": f"/etc/{m}/passwd"}, timeout=15)
    assert denied.get("isError") is True and "no system files" in result_text(denied), f"the deny rule decides: {denied}"
    allowed = client.call_tool("echo", {"message": f"/etc/{m}/public/readme"}, timeout=15)
    assert not allowed.get("isError") and f"/etc/{m}/public/readme" in result_text(allowed), \
        f"the allow rule, tried first, decides: {allowed}"
    assert not app.prompt_viewable(), "calls a rule decides ask nobody"


def test_a_rule_the_gateway_refuses_is_shown_under_it_and_never_saved(app: App) -> None:
    policy = app.policies / "everything.json"
    before = policy.read_text()
    app.window("main")
    app.wait_testid("rules-echo")
    add_rule(app, "echo", "regex", "(unclosed", "deny")
    # A new deny goes first, where it only tightens (as the prompt's "always" places one).
    wait_until(lambda: rule_texts(app, "echo")[0] == "deny when message matches regex (unclosed", 15, "the deny placed first")
    problem = app.wait_testid("rule-problem-echo-0", timeout=15)
    assert "invalid regular expression" in problem.text, problem.text
    assert not app.find("policy-save").is_enabled(), "a policy with problems cannot be saved"
    # Deleting the rule clears the problem; nothing was written meanwhile.
    app.click("rule-delete-echo-0")
    wait_until(lambda: not app.find_all("rule-problem-echo-0"), 15, "the problem to go with the rule")
    assert policy.read_text() == before, "the refused rule never reached the file"
