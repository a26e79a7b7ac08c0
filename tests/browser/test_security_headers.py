"""The pages' security headers in a real Chromium (issue 17: pages carried none, and any
site could frame the table).

* The table works under its own Content-Security-Policy: the start page, creating a table
  against the computer, sitting, the deal, a discard and a play, a hint, the rules and the
  replay page raise no ``securitypolicyviolation`` event and log no console error (the
  ``new_page`` fixture fails on any).
* Another origin cannot frame it (``frame-ancestors 'none'``): a page of another loopback
  port with an ``<iframe>`` of the table gets Chromium's error page in the frame, not the
  table — while the same page does frame a server whose ``frame_ancestors`` setting names
  that origin (so the check can tell a framed table from a refused one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer
from crib_ui import act_once, create_table, table
from test_cross_origin import StaticSite

from server.settings import Settings

pytestmark = pytest.mark.browser

WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""
"""Collects every CSP violation of the page (an init script runs before the page's own)."""


def violations(page: Any) -> list[str]:
    return page.evaluate("window.__csp || []")


def test_the_table_runs_under_its_content_security_policy(live_server: Any,
                                                          new_page: Any) -> None:
    me = new_page()
    me.add_init_script(WATCH_CSP)
    answer = me.goto(live_server.url + "/")
    headers = answer.headers
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-frame-options"] == "DENY"

    create_table(me, live_server.url, "Ann", target="61", seats={1: "standard"})
    me.wait_for_selector(".hand .card")
    assert violations(me) == []
    # A discard, then the play (the computer answers), and a hint on the way.
    acted = 0
    for _ in range(200):
        if acted >= 3:
            break
        if act_once(me):
            acted += 1
        else:
            me.wait_for_timeout(50)
    assert acted >= 2, table(me)
    if me.locator("#hint").count():
        me.click("#hint")
        me.wait_for_timeout(300)
    assert violations(me) == []
    for path in ("/rules", "/rules/standard", "/replay"):
        me.goto(live_server.url + path)
        me.wait_for_selector("#app *")
        assert violations(me) == [], path


FRAMING_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Someone else's site</title>
<link rel="icon" href="data:,"></head>
<body><iframe id="table" title="the table" width="800" height="600"></iframe>
<script type="module">
const frame = document.getElementById("table");
frame.addEventListener("load", () => { window.framed = true; });
frame.src = new URLSearchParams(location.search).get("src");
</script></body></html>
"""


@pytest.fixture
def other_site(tmp_path: Path) -> Iterator[StaticSite]:
    (tmp_path / "index.html").write_text(FRAMING_PAGE, encoding="utf-8")
    with StaticSite(tmp_path) as s:
        yield s


def frame_table(browser: Any, site: StaticSite, url: str) -> tuple[str, bool, list[str]]:
    """Open the other site's page framing ``url``: (the frame's URL, whether it shows the
    table, what the console said)."""
    context = browser.new_context()
    console: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        page.goto(f"{site.origin}/index.html?src={url}")
        page.wait_for_function("window.framed === true", timeout=20_000)
        child = next(f for f in page.frames if f is not page.main_frame)
        shows_table = False
        if child.url.startswith("http"):
            try:
                child.wait_for_selector("#app *", timeout=5_000)
                shows_table = True
            except Exception:
                shows_table = False
        return child.url, shows_table, console
    finally:
        context.close()


def test_another_origin_cannot_frame_the_table(browser: Any, live_server: Any,
                                               other_site: StaticSite) -> None:
    assert httpx.get(live_server.url + "/").headers["x-frame-options"] == "DENY"
    url, shows_table, console = frame_table(browser, other_site, live_server.url + "/")
    assert not shows_table, (url, console)
    assert not url.startswith(live_server.url), url
    assert any("frame-ancestors" in line for line in console), console

    # The check can see a framed table: a server that lets that origin frame it.
    allowing = LiveServer(Settings(frame_ancestors=f"'self' {other_site.origin}")).start()
    try:
        assert "x-frame-options" not in httpx.get(allowing.url + "/").headers
        url, shows_table, console = frame_table(browser, other_site, allowing.url + "/")
    finally:
        allowing.stop()
    assert shows_table and url.startswith(allowing.url), (url, console)
