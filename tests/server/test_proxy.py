"""The proxy configuration of the Docker files (deploy/nginx.conf), run for real: nginx in
front of two server processes on loopback ports. Share links keep the port the player used
(``Host $http_host``), games are played over WebSockets through the proxy, and the servers —
set to trust the proxy, as the compose files do (no proxy is trusted by default) — count a
client's budgets by the address nginx saw, across both of them, whatever
``X-Forwarded-For`` the client sent.

Needs ``nginx`` on PATH (.ci/run installs it); without it the test fails and says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from crib_wire import ROOT, ThreadServer, free_port

from protocol.client import Client


@pytest.fixture
def proxy(make_server, tmp_path: Path) -> Iterator[tuple[int, list[ThreadServer]]]:
    """nginx with deploy/nginx.conf, its replicas two servers (an upstream group named in
    ``$replicas`` in place of the name Docker's DNS resolves) that trust it (it runs on this
    host: 127.0.0.1) and allow 3 rooms a minute per client."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                      else None)
    assert nginx, "nginx is not installed (apt-get install -y nginx; .ci/run does)"
    servers = [make_server(forwarded_allow_ips="127.0.0.1", rooms_per_minute=3)
               for _ in range(2)]
    port = free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = "".join(f"    server 127.0.0.1:{s.port};\n" for s in servers)
    site = site.replace("set $replicas server:8000;", "set $replicas replicas;")
    site = f"upstream replicas {{\n{upstream}}}\n{site}"
    site = site.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    assert str(port) in site and "server:8000" not in site
    conf = tmp_path / "nginx.conf"
    d = tmp_path
    conf.write_text(
        f"daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n"
        "events { worker_connections 256; }\nhttp {\n access_log off;\n"
        f" client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n"
        f" fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n"
        f" scgi_temp_path {d}/scgi;\n{site}\n}}\n")
    proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(tmp_path)],
                            stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 10
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < end, "nginx did not start"
            time.sleep(0.05)
        yield port, servers
    finally:
        proc.terminate()
        proc.wait(10)


async def test_share_links_keep_the_port_behind_the_proxy(proxy) -> None:
    port, servers = proxy
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as http:
        created = (await http.post(f"{base}/api/rooms", json={})).json()
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/r/\w+", created["url"]), created["url"]
    # Over WebSockets through the proxy too, with both players (the proxy spreads them over
    # the two servers; the room lives in Redis).
    host = await Client.connect(f"ws://127.0.0.1:{port}/ws", name="host")
    guest = await Client.connect(f"ws://127.0.0.1:{port}/ws", name="guest")
    try:
        made = await host.create_room({"players": 2})
        assert made["url"].startswith(f"{base}/r/"), made["url"]
        await host.join(made["room"], 0)
        await guest.join(made["room"], 1)
        await host.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard")
        assert guest.view is not None and guest.view["phase"] == "discard"
    finally:
        await host.close()
        await guest.close()


async def test_budgets_follow_the_address_the_proxy_saw(proxy) -> None:
    """Rooms asked for through nginx, spread over both servers, with a different forged
    X-Forwarded-For each time: the proxy replaces the header with the address it saw, and
    the servers share one budget for it on Redis (3 rooms a minute here)."""
    port, _ = proxy
    async with httpx.AsyncClient() as http:
        codes = [(await http.post(f"http://127.0.0.1:{port}/api/rooms", json={},
                                  headers={"X-Forwarded-For": f"198.51.100.{i}"})).status_code
                 for i in range(8)]
    assert codes.count(201) == 3 and codes.count(429) == 5, codes
