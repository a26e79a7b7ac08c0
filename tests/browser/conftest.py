"""Fixtures of the browser tests: the app under a real uvicorn on a loopback port (rooms in
this process), and Debian's Chromium driven headless by Playwright (sync API).

Chromium comes from the ``chromium`` Debian package (``/usr/bin/chromium``; ``.ci/run``
installs it); Playwright never downloads a browser here. The tests are marked
``@pytest.mark.browser`` and are skipped when that Chromium is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from server.app import create_app
from server.settings import Settings

CHROMIUM = os.environ.get("CRIBBAGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_PREFIXES = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:http://127.0.0.1:")
HERE = Path(__file__).resolve().parent
DESKTOP = {"viewport": {"width": 1280, "height": 860}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}


class LiveServer:
    """The app under uvicorn in a background thread, on a free loopback port (``loop``:
    uvicorn's event loop, ``auto`` takes uvloop when it is installed).

    The event loop's lag is not watched (``overload_lag_seconds`` 0) unless the test sets
    it: this server shares its process with Playwright's driver and the machine with
    Chromium and another worker of the suite, and a late wake-up would refuse a move
    ``busy`` in a test about something else (seen once in a parallel run). The watch and
    the page's handling of ``busy`` have their own tests (``tests/server/test_overload.py``,
    ``test_busy.py``)."""

    def __init__(self, settings: Settings, loop: str = "auto") -> None:
        if "overload_lag_seconds" not in settings.model_fields_set:
            settings = settings.model_copy(update={"overload_lag_seconds": 0})
        config = uvicorn.Config(
            create_app(settings),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            ws_per_message_deflate=False,
            lifespan="on",
            loop=loop,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0

    def start(self) -> LiveServer:
        self.thread.start()
        end = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > end or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def live_server() -> Iterator[LiveServer]:
    """A fresh server (in-process store); computer players act without a pause."""
    server = LiveServer(Settings(bot_delay_seconds=0)).start()
    yield server
    server.stop()


@pytest.fixture
def quick_takeover_server() -> Iterator[LiveServer]:
    """Like ``live_server``, but a seat away for a second is played by the computer (the
    default takeover grace of new rooms is 1 s)."""
    server = LiveServer(Settings(bot_delay_seconds=0, takeover_grace_seconds=1.0)).start()
    yield server
    server.stop()


@pytest.fixture
def slow_takeover_server() -> Iterator[LiveServer]:
    """Like ``live_server``, but an away player's seat is taken over after 4 s (long enough
    to watch the countdown on the felt)."""
    server = LiveServer(Settings(bot_delay_seconds=0, takeover_grace_seconds=4.0)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium (one per test module; closed before other tests run)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """``new_page(phone=False)``: a page in its own browser context (its own localStorage,
    so each is an independent person). Page errors, console errors and any request that
    leaves the loopback server (a CDN, a web font) fail the test. Every wait on a page
    gives up after 20 s: CI's machines run the suite about 1.5 times slower than a laptop,
    and a wait that fails there only because the machine is busy hides nothing."""
    contexts: list[Any] = []
    problems: list[str] = []

    def make(phone: bool = False, allow_console: tuple[str, ...] = (), **extra: Any) -> Any:
        """``extra``: more context options, e.g. ``locale="da-DK"``, ``color_scheme="dark"``,
        ``accept_downloads=True``. ``allow_console``: parts of console errors the test
        causes on purpose (``"status of 503"`` for a response it refuses itself)."""
        context = browser.new_context(**(PHONE if phone else DESKTOP), **extra)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" and not any(a in m.text for a in allow_console)
                else None)
        page.on("request", lambda r: None if r.url.startswith(LOCAL_PREFIXES)
                else problems.append(f"external request: {r.url}"))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not problems, problems


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ``$CRIBBAGE_SCREENSHOT_DIR`` (e.g. ``docs/screenshots`` to
    refresh the README's pictures) or the test's temporary directory."""
    target = os.environ.get("CRIBBAGE_SCREENSHOT_DIR")
    path = Path(target) if target else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script (npm package ``axe-core``, pinned in ``tests/browser/package.json``),
    installed into ``tests/browser/node_modules`` with ``npm ci`` when missing. The tests
    add it to the page themselves: the page never loads anything from outside."""
    script = HERE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        assert npm, "the accessibility tests need npm (for axe-core)"
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return script.read_text(encoding="utf-8")
