"""Spectators against play: what thousands of spectators on one room cost the players.

Issue 17 found that 4,000 spectators on one room raised that room's act→ack p90 from 3.6
to 205 ms, and another room's worst case on the same process from 7 to 801 ms. This bench
measures it again, in one run, against the same load without spectators. From the
repository root::

    python bench/spectators.py                   # 3 rounds of both phases, about 6 minutes
    python bench/spectators.py --quick           # 1 round of short phases, about 1 minute
    python bench/spectators.py --server-tree ../main    # another checkout's server
    python bench/spectators.py --variants without,with,capped --json /tmp/spectators.json
    python bench/spectators.py --variants without,with,chat      # chat against no chat

**The load.** One ``python -m server`` process on Redis (``--store memory``: without), fresh
for every phase, with the limits off (``bench/latency.py``'s ``--limits off``: the load comes
from one address) and the spectator cap off unless the phase is ``capped``. ``--rooms``
rooms of 2 players (``bench/loadclient.py`` worker processes, real games with legal moves)
act paced: every room once a second (``--rate``), except the **watched room**, which acts
``--watched-rate`` times a second (a fast game, so that its tail has samples). Phases:

* ``without``: no spectators;
* ``with``: ``--spectators`` (4,000) connections watch the watched room (``hello``,
  ``join`` without a seat; each reads every frame, counting it without decoding it; in
  ``--spectator-procs`` processes of their own), ``--stalled`` of them stop reading after
  their join;
* ``chat`` (when named; issue 21): the same spectators, each a player (``POST
  /api/players``, ``hello.player``), and every one of them says a preset phrase
  ``--chat-rate`` times a second (1: the per-player limit, ``chat_player_rate``) from
  before the warm-up to the end of the window: 4,000 messages a second offered to one room,
  which takes ``chat_room_rate`` (10) a second and refuses the rest ``room_chat_busy``;
  each message taken goes to every spectator (a spectator's message during a game reaches
  the spectators only). Its ratios are also given against ``with`` (the same room and
  spectators without chat);
* ``capped`` (when named): the same spectators asked for, the server at its default cap
  (``max_spectators_per_room``, 200): the rest are refused ``too_many_spectators``.

**What is measured.** After ``--warmup`` seconds a window of ``--seconds`` opens; for every
action sent inside it, **act→ack** (from just before the ``act`` is written until its
``ack`` is decoded, at the player) of the watched room and of the other rooms, kept apart;
the played card's own update too (as ``bench/latency.py``). Percentiles are taken over the
samples of all rounds together; the ratios are ``with`` ÷ ``without`` of the same figure.
Also: the server's CPU (share of one core), its resident memory, and what the spectators
received in the window (frames, bytes, snapshots). Progress is printed; every process is
stopped and every key under the run's random prefix deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from latency import (  # noqa: E402 (the bench directory is put on the path first)
    Runner,
    Workers,
    log,
    machine_busy,
    pct,
    proc_cpu,
    proc_rss,
    run_bounded,
    server_checkout,
)

VARIANTS = ("without", "with", "chat", "capped")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1 round of 8 s phases (~1 min)")
    p.add_argument("--variants", default="without,with",
                   help="phases per round, in order: without, with, capped")
    p.add_argument("--spectators", type=int, default=4000)
    p.add_argument("--chat-rate", type=float, default=1.0,
                   help="chat messages per spectator per second in the chat phase")
    p.add_argument("--stalled", type=int, default=0,
                   help="spectators that stop reading after their join")
    p.add_argument("--rooms", type=int, default=100, help="rooms, the watched one included")
    p.add_argument("--rate", type=float, default=1.0, help="actions per room per second")
    p.add_argument("--watched-rate", type=float, default=5.0,
                   help="actions per second of the watched room")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 3)")
    p.add_argument("--seconds", type=float, default=None, help="recorded seconds (20)")
    p.add_argument("--warmup", type=float, default=None, help="seconds before (10)")
    p.add_argument("--grace", type=float, default=10.0)
    p.add_argument("--client-procs", type=int, default=2, help="player client processes")
    p.add_argument("--spectator-procs", type=int, default=1,
                   help="spectator client processes")
    p.add_argument("--store", choices=("redis", "memory"), default="redis")
    p.add_argument("--redis-url", default=os.environ.get(
        "CRIBBAGE_REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--server-tree", type=Path, default=None,
                   help="run the server from this checkout (default: this repository)")
    p.add_argument("--server-rev", default=None,
                   help="run the server from this git revision (git archive)")
    p.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--no-probe", action="store_true",
                   help="run the server without bench/probe.py (no event-loop lag figures)")
    p.add_argument("--max-others", type=float, default=0.8,
                   help="a phase in which other jobs (Redis and the kernel's network work "
                   "included) took more than this share of a core is busy: its round is left "
                   "out of the quiet-rounds figures")
    p.add_argument("--max-minutes", type=float, default=60.0)
    p.add_argument("--json", type=Path, default=None, help="also write everything here")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep the servers' logs and probe files (kept anyway on a failure)")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.seconds = args.seconds or (8.0 if args.quick else 20.0)
    args.warmup = args.warmup if args.warmup is not None else (4.0 if args.quick else 10.0)
    args.variant_list = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in args.variant_list:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r} (choose from {', '.join(VARIANTS)})")
    # What latency.Runner reads.
    args.limits = "off"
    args.probe = not args.no_probe
    return args


def figures(samples_us: list[int]) -> dict[str, Any]:
    ms = sorted(x / 1000.0 for x in samples_us)
    return {"n": len(ms), "p50": pct(ms, 50), "p90": pct(ms, 90), "p99": pct(ms, 99),
            "max": ms[-1] if ms else None}


class SpectatorBench:
    def __init__(self, args: argparse.Namespace, runner: Runner, players: Workers,
                 watchers: Workers, r: redis.Redis, prefix: str) -> None:
        self.args = args
        self.runner = runner
        self.players = players
        self.watchers = watchers
        self.r = r
        self.prefix = prefix
        self.seq = 0
        self.phases: list[dict[str, Any]] = []

    def cleanup(self, prefix: str) -> int:
        deleted = 0
        for key_batch in _batches(self.r.scan_iter(match=f"{prefix}*", count=1000), 1000):
            deleted += self.r.unlink(*key_batch)
        return deleted

    async def phase(self, variant: str, round_no: int) -> dict[str, Any]:
        args = self.args
        self.seq += 1
        prefix = f"{self.prefix}{self.seq}:"
        res: dict[str, Any] = {"variant": variant, "round": round_no}
        env_before = list(args.server_env)
        data_dir = tempfile.mkdtemp(prefix="bench-spectators-data-")
        args.server_env = [*env_before, f"CRIBBAGE_DATA_DIR={data_dir}",
                           "CRIBBAGE_PLAYERS_PER_HOUR=0"]
        if variant != "capped":
            args.server_env.append("CRIBBAGE_MAX_SPECTATORS_PER_ROOM=0")
        log(f"round {round_no} {variant}: starting the server")
        server = await self.runner.start_server(
            "product" if args.store == "redis" else "product-memory", prefix)
        args.server_env = env_before
        try:
            await self._drive(server, variant, res)
        except Exception as exc:
            res["failure"] = f"{type(exc).__name__}: {exc}"
            log(f"  PHASE FAILED: {res['failure']}")
            await self.players.restart()
            await self.watchers.restart()
        finally:
            await asyncio.to_thread(self.runner.stop, server.proc)
            shutil.rmtree(data_dir, ignore_errors=True)
            with contextlib.suppress(Exception):
                res["keys_deleted"] = await asyncio.to_thread(self.cleanup, prefix)
        window = res.pop("_window", None)
        if server.probe_file is not None and server.probe_file.exists() and window:
            import probe

            with contextlib.suppress(ValueError):
                lag = probe.summarize(json.loads(server.probe_file.read_text()), *window)["lag"]
                res["loop_lag"] = lag
                log(f"  event loop lag p50 {_f(lag['p50_ms'])} p99 {_f(lag['p99_ms'])} max "
                    f"{_f(lag.get('max_ms'))} ms")
        self.phases.append(res)
        return res

    async def _drive(self, server: Any, variant: str, res: dict[str, Any]) -> None:
        args = self.args
        n = self.players.count
        self.players.drain()
        self.watchers.drain()
        shares = [args.rooms // n + (1 if i < args.rooms % n else 0) for i in range(n)]
        firsts = [sum(shares[:i]) for i in range(n)]
        t = time.monotonic()
        ready = await self.players.all([
            {"cmd": "setup", "kind": "product", "port": server.port, "rooms": shares[i],
             "first": firsts[i], "mode": "paced", "tag": f"s{self.seq}r", "concurrency": 16,
             "timeout": 30.0, "setup_timeout": 120.0, "watched": 1 if i == 0 else 0}
            if shares[i] else None for i in range(n)], "ready", 150)
        room = ready[0]["watched_rooms"][0]
        log(f"  {args.rooms} rooms ready in {time.monotonic() - t:.1f}s; watched room {room}")
        if variant != "without":
            t = time.monotonic()
            m = self.watchers.count
            counts = [args.spectators // m + (1 if i < args.spectators % m else 0)
                      for i in range(m)]
            stalled = [args.stalled // m + (1 if i < args.stalled % m else 0) for i in range(m)]
            made: list[list[str]] = []
            if variant == "chat":
                made = await make_players(server.port, args.spectators)
                log(f"  {len(made)} players made in {time.monotonic() - t:.1f}s")
            firsts = [sum(counts[:i]) for i in range(m)]
            got = await self.watchers.all([
                {"cmd": "watch", "port": server.port, "room": room, "count": counts[i],
                 "stalled": stalled[i], "concurrency": 32, "timeout": 60.0,
                 "setup_timeout": 600.0,
                 "players": made[firsts[i]:firsts[i] + counts[i]]} for i in range(m)],
                "watching", 660)
            res["spectators"] = sum(g["spectators"] for g in got if g)
            refused: dict[str, int] = {}
            for g in got:
                for k, v in (g or {}).get("refused", {}).items():
                    refused[k] = refused.get(k, 0) + v
            res["spectators_refused"] = refused
            log(f"  {res['spectators']} spectators watching ({refused or 'none refused'}) "
                f"in {time.monotonic() - t:.1f}s")
            if variant == "chat":
                await self.watchers.all([{"cmd": "chat_start", "rate": args.chat_rate}]
                                        * m, "chatting", 30)
        start = time.monotonic() + args.warmup
        end = start + args.seconds
        gather = asyncio.ensure_future(self.players.all([
            {"cmd": "run", "start": start, "end": end, "mode": "paced", "rate": args.rate,
             "watched_rate": args.watched_rate, "seed": self.seq * 100 + i,
             "grace": args.grace, "act_timeout": 30.0} if shares[i] else None
            for i in range(n)], "result", args.warmup + args.seconds + args.grace + 60))
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        s0 = await self._snap(server, variant)
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        s1 = await self._snap(server, variant)
        res["_window"] = (s0["t"], s1["t"])
        results = [x for x in await gather if x is not None]
        if variant == "chat":
            await self.watchers.all([{"cmd": "chat_stop"}] * self.watchers.count,
                                    "chat_stopped", 30)
        if server.proc.poll() is not None:
            raise RuntimeError("the server died during the phase")
        span = s1["t"] - s0["t"]
        watched = [x for r in results for x in r["watched_acks_us"]]
        others = [x for r in results for x in r["acks_us"]]
        res.update({
            "watched_acks_us": watched,
            "other_acks_us": others,
            "watched_plays_us": [x for r in results for x in r["watched_plays_us"]],
            "other_plays_us": [x for r in results for x in r["plays_us"]],
            "watched": figures(watched),
            "others": figures(others),
            "errors": _sum_dicts(r["errors"] for r in results),
            "rejects": _sum_dicts(r["rejects"] for r in results),
            "unanswered": sum(r["unanswered"] for r in results),
            "server_cpu": (s1["server"] - s0["server"]) / span,
            "player_clients_cpu": (s1["players"] - s0["players"]) / span,
            "spectator_clients_cpu": (s1["spectators"] - s0["spectators"]) / span,
            "machine_busy": (s1["machine"] - s0["machine"]) / span,
            "server_rss_mib": (s1["rss"] or 0) / 2**20,
        })
        # Other jobs on the machine (Redis, used by this run too, counts as other here).
        res["others_cpu"] = max(0.0, res["machine_busy"] - res["server_cpu"]
                                - res["player_clients_cpu"] - res["spectator_clients_cpu"])
        res["busy"] = res["others_cpu"] > args.max_others
        if "frames" in s1:
            res["spectator_frames_per_second"] = (s1["frames"] - s0["frames"]) / span
            res["spectator_bytes_per_second"] = (s1["bytes"] - s0["bytes"]) / span
            res["spectator_snapshots"] = s1["snapshots"] - s0["snapshots"]
            res["spectators_open"] = s1["open"]
            for key in ("said", "chats", "errors"):
                res[f"spectator_{key}_per_second"] = (s1[key] - s0[key]) / span
        log(f"  watched room act→ack p50 {_f(res['watched']['p50'])} p90 "
            f"{_f(res['watched']['p90'])} p99 {_f(res['watched']['p99'])} max "
            f"{_f(res['watched']['max'])} ms (n {res['watched']['n']}); other rooms p50 "
            f"{_f(res['others']['p50'])} p99 {_f(res['others']['p99'])} max "
            f"{_f(res['others']['max'])} ms (n {res['others']['n']}); CPU: server "
            f"{res['server_cpu']:.0%}, player clients {res['player_clients_cpu']:.0%}, "
            f"spectator clients {res['spectator_clients_cpu']:.0%}, machine "
            f"{res['machine_busy']:.2f} of 2 cores"
            + (f"; spectators got {res['spectator_frames_per_second']:,.0f} frames/s"
               if "spectator_frames_per_second" in res else "")
            + (f"; spectators said {res['spectator_said_per_second']:,.0f}/s, got "
               f"{res['spectator_chats_per_second']:,.0f} chat frames/s and "
               f"{res['spectator_errors_per_second']:,.0f} refusals/s"
               if variant == "chat" and "spectator_said_per_second" in res else "")
            + (f"; errors {res['errors']}" if res["errors"] else ""))
        with contextlib.suppress(Exception):
            await self.players.all([{"cmd": "close"}] * n, "closed", 60)
        with contextlib.suppress(Exception):
            await self.watchers.all([{"cmd": "close"}] * self.watchers.count, "closed", 60)

    async def _snap(self, server: Any, variant: str) -> dict[str, Any]:
        snap: dict[str, Any] = {
            "t": time.monotonic(), "server": proc_cpu(server.pid) or 0.0,
            "machine": machine_busy(), "rss": proc_rss(server.pid),
            "players": sum(proc_cpu(p) or 0.0 for p in self.players.pids),
            "spectators": sum(proc_cpu(p) or 0.0 for p in self.watchers.pids),
        }
        if variant != "without":
            stats = await self.watchers.all([{"cmd": "watch_stats"}] * self.watchers.count,
                                            "watch_stats", 30)
            for key in ("frames", "bytes", "snapshots", "open", "said", "chats", "errors"):
                snap[key] = sum(s[key] for s in stats if s)
        return snap


async def make_players(port: int, count: int) -> list[list[str]]:
    """``count`` players of the server (``POST /api/players``): ``[[id, secret], ...]``."""
    import httpx

    sem = asyncio.Semaphore(32)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        async def one(i: int) -> list[str]:
            async with sem:
                made = await http.post("/api/players", json={"name": f"w{i}"})
                made.raise_for_status()
                body = made.json()
                return [body["id"], body["secret"]]

        return list(await asyncio.gather(*(one(i) for i in range(count))))


def _batches(items: Any, size: int) -> Any:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _sum_dicts(dicts: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def summarize(phases: list[dict[str, Any]], variants: list[str]) -> dict[str, Any]:
    """Per variant: percentiles over the samples of all rounds, and with ÷ without ratios of
    them; the same over the quiet rounds only (rounds in which neither this variant's phase
    nor the round's ``without`` had other jobs above ``--max-others``); and the median over
    rounds of each round's own ratio."""
    rounds = sorted({p["round"] for p in phases})
    out: dict[str, Any] = {"rounds": rounds}

    def of(v: str, r: int | None = None) -> list[dict[str, Any]]:
        return [p for p in phases if p["variant"] == v and not p.get("failure")
                and (r is None or p["round"] == r)]

    def pooled(done: list[dict[str, Any]]) -> dict[str, Any]:
        return {"watched": figures([x for p in done for x in p["watched_acks_us"]]),
                "others": figures([x for p in done for x in p["other_acks_us"]])}

    for v in variants:
        done = of(v)
        if not done:
            continue
        out[v] = {
            "rounds": len(done),
            **pooled(done),
            "watched_play": figures([x for p in done for x in p["watched_plays_us"]]),
            "server_cpu": sorted(p["server_cpu"] for p in done)[len(done) // 2],
            "machine_busy": sorted(p["machine_busy"] for p in done)[len(done) // 2],
            "others_cpu": [round(p.get("others_cpu", 0), 2) for p in done],
            "loop_lag_p99_ms": [round(p["loop_lag"]["p99_ms"], 1) for p in done
                                if p.get("loop_lag") and p["loop_lag"].get("p99_ms")],
            "server_rss_mib": max(p["server_rss_mib"] for p in done),
            "errors": _sum_dicts(p["errors"] for p in done),
            "spectator_frames_per_second": [round(p.get("spectator_frames_per_second", 0))
                                            for p in done],
            "chat_per_second": [
                {k: round(p.get(f"spectator_{k}_per_second", 0))
                 for k in ("said", "chats", "errors")} for p in done if v == "chat"],
        }
    base = out.get("without")
    if not base:
        return out
    for v in variants:
        s = out.get(v)
        if v == "without" or s is None:
            continue
        s["ratios"] = _ratios(s, base)
        pairs = [(of(v, r), of("without", r)) for r in rounds]
        pairs = [(a[0], b[0]) for a, b in pairs if a and b]
        quiet = [(a, b) for a, b in pairs if not a.get("busy") and not b.get("busy")]
        s["quiet_rounds"] = [a["round"] for a, _ in quiet]
        if quiet:
            s["quiet"] = {"with": pooled([a for a, _ in quiet]),
                          "without": pooled([b for _, b in quiet])}
            s["quiet_ratios"] = _ratios(s["quiet"]["with"], s["quiet"]["without"])
        per_round = [_ratios(a, b) for a, b in pairs]
        s["median_round_ratios"] = {
            k: statistics.median(x[k] for x in per_round if x[k] is not None)
            for k in (per_round[0] if per_round else {})
            if any(x[k] is not None for x in per_round)}
    if out.get("chat") and out.get("with"):
        s = out["chat"]
        s["ratios_vs_with"] = _ratios(s, out["with"])
        pairs = [(of("chat", r), of("with", r)) for r in rounds]
        per_round = [_ratios(a[0], b[0]) for a, b in pairs if a and b]
        s["median_round_ratios_vs_with"] = {
            k: statistics.median(x[k] for x in per_round if x[k] is not None)
            for k in (per_round[0] if per_round else {})
            if any(x[k] is not None for x in per_round)}
    return out


def _ratios(s: dict[str, Any], base: dict[str, Any]) -> dict[str, float | None]:
    return {f"{who} {stat}": (s[who][stat] / base[who][stat]
                              if s[who][stat] and base[who][stat] else None)
            for who in ("watched", "others") for stat in ("p50", "p90", "p99", "max")}


def print_report(summary: dict[str, Any]) -> None:
    print()
    print("| phase | watched room act→ack p50 / p90 / p99 / max (ms, n) | other rooms "
          "p50 / p99 / max (ms, n) | server CPU | machine busy (of 2 cores) | event loop "
          "lag p99 per round (ms) | spectator frames/s per round |")
    print("|---|---|---|---|---|---|---|")
    variants = [v for v in VARIANTS if v in summary]
    for v in variants:
        s = summary[v]
        w, o = s["watched"], s["others"]
        print(f"| {v} | {_f(w['p50'])} / {_f(w['p90'])} / {_f(w['p99'])} / {_f(w['max'])} "
              f"({w['n']}) | {_f(o['p50'])} / {_f(o['p99'])} / {_f(o['max'])} ({o['n']}) | "
              f"{s['server_cpu']:.0%} | {s['machine_busy']:.2f} (others {s['others_cpu']}) | "
              f"{s['loop_lag_p99_ms']} | {s['spectator_frames_per_second']} |")
    for v in variants:
        q = summary[v].get("quiet")
        if not q:
            continue
        print(f"\n{v} and without in the quiet rounds {summary[v]['quiet_rounds']}:")
        for label, part in (("without", q["without"]), (v, q["with"])):
            w, o = part["watched"], part["others"]
            print(f"  {label}: watched p50 {_f(w['p50'])} p90 {_f(w['p90'])} p99 "
                  f"{_f(w['p99'])} max {_f(w['max'])} (n {w['n']}); others p50 "
                  f"{_f(o['p50'])} p99 {_f(o['p99'])} max {_f(o['max'])} (n {o['n']})")
    for v in variants:
        s = summary[v]
        if "ratios" not in s:
            continue
        for label, r in (("all rounds", s["ratios"]),
                         ("quiet rounds", s.get("quiet_ratios")),
                         ("median of the rounds' own ratios", s["median_round_ratios"])):
            if not r:
                continue
            print(f"{v} ÷ without, {label}: watched p50 {_ratio(r.get('watched p50'))}, p90 "
                  f"{_ratio(r.get('watched p90'))}, p99 {_ratio(r.get('watched p99'))}; "
                  f"other rooms p50 {_ratio(r.get('others p50'))}, p99 "
                  f"{_ratio(r.get('others p99'))}, max {_ratio(r.get('others max'))}")


def print_chat(summary: dict[str, Any]) -> None:
    s = summary.get("chat")
    if not s or "ratios_vs_with" not in s:
        return
    print(f"\nchat: spectators per round {s.get('chat_per_second')} (said, chat frames "
          "received, refusals received, per second)")
    for label, r in (("all rounds", s["ratios_vs_with"]),
                     ("median of the rounds' own ratios", s["median_round_ratios_vs_with"])):
        print(f"chat ÷ with (the same spectators, no chat), {label}: watched p50 "
              f"{_ratio(r.get('watched p50'))}, p90 {_ratio(r.get('watched p90'))}, p99 "
              f"{_ratio(r.get('watched p99'))}; other rooms p50 {_ratio(r.get('others p50'))}"
              f", p99 {_ratio(r.get('others p99'))}, max {_ratio(r.get('others max'))}")


def _ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


async def run(args: argparse.Namespace, runner: Runner, result: dict[str, Any]) -> None:
    r = redis.Redis.from_url(args.redis_url, socket_timeout=10)
    r.ping()
    prefix = f"bench:{secrets.token_hex(4)}:"
    result["prefix"] = prefix
    players = Workers(runner, args.client_procs)
    watchers = Workers(runner, args.spectator_procs)
    bench = SpectatorBench(args, runner, players, watchers, r, prefix)
    result["phases"] = bench.phases
    try:
        await players.start()
        await watchers.start()
        for round_no in range(1, args.rounds + 1):
            for variant in args.variant_list:
                await bench.phase(variant, round_no)
        result["summary"] = summarize(bench.phases, args.variant_list)
    finally:
        await players.stop()
        await watchers.stop()
        runner.stop_all()
        with contextlib.suppress(Exception):
            result["keys_deleted_at_end"] = bench.cleanup(prefix)
        r.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server_tree, git, tmp_tree = server_checkout(args)
    runner = Runner(args, server_tree)
    result: dict[str, Any] = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(), "server_code": git,
        "command": " ".join(["python", *sys.argv]),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    log(f"server code: {git['describe']}; {args.rounds} rounds of {args.variant_list}; "
        f"{args.rooms} rooms, watched room at {args.watched_rate:g} actions/s, "
        f"{args.spectators} spectators; load average {result['loadavg_start']}")
    ok = run_bounded(lambda: run(args, runner, result), args.max_minutes, runner, result,
                     tmp_tree)
    result["loadavg_end"] = os.getloadavg()
    if "summary" not in result and result.get("phases"):
        result["summary"] = summarize(result["phases"], args.variant_list)
    print_report(result.get("summary", {}))
    print_chat(result.get("summary", {}))
    failed = [p for p in result.get("phases", []) if p.get("failure")]
    if ok and not failed and not args.keep_logs:
        shutil.rmtree(runner.logdir, ignore_errors=True)
        log(f"load average at end {result['loadavg_end']}")
    else:
        log(f"load average at end {result['loadavg_end']}; logs kept in {runner.logdir}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
        log(f"wrote {args.json}")
    return 0 if ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
