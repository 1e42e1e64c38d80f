"""The desktop app end to end: a real MCP client calls server-everything through the app's
in-process gateway; the person answers in the real prompt, the notification, the policy editor.

The tests share one app and run in file order (each leaves no call pending).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import CLI_BIN, EVERYTHING, MAIN_TITLE, PROMPT_TITLE, App, result_text, wait_until, x_window_id

#: Measured times from the client sending a held call to the prompt window being on screen (X11
#: map state, polled every 5 ms), reported at the end of the module.
LATENCIES_MS: list[float] = []
#: From the call's arrival at the gateway (`requested_at_ms`) to the prompt painting it (the page's
#: own timestamp after the next animation frame): no polling in the figure. Split by whether the
#: prompt's web view was already built (it lingers 30 s hidden) or was built for this call.
PAINT_MS: dict[str, list[float]] = {"warm": [], "cold": []}


def marker() -> str:
    return f"m-{uuid.uuid4().hex[:10]}"


def wait_prompt_for(app: App, text: str) -> float:
    """Waits until the prompt window is on screen showing `text` in its arguments; returns when
    it became viewable (monotonic clock)."""
    before = x_window_id(PROMPT_TITLE)
    shown_at = wait_until(lambda: app.prompt_viewable() and time.monotonic(), 15, "the prompt window on screen",
                          interval=0.005)
    app.window("prompt")
    wait_until(lambda: text in app.find("prompt-arguments").text, 15, f"the prompt to show {text}")
    call = app.find("prompt-call")
    painted = int(wait_until(lambda: int(call.get_attribute("data-painted-at") or 0), 15, "the paint timestamp"))
    listed = subprocess.run([str(CLI_BIN), "approvals", "list", "--json", "--data-dir", str(app.data_dir)],
                            capture_output=True, text=True, check=True, timeout=20)
    held = [a for a in json.loads(listed.stdout) if text in json.dumps(a["arguments"])]
    if held:
        # The same X window before and after: the lingering prompt was reused.
        PAINT_MS["warm" if before is not None and before == x_window_id(PROMPT_TITLE) else "cold"].append(
            painted - held[0]["requested_at_ms"])
    return shown_at


def test_starts_with_no_prompt_window(app: App) -> None:
    # The prompt is built for the first held call: an app with nothing pending holds no web view
    # for it (issue 16, footprint).
    assert x_window_id(PROMPT_TITLE) is None, "no prompt window before a call is held"
    assert "prompt" not in app.handles
    info = app.gateway()
    assert info["url"].startswith("http://127.0.0.1:") and len(info["token"]) >= 32
    app.window("main")
    app.wait_testid("approvals-empty")
    assert "Started" in app.log() or "gateway ready" in app.log()


def test_a_held_call_shows_the_prompt_and_approve_once_returns_the_result(app: App) -> None:
    client = app.client()
    m = marker()
    sent = time.monotonic()
    pending = app.call_async(client, "echo", {"message": m})
    shown = wait_prompt_for(app, m)
    LATENCIES_MS.append((shown - sent) * 1000)
    assert app.find("prompt-server").text == "everything"
    assert app.find("prompt-tool").text == "echo"
    assert app.find("prompt-rule").text == "tools.echo"
    app.screenshot("prompt", PROMPT_TITLE)
    app.decide("approve-once")
    result = pending.result(timeout=30)
    assert not result.get("isError"), f"approved call must reach the upstream: {result}"
    assert m in result_text(result), f"the upstream's echo must come back: {result}"
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide when nothing is pending")


def test_deny_in_the_prompt_refuses_the_call(app: App) -> None:
    client = app.client()
    m = marker()
    sent = time.monotonic()
    pending = app.call_async(client, "echo", {"message": m})
    LATENCIES_MS.append((wait_prompt_for(app, m) - sent) * 1000)
    app.decide("deny")
    result = pending.result(timeout=30)
    assert result.get("isError") is True, f"a denied call is a tool error: {result}"
    text = result_text(result)
    assert text.startswith("[portcullis]") and "denied by the user" in text, text
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to hide")


def test_approve_from_the_notification_action(app: App) -> None:
    client = app.client()
    m = marker()
    before = app.log().count("notification shown")
    pending = app.call_async(client, "echo", {"message": m})
    wait_prompt_for(app, m)
    wait_until(lambda: app.log().count("notification shown") > before, 10, "the notification (is dunst running?)")
    shown = re.findall(r'notification shown id="?(\d+)"? notification=(\d+)', app.log())[-1]
    notification_id = shown[1]
    subprocess.run(["gdbus", "emit", "--session", "--object-path", "/org/freedesktop/Notifications",
                    "--signal", "org.freedesktop.Notifications.ActionInvoked",
                    f"uint32 {notification_id}", "'approve'"], check=True, timeout=10)
    result = pending.result(timeout=30)
    assert not result.get("isError") and m in result_text(result), f"approved from the notification: {result}"
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to close after a decision elsewhere")


def test_a_decision_made_in_the_cli_closes_the_prompt(app: App) -> None:
    client = app.client()
    m = marker()
    pending = app.call_async(client, "echo", {"message": m})
    wait_prompt_for(app, m)
    data = ["--data-dir", str(app.data_dir)]
    listed = subprocess.run([str(CLI_BIN), "approvals", "list", "--json", *data], capture_output=True, text=True,
                            check=True, timeout=20)
    (held,) = [a for a in json.loads(listed.stdout) if a["arguments"].get("message") == m]
    subprocess.run([str(CLI_BIN), "approvals", "deny", held["id"], "--reason", "not now", *data], check=True,
                   timeout=20, stdout=subprocess.DEVNULL)
    result = pending.result(timeout=30)
    assert result.get("isError") is True and "not now" in result_text(result), result
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to close after a decision in the CLI")


def test_the_policy_editor_writes_the_file_and_changes_the_next_decision(app: App) -> None:
    app.window("main")
    app.click("tab-policies")
    app.click("policy-server-everything")
    app.choose("state-echo-allow", timeout=40)  # the tool list comes from the server itself
    # What comes back (issue 33): the file's `results`, chosen in the same editor and saved with it.
    app.click("results-summary")  # folded by default
    escapes = app.wait_testid("results-escapes")
    assert escapes.get_attribute("value") == "", "unset: the default"
    # Chosen as a change event, as a person's pick fires it (WebKitWebDriver clicks no <option>).
    app.driver.execute_script(
        "arguments[0].value = 'flag'; arguments[0].dispatchEvent(new Event('change', {bubbles: true}));", escapes)
    wait_until(lambda: "reaches the agent as it came" in app.find("results-escapes-help").text, 10,
               "the panel to say what flag does")
    app.click("policy-save")
    policy = app.policies / "everything.json"
    wait_until(lambda: json.loads(policy.read_text())["tools"]["echo"].get("action", "allow") == "allow", 10,
               "the policy file to allow echo")
    assert json.loads(policy.read_text()).get("results") == {"escapes": "flag"}, policy.read_text()
    app.wait_testid("policy-message")
    app.screenshot("policy-editor", MAIN_TITLE)
    # The raw editor: a long line wraps, and the coloured copy under the textarea wraps with it
    # (same height), so what is typed lies on its colours.
    app.click("policy-tab-raw")
    area = app.wait_testid("raw-json")
    app.driver.execute_script(
        "const el = arguments[0]; el.value = el.value.replace('{', '{\"reason\": \"' + 'long words '.repeat(40) + '\", ');"
        "el.dispatchEvent(new Event('input', {bubbles: true}));", area)
    heights = lambda: app.driver.execute_script(  # noqa: E731
        # The textarea's own text height: with no height its scrollHeight is its content's.
        "const a = arguments[0]; const l = a.parentElement.querySelector('.lines');"
        "a.style.height = '0px'; const typed = a.scrollHeight; a.style.height = '';"
        "return [typed, l.getBoundingClientRect().height, a.clientWidth];", area)
    wait_until(lambda: heights()[1] > 18 * 3, 10, "the long line to wrap")
    typed, drawn, _ = heights()
    assert abs(typed - drawn) <= 2, f"the textarea ({typed}px) and its colours ({drawn}px) must wrap alike"
    app.screenshot("policy-raw", MAIN_TITLE)
    app.click("policy-revert")
    m = marker()
    result = app.client().call_tool("echo", {"message": m}, timeout=15)
    assert not result.get("isError") and m in result_text(result), f"echo is allowed now: {result}"
    assert not app.prompt_viewable(), "an allowed call asks nobody"


def test_pause_denies_new_held_calls(app: App) -> None:
    app.window("main")
    app.click("tab-settings")
    app.click("setting-paused")
    try:
        app.wait_testid("paused-banner")
        result = app.client().call_tool("get-sum", {"a": 1, "b": 2}, timeout=15)
        text = result_text(result)
        assert result.get("isError") is True and text.startswith("[portcullis] Portcullis is paused:"), result
        assert not app.prompt_viewable(), "a call denied while paused never shows the prompt"
        rows = subprocess.run([str(CLI_BIN), "audit", "--format", "jsonl", "--limit", "1", "--data-dir",
                               str(app.data_dir)], capture_output=True, text=True, check=True, timeout=20)
        row = json.loads(rows.stdout.splitlines()[0])
        assert (row["tool"], row["decision"], row["decided_by"]) == ("get-sum", "denied", "gateway"), row
        app.screenshot("paused", MAIN_TITLE)
    finally:
        app.window("main")
        app.click("resume")
    wait_until(lambda: not app.find_all("paused-banner"), 10, "the banner to go after resuming")
    assert app.find("setting-paused").is_selected() is False


def test_a_server_added_in_the_servers_view_is_written_and_served_at_once(app: App) -> None:
    (app.policies / "more.json").write_text(json.dumps({"version": "1", "default": "allow"}))
    app.window("main")
    app.click("tab-servers")
    app.click("add-server")
    app.find("server-name").send_keys("more")
    app.find("server-command").send_keys("node")
    # Typed newlines do not reach a textarea through WebKitWebDriver: set the text as a paste would.
    app.driver.execute_script(
        "const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true}));",
        app.find("server-args"), f"{EVERYTHING}\nstdio")
    app.screenshot("server-form", MAIN_TITLE)
    app.click("server-save")
    app.wait_testid("servers-notice")
    config = json.loads((app.scratch / "portcullis.json").read_text())
    assert list(config) == ["listen", "policies", "approval", "mcpServers"], "the other keys stay, in order"
    assert list(config["mcpServers"]) == ["everything", "more"]
    assert config["mcpServers"]["more"] == {"command": "node", "args": [str(EVERYTHING), "stdio"]}
    m = marker()
    result = app.client("more").call_tool("echo", {"message": m}, timeout=60)
    assert not result.get("isError") and m in result_text(result), f"the new server answers at once: {result}"
    card = '[data-testid="server-card"][data-server="more"] [data-testid="server-state"]'
    wait_until(lambda: app.driver.find_element(By.CSS_SELECTOR, card).text == "running", 30, "more to be running")


def test_the_servers_view_lists_a_connected_client_until_it_leaves(app: App) -> None:
    """A `portcullis connect` runs the gate in its own process and announces its session to the
    app over its keeper link: the Servers view lists the client (its name, the connect's pid)
    and drops it once the client goes."""
    config = app.scratch / "portcullis.json"
    name = f"e2e-{marker()}"
    connect = subprocess.Popen([str(CLI_BIN), "connect", "everything", "--data-dir", str(app.data_dir),
                                "--config", str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": name, "version": "1.0"}}}
        connect.stdin.write((json.dumps(init) + "\n").encode())
        connect.stdin.flush()
        assert "result" in json.loads(connect.stdout.readline()), "initialized by connect"
        app.window("main")
        app.click("tab-servers")
        card = '[data-testid="server-card"][data-server="everything"] [data-testid="server-sessions"]'
        listed = lambda: " ".join(e.text for e in app.driver.find_elements(By.CSS_SELECTOR, card))  # noqa: E731
        wait_until(lambda: f"{name} 1.0" in listed() and f"pid {connect.pid}" in listed(), 30,
                   "the connected client in the Servers view")
        app.screenshot("servers-connected", MAIN_TITLE)
    finally:
        connect.stdin.close()
        connect.wait(timeout=20)
    wait_until(lambda: name not in listed(), 30, "the client to leave the Servers view")


def test_the_audit_view_lists_the_decisions(app: App) -> None:
    app.window("main")
    app.click("tab-audit")
    wait_until(lambda: len(app.find_all("audit-row")) >= 5, 15, "five audit rows")
    # The list draws only the rows near its view, so each decision is looked for as a person
    # would, with the decision filter; the decision is read from each drawn row's cell.
    decisions_shown = """return [...document.querySelectorAll('[data-testid=audit-row] [data-decision]')]
                         .map((c) => c.dataset.decision)"""
    for decision in ("approved", "rejected", "allowed"):
        app.driver.execute_script(
            "const s = document.querySelector('[data-testid=filter-decision]');"
            "s.value = arguments[0]; s.dispatchEvent(new Event('change', { bubbles: true }));", decision)
        app.click("filter-apply")
        shown = wait_until(lambda: (d := app.driver.execute_script(decisions_shown)) and set(d) == {decision} and d,
                           15, f"only {decision} rows")
        assert shown, f"the audit view must list a {decision} call"
    app.click("filter-reset")
    rows = wait_until(lambda: len(app.find_all("audit-row")) >= 5 and app.find_all("audit-row"), 15,
                      "the rows of every decision again")
    rows[0].find_element(By.CSS_SELECTOR, "[role=gridcell]").click()
    app.wait_testid("detail-outcome")
    app.screenshot("audit", MAIN_TITLE)
    app.click("tab-servers")
    wait_until(lambda: "running" in app.find("server-state").text, 30, "everything to be running")
    app.screenshot("servers", MAIN_TITLE)


def test_the_audit_detail_shows_what_came_back_with_its_findings_marked(app: App) -> None:
    """Issue 33 in the real app: an echo whose answer carries a zero-width space and an AWS key
    reaches the client without the hidden character; its row's detail shows
    the answer's excerpt with both findings marked and listed, the key redacted."""
    client = app.client()
    m = marker()
    key = "AKIAIOSFODNN7EXAMPLE"
    pending = app.call_async(client, "echo", {"message": f"{m} zero\u200bwidth {key}"})
    data = ["--data-dir", str(app.data_dir)]

    def held() -> list[dict]:
        listed = subprocess.run([str(CLI_BIN), "approvals", "list", "--json", *data], capture_output=True,
                                text=True, check=True, timeout=20)
        return [a for a in json.loads(listed.stdout) if m in json.dumps(a["arguments"])]

    # Echo is allowed once the policy editor's test ran; alone, this test finds it held.
    state = wait_until(lambda: (pending.done() and "ran") or (held() and "held"), 15, "the echo to run or be held")
    if state == "held":
        (call,) = held()
        subprocess.run([str(CLI_BIN), "approvals", "approve", call["id"], *data], check=True, timeout=20,
                       stdout=subprocess.DEVNULL)
    result = pending.result(timeout=30)
    assert result_text(result) == f"Echo: {m} zerowidth {key}", result
    wait_until(lambda: not app.prompt_viewable(), 10, "the prompt to close")
    app.window("main")
    app.click("tab-audit")
    app.click("audit-filter-findings")
    app.click("filter-apply")
    rows = wait_until(lambda: app.find_all("audit-row"), 15, "a row whose answer had findings")
    rows[0].find_element(By.CSS_SELECTOR, "[role=gridcell]").click()
    answer = app.wait_testid("audit-answer")
    marks = wait_until(lambda: [e.text for e in app.find_all("answer-mark")], 15, "the marked findings")
    assert "\\u{200B}" in marks and "[redacted]" in marks, marks
    assert key not in answer.text, "the key is redacted in the audit"
    assert len(app.find_all("answer-finding")) >= 2, answer.text
    app.driver.execute_script("arguments[0].scrollIntoView({block: 'end'})", answer)
    app.screenshot("audit-answer", MAIN_TITLE)
    app.click("audit-filter-findings")
    app.click("filter-apply")


def test_the_audit_export_asks_where_and_before_replacing(app: App) -> None:
    app.window("main")
    app.click("tab-audit")
    wait_until(lambda: len(app.find_all("audit-row")) >= 1, 15, "an audit row")
    target = app.data_dir.parent / f"export-{marker()}.csv"
    for attempt in ("new", "exists"):
        app.click("export-csv")
        path = app.wait_testid("export-path")
        wait_until(lambda: path.get_attribute("value").endswith(".csv"), 15, "the suggested path")
        # Typed as an input event: send_keys of a path would make selenium upload the file.
        app.driver.execute_script(
            "const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true}));",
            path, str(target))
        app.click("export-save")
        if attempt == "exists":
            warning = app.wait_testid("export-error")
            assert "already exists" in warning.text, warning.text
            app.screenshot("audit-export-exists", MAIN_TITLE)
            app.click("export-replace")
        saved = app.wait_testid("export-saved")
        assert str(target) in saved.text, saved.text
        app.click("export-done")
    lines = target.read_text().splitlines()
    assert lines[0].startswith("id,time_ms,time,session,"), lines[0]
    assert re.match(r"^\d+,\d+,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,", lines[1]), lines[1]
    assert target.stat().st_mode & 0o777 == 0o600, oct(target.stat().st_mode)


def test_a_theme_chosen_in_settings_applies_to_the_open_prompt(app: App) -> None:
    
    client = app.client()
    m = int(uuid.uuid4().int % 10**9)  # echo is allowed by now (the policy editor test): get-sum is held
    pending = app.call_async(client, "get-sum", {"a": m, "b": 1})
    wait_prompt_for(app, str(m))
    theme_of = lambda: app.driver.execute_script("return document.documentElement.dataset.theme || ''")  # noqa: E731
    before = theme_of()
    try:
        for theme in ("dark", "light"):
            app.window("main")
            app.click("tab-settings")
            Select(app.wait_testid("setting-theme")).select_by_value(theme)
            app.window("prompt")
            wait_until(lambda: theme_of() == theme, 10, f"the open prompt to turn {theme} (was {before!r})")
            app.screenshot(f"prompt-{theme}", PROMPT_TITLE)
    finally:
        app.window("main")
        app.click("tab-settings")
        Select(app.wait_testid("setting-theme")).select_by_value("system")
        app.window("prompt")
        app.decide("approve-once")
    assert str(m + 1) in result_text(pending.result(timeout=30))


def test_report_prompt_latency() -> None:
    assert LATENCIES_MS and PAINT_MS["cold"] and PAINT_MS["warm"], f"no latency measured: {PAINT_MS}"
    ms = lambda xs: ", ".join(f"{x:.0f} ms" for x in xs)  # noqa: E731
    print(f"\nprompt window on screen after the client sent the call: {ms(LATENCIES_MS)}"
          f"\ncall's arrival at the gateway to the prompt painting it: built for the call {ms(PAINT_MS['cold'])};"
          f" reused {ms(PAINT_MS['warm'])}")
    assert max(LATENCIES_MS) < 1000, f"the prompt must appear promptly: {LATENCIES_MS}"
    # A prompt built for the call loads its page first (the app keeps none while idle); the bound
    # is on a prompt that was still there.
    assert max(PAINT_MS["warm"]) < 1000, f"the prompt must paint promptly: {PAINT_MS}"
