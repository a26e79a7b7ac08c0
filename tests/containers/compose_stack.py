"""The project's compose files brought up for real, for the container tests.

:class:`Stack` runs one compose file under a project name of its own, on a free published
port and a subnet of its own (``CRIBBAGE_PORT``, ``CRIBBAGE_SUBNET``), with the image built
on the host network (``deploy/compose.host-build.yml``); every ``docker`` call has a
deadline, and :meth:`Stack.down` (``compose down -v``) always runs. What the engine can
do here and why: docs/operations.md "Containers in CI".

(Imported by the test modules of this directory as ``compose_stack``.)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from protocol.client import Client
from server.archive.replay import room_alias
from server.database import head_revision
from server.database.engine import MIGRATION_LOCK, alembic_config

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BASE_IMAGES = ("debian:bookworm-slim", "redis:7-bookworm", "nginx:stable-bookworm",
               "postgres:15-bookworm")
"""The images the project's Dockerfile and compose files are built on."""
UP_SECONDS = 180
"""Longest a ``compose up --wait`` (or a build) may take."""
ARCHIVE_SECONDS = 60
"""Longest an ended game may take to be in the database."""
DATABASE = ("cribbage", "cribbage")
"""The compose files' database user and database (``postgres`` service)."""


def shipped_migrations() -> list[str]:
    """The revisions of the migrations in server/database/migrations, oldest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]



class DockerError(AssertionError):
    """A docker command failed or ran out of time (its output is in the message)."""


def docker(*args: str, timeout: float = 60, check: bool = True, stdin: str | None = None,
           env: dict[str, str] | None = None, stderr: bool = False) -> str:
    """Run ``docker ARGS`` and return its standard output (and error, with ``stderr``).

    Raises:
        DockerError: it exited non-zero (with ``check``) or took over ``timeout`` seconds.
    """
    try:
        done = subprocess.run(["docker", *args], capture_output=True, text=True,
                              timeout=timeout, input=stdin, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        raise DockerError(f"docker {' '.join(args)}: no end within {timeout} s\n"
                          f"{e.stdout or ''}{e.stderr or ''}") from None
    if check and done.returncode != 0:
        raise DockerError(f"docker {' '.join(args)}: exit {done.returncode}\n"
                          f"{done.stdout}{done.stderr}")
    return done.stdout + (done.stderr if stderr else "")


def engine_problem() -> str | None:
    """Why the container tests cannot run here (no engine answers, no compose, a base image
    missing), or None."""
    try:
        docker("version", "--format", "{{.Server.Version}}", timeout=15)
    except (DockerError, FileNotFoundError, OSError) as e:
        return f"no Docker engine answers ({str(e).strip().splitlines()[-1]})"
    try:
        docker("compose", "version", timeout=15)
    except DockerError:
        return "docker compose (v2) is missing"
    missing = [i for i in BASE_IMAGES
               if docker("image", "inspect", i, timeout=15, check=False) in ("", "[]\n")]
    if missing:
        return (f"base images missing: {', '.join(missing)} (bash .ci/containers.sh makes "
                "them)")
    return None


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text -> ``{"name{labels}": value}`` (comments skipped)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


class Stack:
    """One compose file, up under project ``name``.

    Args:
        file: the compose file (relative to the repository).
        name: the compose project name (fixed, so a run that was killed is cleaned up by
            the next one).
        subnet: ``CRIBBAGE_SUBNET``, the first three numbers of the network's /24.
        port: the published port (``CRIBBAGE_PORT``).
    """

    def __init__(self, file: str, name: str, subnet: str, port: int) -> None:
        self.file = file
        self.name = name
        self.subnet = subnet
        self.port = port
        self.env = {**os.environ, "CRIBBAGE_PORT": str(port), "CRIBBAGE_SUBNET": subnet}
        self.network = f"{name}_cribbage"
        self.placeholders: list[str] = []
        self.up_seconds = 0.0
        """How long the first ``up --wait`` took."""
        self.first_http: list[int] = []
        """Status codes of the requests sent at once after it."""
        self.first_ws: dict[str, Any] = {}
        """The answer to a ping on a WebSocket opened at once after it."""
        self.proxy_started = ""
        """The proxy container's start time (Docker's text)."""
        self.health: dict[str, Any] = {}
        """Each replica's ``State.Health`` right after that ``up``."""
        self.games: dict[str, str] = {}
        """Games the tests saw archived (room -> game id), for later tests to read again."""
        self.lock_holder: subprocess.Popen[str] | None = None
        """The psql session holding the migration lock (:meth:`hold_migration_lock`)."""

    # -- compose ---------------------------------------------------------------------------
    def compose(self, *args: str, timeout: float = 60, check: bool = True) -> str:
        """``docker compose -p NAME -f FILE -f deploy/compose.host-build.yml ARGS``."""
        return docker("compose", "-p", self.name, "-f", self.file,
                      "-f", "deploy/compose.host-build.yml", *args,
                      timeout=timeout, check=check, env=self.env)

    def up(self, *args: str) -> float:
        """``compose up -d --wait ARGS``; returns the seconds it took."""
        started = time.monotonic()
        self.compose("up", "-d", "--wait", "--wait-timeout", str(UP_SECONDS), *args,
                     timeout=UP_SECONDS + 30)
        return time.monotonic() - started

    def down(self) -> list[str]:
        """Everything removed: containers, the network, volumes (the nodes' anonymous
        ``/data`` ones too), placeholders. Returns what is left of them (nothing)."""
        self.release_placeholders()
        self.release_migration_lock()
        label = f"label=com.docker.compose.project={self.name}"
        containers = docker("ps", "-a", "-q", "--filter", label).split()
        volumes = set()
        for c in containers:
            volumes.update(docker("inspect", "-f",
                                  "{{range .Mounts}}{{if .Name}}{{.Name}} {{end}}{{end}}",
                                  c, check=False).split())
        self.compose("down", "-v", "--remove-orphans", "-t", "2", timeout=120)
        left = docker("ps", "-a", "-q", "--filter", label).split()
        left += [v for v in volumes
                 if docker("volume", "inspect", v, check=False).strip() not in ("", "[]")]
        left += docker("network", "ls", "-q", "--filter", f"name=^{self.network}$").split()
        return left

    def logs(self, tail: int = 60) -> str:
        return self.compose("logs", "--no-color", "--tail", str(tail), timeout=60,
                            check=False)

    # -- containers ------------------------------------------------------------------------
    def containers(self, service: str, all_states: bool = False) -> list[str]:
        """Names of the service's containers (running ones unless ``all_states``)."""
        args = ["ps", "--format", "{{.Name}}", service]
        if all_states:
            args.insert(1, "-a")
        return sorted(self.compose(*args).split())

    def address(self, container: str) -> str:
        """The container's address on the stack's network."""
        return docker("inspect", "-f",
                      f'{{{{(index .NetworkSettings.Networks "{self.network}").IPAddress}}}}',
                      container).strip()

    def exec(self, container: str, *args: str, stdin: str | None = None,
             env: dict[str, str] | None = None, timeout: float = 30) -> str:
        """Run a command in a container (``docker exec -i``)."""
        extra = [x for k, v in (env or {}).items() for x in ("-e", f"{k}={v}")]
        return docker("exec", "-i", *extra, container, *args, stdin=stdin, timeout=timeout)

    def hold_addresses(self, count: int) -> None:
        """Start ``count`` idle containers on the stack's network before its own start, so
        they hold the first free addresses; :meth:`release_placeholders` frees them, and
        containers started after that get addresses none of them had before (as on a
        machine where the network has seen other containers come and go)."""
        for i in range(count):
            name = f"{self.name}-placeholder-{i}"
            docker("rm", "-f", name, check=False)
            docker("run", "-d", "--network", self.network, "--name", name,
                   "--entrypoint", "sleep", "cribbage-server:latest", "600")
            self.placeholders.append(name)

    def release_placeholders(self) -> None:
        """Remove the idle containers (also those an interrupted run left)."""
        left = docker("ps", "-a", "-q", "--filter", f"name=^{self.name}-placeholder-")
        for container in set(left.split()) | set(self.placeholders):
            docker("rm", "-f", container, check=False)
        self.placeholders = []

    # -- the server replicas ---------------------------------------------------------------
    def replica_metrics(self, container: str) -> dict[str, float]:
        """A replica's own ``/metrics`` (read inside its container: it publishes no
        port)."""
        text = self.exec(container, "python", "-c",
                         "import urllib.request as u; print(u.urlopen("
                         "'http://127.0.0.1:8000/metrics', timeout=5).read().decode())")
        return parse_metrics(text)

    def connections(self) -> dict[str, float]:
        """Open WebSocket connections by replica (``cribbage_connections``)."""
        return {c: self.replica_metrics(c).get("cribbage_connections", 0.0)
                for c in self.containers("server")}

    def accepted(self) -> dict[str, float]:
        """Actions accepted by replica (``cribbage_actions_total{outcome="accepted"}``)."""
        return {c: self.replica_metrics(c).get('cribbage_actions_total{outcome="accepted"}',
                                               0.0)
                for c in self.containers("server")}

    def rooms(self, rooms: list[str], env: dict[str, str] | None = None
              ) -> dict[str, dict[str, Any]]:
        """Each room's ``status``, ``version`` and ``log`` as the store holds them (read in
        a server container with the server's own store: tests/containers/read_rooms.py)."""
        container = self.containers("server")[0]
        out = self.exec(container, "python", "-", *rooms,
                        stdin=(HERE / "read_rooms.py").read_text(), env=env, timeout=60)
        return json.loads(out)

    # -- the database ----------------------------------------------------------------------
    def sql(self, query: str) -> list[list[str]]:
        """The rows of ``query`` run with psql in the ``postgres`` container, as the compose
        files' database user (each row a list of texts)."""
        user, db = DATABASE
        out = self.exec(self.containers("postgres")[0], "psql", "-X", "-q", "-v",
                        "ON_ERROR_STOP=1", "-U", user, "-d", db, "-tA", "-F", "\t",
                        "-c", query)
        return [line.split("\t") for line in out.splitlines() if line]

    def archived(self, games: dict[str, str]) -> dict[str, dict[str, Any]]:
        """What the database holds of ``games`` (room -> game id): for each room that has
        rows in ``games``, their ids, and for the (first) row its status, first and last
        version, number of seats and its log (``game_logs``, parsed)."""
        assert all(re.fullmatch(r"[A-Za-z0-9]+", r) for r in games), games  # quoted as is
        rooms = ", ".join(f"'{r}'" for r in games)
        rows = self.sql(
            "SELECT g.room_id, g.id, g.status, g.first_version, g.last_version, "
            "(SELECT count(*) FROM game_seats s WHERE s.game_id = g.id), l.entries "
            "FROM games g LEFT JOIN game_logs l ON l.game_id = g.id "
            f"WHERE g.room_id IN ({rooms}) ORDER BY g.room_id, g.id")
        out: dict[str, dict[str, Any]] = {}
        for room, gid, status, first, last, seats, entries in rows:
            record = out.setdefault(room, {
                "ids": [], "status": status, "first": int(first), "version": int(last),
                "seats": int(seats), "log": json.loads(entries) if entries else None})
            record["ids"].append(gid)
        return out

    def wait_archived(self, games: dict[str, str], within: float = ARCHIVE_SECONDS
                      ) -> tuple[float, dict[str, dict[str, Any]]]:
        """Seconds until every one of ``games`` (room -> game id) is in the database, and
        :meth:`archived` then.

        Raises:
            AssertionError: not all of them within ``within`` seconds.
        """
        started = time.monotonic()
        while True:
            found = self.archived(games)
            if set(found) == set(games):
                return time.monotonic() - started, found
            assert time.monotonic() - started < within, (
                f"not archived within {within} s: {sorted(set(games) - set(found))}")
            time.sleep(0.5)

    def migration_lock(self) -> tuple[int, int]:
        """(sessions holding, sessions waiting for) the servers' migration lock
        (``server.database.engine.MIGRATION_LOCK``, a PostgreSQL advisory lock)."""
        rows = self.sql("SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT "
                        "granted) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                        f"{MIGRATION_LOCK >> 32} AND objid = {MIGRATION_LOCK & 0xFFFFFFFF} "
                        "AND objsubid = 1")
        return int(rows[0][0]), int(rows[0][1])

    def wait_migration_lock(self, holding: int, waiting: int, within: float = 30) -> float:
        """Seconds until :meth:`migration_lock` is (``holding``, ``waiting``)."""
        started = time.monotonic()
        while (now := self.migration_lock()) != (holding, waiting):
            assert time.monotonic() - started < within, (
                f"migration lock (holding, waiting) {now}, not {(holding, waiting)}")
            time.sleep(0.2)
        return time.monotonic() - started

    def hold_migration_lock(self) -> None:
        """Take the servers' migration lock in a psql session of the ``postgres`` container
        (so that replicas started now all wait for it at once); held until
        :meth:`release_migration_lock`."""
        user, db = DATABASE
        self.lock_holder = subprocess.Popen(
            ["docker", "exec", "-i", self.containers("postgres")[0], "psql", "-X", "-q",
             "-v", "ON_ERROR_STOP=1", "-U", user, "-d", db],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            text=True, cwd=ROOT)
        assert self.lock_holder.stdin is not None
        self.lock_holder.stdin.write(f"SELECT pg_advisory_lock({MIGRATION_LOCK});\n")
        self.lock_holder.stdin.flush()
        self.wait_migration_lock(1, 0)

    def release_migration_lock(self) -> None:
        """End the session of :meth:`hold_migration_lock` (if any): the lock is free."""
        holder, self.lock_holder = self.lock_holder, None
        if holder is None:
            return
        if holder.stdin is not None:
            holder.stdin.close()
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait(10)

    def migrated(self) -> dict[str, bool]:
        """Whether each running replica has migrated its database (its log has the line
        ``server.database.engine`` writes when ``Database.migrate`` succeeded)."""
        done = f" at revision {head_revision()}"
        return {c: any("server.database.engine database " in line and line.endswith(done)
                       for line in docker("logs", c, stderr=True).splitlines())
                for c in self.containers("server")}

    def wait_migrated(self, within: float = 60) -> float:
        """Seconds until every replica has migrated its database (:meth:`migrated`)."""
        started = time.monotonic()
        while not all((now := self.migrated()).values()):
            assert time.monotonic() - started < within, f"not migrated: {now}"
            time.sleep(0.3)
        return time.monotonic() - started

    def migrations_run(self) -> list[str]:
        """The migrations the replicas ran, as their logs tell (Alembic's ``Running upgrade``
        lines of every server container, stopped ones included)."""
        return [line.split("Running upgrade", 1)[1].strip()
                for c in self.containers("server", all_states=True)
                for line in docker("logs", c, stderr=True).splitlines()
                if "Running upgrade" in line]

    def check_migrated_once(self) -> tuple[float, list[str]]:
        """Check that the replicas, started together on an empty database, migrated it
        once: every replica reports it migrated, their logs hold one ``Running upgrade``
        per shipped migration in all, the database is at the newest, and nobody holds or
        waits for the migration lock. Returns (seconds waited for the replicas, those log
        lines)."""
        took = self.wait_migrated()
        ran = self.migrations_run()
        shipped = shipped_migrations()
        assert len(shipped) >= 2 and shipped[-1] == head_revision(), shipped
        assert [line.split(",")[0].split("->")[1].strip() for line in ran] == shipped, ran
        head = self.sql("SELECT version_num FROM alembic_version")
        assert head == [[shipped[-1]]], head
        assert self.migration_lock() == (0, 0)
        return took, ran

    def check_archived(self, records: dict[str, dict[str, Any]],
                       acks: list[tuple[str, int, dict[str, Any]]]
                       ) -> tuple[float, dict[str, str]]:
        """Check that the game of each room of ``records`` (:meth:`rooms`, its game played
        to the end) is in the database exactly once — one ``games`` row, finished, two
        seats, its archived log holding every acknowledged action of ``acks`` once at its
        version — and that ``GET /api/games/{id}`` through the proxy is answered by every
        replica. Returns (seconds until all were archived, room -> game id)."""
        games = {r: record["game_id"] for r, record in records.items()}
        took, archived = self.wait_archived(games)
        for room, gid in games.items():
            got = archived[room]
            assert got["ids"] == [gid] and got["status"] == "finished", got
            assert got["seats"] == 2 and got["version"] <= records[room]["version"], got
        exactly_once(acks, archived)
        self.read_games_from_every_replica(games)
        self.games.update(games)
        return took, games

    def read_games_from_every_replica(self, games: dict[str, str]) -> None:
        """``GET /api/games/{id}`` of each of ``games`` (room -> game id) through the proxy
        until every running replica has answered each with 200 and that game."""
        paths = {f"/api/games/{gid}": (room, gid) for room, gid in games.items()}
        for path, answers in self.read_from_every_replica(list(paths)).items():
            room, gid = paths[path]
            for answer in answers:
                body = answer.json()
                # the room by its archive name, never its id (the table's link)
                assert body["game_id"] == gid and body["room"] == room_alias(room), body

    def read_from_every_replica(self, paths: list[str], most: int = 40
                                ) -> dict[str, list[httpx.Response]]:
        """GET each of ``paths`` through the proxy until each running replica has answered
        it with 200 (as its access log tells); returns every answer, by path.

        Raises:
            AssertionError: an answer was not 200, or ``most`` requests of a path did not
                reach every replica.
        """
        replicas = set(self.containers("server"))
        since = f"{time.time() - 0.5:.3f}"  # the engine runs on this machine: one clock
        answers: dict[str, list[httpx.Response]] = {p: [] for p in paths}
        served: dict[str, set[str]] = {p: set() for p in paths}
        while True:
            left = [p for p in paths if served[p] != replicas]
            if not left:
                return answers
            for path in left:
                assert len(answers[path]) < most, (
                    f"{most} requests for {path} reached only {sorted(served[path])}")
                for _ in range(4):
                    answers[path].append(self.get(path))
                    assert answers[path][-1].status_code == 200, (path, answers[path][-1].text)
            logs = {r: docker("logs", "--since", since, r, stderr=True) for r in replicas}
            for path in left:
                served[path] = {r for r, text in logs.items()
                                if f'"GET {path} HTTP/1.1" 200' in text}

    # -- through the proxy -----------------------------------------------------------------
    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.http + path, timeout=10)

    async def connect_on_every_replica(self, per_replica: int, name: str = "p",
                                       most: int = 40) -> dict[str, list[Client]]:
        """Open WebSocket connections through the proxy until every replica holds
        ``per_replica`` of them (extra ones are closed); returns them by replica. Which
        replica took a connection is read from the replicas' ``cribbage_connections``.

        Raises:
            AssertionError: ``most`` connections did not reach every replica (the proxy
                does not balance).
        """
        replicas = self.containers("server")
        by_replica: dict[str, list[Client]] = {r: [] for r in replicas}
        before = await asyncio.to_thread(self.connections)
        spare: list[Client] = []
        for i in range(most):
            client = await Client.connect(self.ws, name=f"{name}{i}")
            now = await asyncio.to_thread(self.connections)
            grew = [r for r in replicas if now.get(r, 0) > before.get(r, 0)]
            assert len(grew) == 1, (before, now)
            before = now
            if len(by_replica[grew[0]]) < per_replica:
                by_replica[grew[0]].append(client)
            else:
                spare.append(client)
            if all(len(v) == per_replica for v in by_replica.values()):
                break
        for client in spare:
            await client.close()
        assert all(len(v) == per_replica for v in by_replica.values()), (
            f"{most} connections through the proxy did not reach every replica: "
            f"{ {r: len(v) for r, v in by_replica.items()} }")
        return by_replica


def exactly_once(acks: list[tuple[str, int, dict[str, Any]]],
                 rooms: dict[str, dict[str, Any]]) -> int:
    """Check that every acknowledged action (room, seat, ack frame) is in its room's log
    exactly once, at the acknowledged version, that no action id is in a log twice, and
    that each log's versions run ``first`` (default 1) .. ``version`` with no gap. ``rooms``
    holds the rooms' logs as the store keeps them, or as the archive does
    (:meth:`Stack.archived`). Returns the number checked."""
    for room, record in rooms.items():
        log = record["log"]
        ids = [(e["seat"], e["id"]) for e in log if "id" in e]
        assert len(ids) == len(set(ids)), f"an action applied twice in {room}"
        assert [e["v"] for e in log] == list(range(record.get("first", 1),
                                                   record["version"] + 1)), room
    for room, seat, ack in acks:
        hits = [e for e in rooms[room]["log"]
                if e.get("id") == ack["action_id"] and e.get("seat") == seat]
        assert len(hits) == 1 and hits[0]["v"] == ack["version"], (room, seat, ack, hits)
    return len(acks)


def node_table(text: str) -> list[dict[str, Any]]:
    """``CLUSTER NODES`` -> rows of id, address (ip:port), flags, primary id, link,
    slots."""
    rows = []
    for line in text.strip().splitlines():
        f = line.split()
        rows.append({"id": f[0], "addr": re.split(r"[@,]", f[1])[0], "flags": f[2].split(","),
                     "primary": f[3], "link": f[7], "slots": f[8:]})
    return rows
