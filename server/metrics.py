"""``/metrics``: what a server process is doing, in the Prometheus text format.

Built on ``prometheus-client`` with a registry per app (several apps may share a process in
tests). Most figures are read from the objects that already count them when a scrape comes
(``ProcessCollector``-style collectors: nothing is added to the hot path); only two things
are observed as they happen: the round trip of an action inside the server (from its frame
arriving to its answer being queued) and the garbage collector's pauses.

Metrics (all prefixed ``cribbage_``): ``connections`` and ``rooms_followed`` (gauges);
``actions_total{outcome}`` (accepted, duplicate, rejected) and ``action_rejects_total{code}``;
``action_seconds`` (histogram); ``commit_conflicts_total``; ``store_errors_total``,
``store_outages_total`` and ``store_up``; ``deadlines_fired_total``,
``deadlines_retried_total`` and ``deadline_lateness_seconds{stat}`` (mean and max of the
last 256); ``pubsub_reconnects_total``; ``catch_ups_total``; ``presence_reaped_total``;
``limited_total{code}`` (refusals and closes by the limits of docs/protocol.md "Limits");
``budgets_local_total`` (budget events counted per process during a Redis outage);
``spectators`` (gauge); ``lobby_followers`` (gauge) and ``lobby_writes_total``
(``server.lobby``); ``hints_total{outcome}`` and ``hints_in_flight`` (``server.hints``);
``computer_jobs_total{urgency}``, ``computer_jobs_running`` and ``computer_jobs_waiting``
(the computer processes, ``server.workers.priority``);
``actions_in_flight``, ``actions_waiting``, ``actions_queued_total`` and
``overload_refused_total{reason}`` (admission control, ``server.overload``);
``gc_pause_seconds{generation}`` and ``event_loop_lag_seconds`` (histograms; the lag probe
is a 0.25 s timer); ``gc_collected_objects_total{generation}``. docs/performance.md
("Metrics") lists them with their meanings.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client import Counter as PromCounter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text format's content type."""

LAG_PERIOD_SECONDS = 0.25
"""The event-loop lag probe's timer."""


class ActionStats:
    """Counts of answered actions, kept by the sessions (plain ints: cheap on the hot
    path) and read at scrape time."""

    def __init__(self) -> None:
        self.accepted = 0
        self.duplicate = 0
        self.rejected: Counter[str] = Counter()


class Metrics:
    """The metrics of one app.

    Args:
        services: the app's ``server.app.Services`` (read at scrape time).
    """

    def __init__(self, services: Any) -> None:
        self.services = services
        self.registry = CollectorRegistry(auto_describe=True)
        self.actions = ActionStats()
        self.connections = 0
        self.action_seconds = Histogram(
            "cribbage_action_seconds", "An action's round trip inside the server (frame in "
            "to answer queued), seconds",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=self.registry,
        )
        self.gc_pause = Histogram(
            "cribbage_gc_pause_seconds", "Garbage-collector pauses, seconds",
            ["generation"], buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5),
            registry=self.registry,
        )
        self.gc_collected = PromCounter(
            "cribbage_gc_collected_objects", "Objects the garbage collector freed (cycles), "
            "by generation; with gc_freeze, generation 2 is the complete pass",
            ["generation"], registry=self.registry,
        )
        self.loop_lag = Histogram(
            "cribbage_event_loop_lag_seconds", "How late the event loop woke a timer, seconds",
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
            registry=self.registry,
        )
        self.registry.register(_Collector(self))
        self._gc_started = 0.0
        self._lag_task: asyncio.Task[None] | None = None

    def render(self) -> bytes:
        """The current metrics in the Prometheus text format."""
        return generate_latest(self.registry)

    # -- garbage collector and event loop -------------------------------------------------
    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            generation = str(info.get("generation"))
            self.gc_pause.labels(generation).observe(time.perf_counter() - self._gc_started)
            self.gc_collected.labels(generation).inc(info.get("collected", 0))
            self._gc_started = 0.0

    async def _probe_lag(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            await asyncio.sleep(LAG_PERIOD_SECONDS)
            self.loop_lag.observe(max(0.0, loop.time() - started - LAG_PERIOD_SECONDS))

    def start(self) -> None:
        """Start observing garbage-collector pauses and the event loop's lag."""
        gc.callbacks.append(self._on_gc)
        self._lag_task = asyncio.create_task(self._probe_lag(), name="loop-lag-probe")

    async def stop(self) -> None:
        """Stop observing."""
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._on_gc)
        if self._lag_task is not None:
            self._lag_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lag_task


class _Collector(Collector):
    """Reads the counters the services keep anyway, at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        m = self.metrics
        s = m.services
        yield GaugeMetricFamily("cribbage_connections", "Open WebSocket connections",
                                value=m.connections)
        yield GaugeMetricFamily("cribbage_rooms_followed", "Rooms this process follows",
                                value=len(s.rooms.rooms))
        actions = CounterMetricFamily("cribbage_actions", "Actions answered",
                                      labels=["outcome"])
        actions.add_metric(["accepted"], m.actions.accepted)
        actions.add_metric(["duplicate"], m.actions.duplicate)
        actions.add_metric(["rejected"], sum(m.actions.rejected.values()))
        yield actions
        rejects = CounterMetricFamily("cribbage_action_rejects", "Rejected actions by code",
                                      labels=["code"])
        for code, n in sorted(m.actions.rejected.items()):
            rejects.add_metric([code], n)
        yield rejects
        yield CounterMetricFamily("cribbage_commit_conflicts", "Commits refused for a "
                                  "version conflict", value=s.service.conflicts)
        health = s.store.health
        yield CounterMetricFamily("cribbage_store_errors", "Store calls that failed",
                                  value=health.failures)
        yield CounterMetricFamily("cribbage_store_outages", "Store outages",
                                  value=health.outages)
        yield GaugeMetricFamily("cribbage_store_up", "1 unless the last store call failed",
                                value=0 if health.down else 1)
        yield CounterMetricFamily("cribbage_deadlines_fired", "Deadlines run",
                                  value=s.sweeper.fired)
        yield CounterMetricFamily("cribbage_deadlines_retried", "Deadlines left to run "
                                  "again after a store failure", value=s.sweeper.retried)
        late = list(s.sweeper.lateness)
        lateness = GaugeMetricFamily("cribbage_deadline_lateness_seconds",
                                     "How late the last deadlines ran", labels=["stat"])
        lateness.add_metric(["mean"], sum(late) / len(late) if late else 0.0)
        lateness.add_metric(["max"], max(late) if late else 0.0)
        yield lateness
        yield CounterMetricFamily("cribbage_pubsub_reconnects", "Pub/sub connections lost "
                                  "and made again", value=getattr(s.broker, "reconnects", 0))
        yield CounterMetricFamily("cribbage_catch_ups", "Rooms caught up after missed "
                                  "messages", value=s.rooms.catch_ups)
        limited = CounterMetricFamily("cribbage_limited", "Frames, requests and connections "
                                      "a limit refused or closed, by code or reason",
                                      labels=["code"])
        if s.limits is not None:
            for code, n in sorted(s.limits.refused.items()):
                limited.add_metric([code], n)
        yield limited
        shared = s.limits.shared if s.limits is not None else None
        yield CounterMetricFamily("cribbage_budgets_local", "Per-address budget events "
                                  "counted by this process alone because Redis could not be "
                                  "reached", value=getattr(shared, "fallbacks", 0))
        yield GaugeMetricFamily("cribbage_spectators", "Connections of this process that "
                                "watch a room without a seat",
                                value=sum(getattr(s.presence, "watching", {}).values()))
        lobby = getattr(s, "lobby", None)
        yield GaugeMetricFamily("cribbage_lobby_followers", "Connections of this process "
                                "that follow the lobby (lobby_subscribe)",
                                value=lobby.followers if lobby is not None else 0)
        yield CounterMetricFamily("cribbage_lobby_writes", "Lobby index writes this process "
                                  "made after room changes (server.lobby)",
                                  value=lobby.writes if lobby is not None else 0)
        hints = getattr(s, "hints", None)
        hint_counts = CounterMetricFamily("cribbage_hints", "Hints asked for, by outcome: "
                                          "made, shared (a repeat answered with the hint "
                                          "made for the same room version and seat), busy "
                                          "(refused: hints_in_flight were being made)",
                                          labels=["outcome"])
        for outcome, attr in (("made", "made"), ("shared", "shared"), ("busy", "refused")):
            hint_counts.add_metric([outcome], getattr(hints, attr, 0))
        yield hint_counts
        yield GaugeMetricFamily("cribbage_hints_in_flight", "Hints being made now",
                                value=hints.in_flight if hints is not None else 0)
        pool = getattr(getattr(s, "computers", None), "pool", None)
        jobs = CounterMetricFamily("cribbage_computer_jobs", "Expert moves and hints handed "
                                   "to the computer processes, by urgency: urgent (a room "
                                   "where a person plays, a hint), other (rooms the computer "
                                   "plays alone)", labels=["urgency"])
        for urgency in ("urgent", "other"):
            jobs.add_metric([urgency], pool.started[urgency] if pool is not None else 0)
        yield jobs
        yield GaugeMetricFamily("cribbage_computer_jobs_running", "Jobs the computer "
                                "processes are working on",
                                value=pool.running if pool is not None else 0)
        yield GaugeMetricFamily("cribbage_computer_jobs_waiting", "Jobs waiting for a "
                                "computer process, people's first",
                                value=pool.waiting if pool is not None else 0)
        gate = s.actions
        yield GaugeMetricFamily("cribbage_actions_in_flight", "Client actions being worked "
                                "on (admission control)",
                                value=gate.inflight if gate is not None else 0)
        yield GaugeMetricFamily("cribbage_actions_waiting", "Client actions waiting for "
                                "their turn (admission control)",
                                value=gate.waiting if gate is not None else 0)
        yield CounterMetricFamily("cribbage_actions_queued", "Client actions that had to "
                                  "wait for their turn", value=gate.queued_total
                                  if gate is not None else 0)
        refused = CounterMetricFamily("cribbage_overload_refused", "Client actions refused "
                                      "busy by admission control, by reason (waited, "
                                      "queue_full, loop_late)", labels=["reason"])
        for reason in ("waited", "queue_full", "loop_late"):
            refused.add_metric([reason], gate.refused[reason] if gate is not None else 0)
        yield refused
        yield CounterMetricFamily("cribbage_presence_reaped", "Dead server processes whose "
                                  "presence this one removed", value=s.presence.reaped)
        archiver = getattr(s, "archiver", None)
        if archiver is not None:
            games = CounterMetricFamily(
                "cribbage_archive_games", "Ended games this process archived: written now, "
                "or found written already (a repeated claim), or lost (the room was gone)",
                labels=["outcome"])
            games.add_metric(["written"], archiver.written)
            games.add_metric(["duplicate"], archiver.duplicates)
            games.add_metric(["lost"], archiver.lost)
            yield games
            yield CounterMetricFamily("cribbage_archive_failures", "Tries to archive a game "
                                      "that failed on the database (each tried again later)",
                                      value=archiver.failures)
            yield GaugeMetricFamily("cribbage_archive_lag_seconds", "Seconds since the end of "
                                    "the oldest game this process is trying to archive now "
                                    "(0: none waiting)", value=archiver.lag)
            yield GaugeMetricFamily("cribbage_archive_pending", "Ended games this process is "
                                    "trying to archive now", value=archiver.pending)
            yield GaugeMetricFamily("cribbage_archive_last_lag_seconds", "Seconds from the end "
                                    "of the last game this process archived to its archive",
                                    value=archiver.last_lag)
            yield CounterMetricFamily("cribbage_games_abandoned", "Games this process "
                                      "abandoned (their room stayed idle)",
                                      value=archiver.abandoned)
            yield GaugeMetricFamily("cribbage_database_migrated", "1 once the database "
                                    "schema is up to date", value=int(archiver.db.migrated))
        grader = getattr(s, "grader", None)
        if grader is not None:
            yield CounterMetricFamily("cribbage_games_graded", "Archived games this process "
                                      "graded and wrote (issue 22 point 4, off the event "
                                      "loop; not one another process wrote first)",
                                      value=grader.graded)
            yield CounterMetricFamily("cribbage_grading_failures", "Gradings that failed "
                                      "(the pool or the database; a later read grades the "
                                      "game)", value=grader.failures)
            yield CounterMetricFamily("cribbage_gradings_deferred", "Archived games not "
                                      "kept waiting for grading because too many waited "
                                      "(the owner with the most waiting gave up its newest; "
                                      "a read or a later sweep grades it)",
                                      value=grader.deferred)
            yield GaugeMetricFamily("cribbage_gradings_waiting", "Archived games waiting "
                                    "for this process's grader (at most 200)",
                                    value=grader.waiting)
        chat = getattr(s, "chat", None)
        if chat is not None:
            yield CounterMetricFamily("cribbage_chat_messages", "Chat messages said through "
                                      "this process", value=chat.said)
            yield CounterMetricFamily("cribbage_chat_reports", "Chat reports filed through "
                                      "this process", value=chat.reported)
            refused = CounterMetricFamily("cribbage_chat_refused", "Chat requests refused "
                                          "by code (chat_rate_limited, room_chat_busy, "
                                          "report_limited, …)", labels=["code"])
            for code, n in sorted(chat.refused.items()):
                refused.add_metric([code], n)
            yield refused
        moderation = getattr(s, "moderation", None)
        if moderation is not None:
            acted = CounterMetricFamily("cribbage_moderation_actions", "Moderator actions "
                                        "taken through this process", labels=["action"])
            for action, n in sorted(moderation.actions.items()):
                acted.add_metric([action], n)
            yield acted
            held = moderation.sanctions
            yield CounterMetricFamily("cribbage_sanction_refresh_failures", "Reads of the "
                                      "sanctions in force that failed (the last read stays)",
                                      value=held.failed_refreshes)
            yield CounterMetricFamily("cribbage_banned_connections_closed", "Connections "
                                      "closed because a moderator banned their player or "
                                      "address", value=held.closed_sessions)
