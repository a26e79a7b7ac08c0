"""A passkey brings the player back in a real Chromium, through the DevTools protocol's
virtual authenticator (``WebAuthn.addVirtualAuthenticator``: CTAP2, internal, resident
keys, user verification): a player makes a passkey on the "You" page ("Add a passkey"),
the browser's storage is wiped (the next visit makes a new, anonymous player), and "Sign
in with a passkey" gives back the **same** player id (with a new secret) in its place.
WebAuthn needs a secure context and a domain as the relying party id, so the page is
opened at ``http://localhost:<port>``, not ``127.0.0.1``. axe-core finds nothing serious
on the page."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_comfort import axe

pytestmark = pytest.mark.browser


def test_a_passkey_gives_the_same_player_back(live_server: Any, browser: Any,
                                              axe_source: str) -> None:
    site = live_server
    origin = f"http://localhost:{site.port}"
    made = httpx.post(f"{site.url}/api/players", json={"name": "Pat", "language": "en"})
    assert made.status_code == 201, made.text
    player = made.json()

    context = browser.new_context(viewport={"width": 1280, "height": 860})
    problems: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" else None)
        cdp = context.new_cdp_session(page)
        cdp.send("WebAuthn.enable")
        authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
            "hasUserVerification": True, "isUserVerified": True,
            "automaticPresenceSimulation": True,
        }})["authenticatorId"]

        # a player kept in this browser: the panel offers to keep it on a passkey
        page.goto(f"{origin}/you")
        page.wait_for_selector("#you-name")  # its own new player made and kept, first
        page.evaluate("(p) => localStorage.setItem('cribbage.player', JSON.stringify(p))",
                      {"id": player["id"], "secret": player["secret"]})
        page.reload()
        add = page.get_by_role("button", name="Add a passkey")
        add.click()
        status = page.locator("[data-key=passkey-status]")
        status.filter(has_text="Passkey added").wait_for()
        held = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
        assert [c["isResidentCredential"] for c in held["credentials"]] == [True]
        assert held["credentials"][0]["rpId"] == "localhost"
        axe(page, axe_source, "the You page, add a passkey")

        # the browser forgets everything it kept for the site
        page.evaluate("localStorage.clear()")
        page.reload()
        page.wait_for_selector("#you-name")  # a new player, for now
        fresh = json.loads(page.evaluate("localStorage.getItem('cribbage.player')"))
        assert fresh["id"] != player["id"]
        page.get_by_role("button", name="Sign in with a passkey").click()
        status.filter(has_text="Welcome back, Pat.").wait_for()
        back = json.loads(page.evaluate("localStorage.getItem('cribbage.player')"))
        assert back["id"] == player["id"] and back["secret"] != player["secret"]
        page.get_by_role("button", name="Add a passkey").wait_for()  # the panel follows
        page.wait_for_function(  # the page follows too
            "() => document.querySelector('#you-name')?.value === 'Pat'")
        # the new secret is a credential of that player
        me = httpx.get(f"{site.url}/api/players/me",
                       headers={"Authorization": f"Player {back['id']}.{back['secret']}"})
        assert me.status_code == 200 and me.json()["id"] == player["id"]

        # signing in again, with nothing kept: "Sign in" again, and the counter is checked
        page.evaluate("localStorage.clear()")
        page.reload()
        page.wait_for_selector("#you-name")
        axe(page, axe_source, "the You page, sign in with a passkey")
        page.get_by_role("button", name="Sign in with a passkey").click()
        status.filter(has_text="Welcome back").wait_for()
        assert json.loads(page.evaluate(
            "localStorage.getItem('cribbage.player')"))["id"] == player["id"]

        # no passkey for the site on the authenticator: said so, the kept player stays
        cdp.send("WebAuthn.clearCredentials", {"authenticatorId": authenticator})
        page.evaluate("localStorage.clear()")
        page.reload()
        page.wait_for_selector("#you-name")
        fresh = page.evaluate("localStorage.getItem('cribbage.player')")
        page.get_by_role("button", name="Sign in with a passkey").click()
        status.filter(has_text="No passkey was used").wait_for(timeout=20_000)
        assert page.evaluate("localStorage.getItem('cribbage.player')") == fresh
    finally:
        context.close()
    assert not problems, problems
