"""Run a server with a probe inside: GC pauses and event-loop lag (``latency.py --probe``).

``bench/latency.py --probe`` starts the product and the floor as::

    python bench/probe.py --out /tmp/probe.json -- -m server --port 8000 ...
    python bench/probe.py --out /tmp/probe.json -- bench/floor.py --port 8001 ...

The server runs exactly as ``python -m server`` (or ``bench/floor.py``) would: the same
``main``, the same arguments; the probe adds, without changing the server's code:

* a ``gc.callbacks`` hook timing every collection of the cyclic garbage collector (the time
  between its ``start`` and ``stop`` calls, in which the event loop runs nothing else),
  summed per second and per generation, with every pause over 5 ms kept, and the number of
  objects the collector tracks counted at the start of each full (generation 2) collection;
* a task on the server's event loop (added around the app's lifespan) that sleeps 10 ms at a
  time and records how late it wakes: the event loop's lag, i.e. how long a callback that
  was ready had to wait for the one running;

and, on ``SIGUSR1`` (the harness sends it when a window closes), a census of the objects the
collector tracks, by type. It writes all of it as JSON to ``--out`` when the server stops
(SIGTERM: uvicorn shuts down, then raises the signal again for this handler). Times are
``time.monotonic()`` seconds, which the harness compares with its measurement window.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

LAG_PERIOD = 0.010
SLOW_GC = 0.005


class Probe:
    def __init__(self) -> None:
        self.gc_seconds: dict[int, list[float]] = {}  # second -> [n0, n1, n2, t0, t1, t2, max]
        self.slow_gc: list[tuple[float, float, int, int]] = []  # (t, seconds, gen, collected)
        self.lags: list[tuple[float, float]] = []  # (t, seconds late)
        self.heap: list[tuple[float, int]] = []  # (t, objects tracked) at each full collection
        self.census_wanted = False
        self.census: dict[str, Any] | None = None
        self._gc_t0 = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            if info.get("generation") == 2 and len(self.heap) < 10000:
                # The objects a full collection traverses (counting them takes a few ms,
                # inside a pause that is much longer anyway; it is not timed as GC).
                self.heap.append((time.monotonic(), len(gc.get_objects())))
            self._gc_t0 = time.perf_counter()
            return
        dur = time.perf_counter() - self._gc_t0
        now = time.monotonic()
        gen = info.get("generation", 0)
        b = self.gc_seconds.get(int(now))
        if b is None:
            b = self.gc_seconds[int(now)] = [0, 0, 0, 0.0, 0.0, 0.0, 0.0]
        b[gen] += 1
        b[3 + gen] += dur
        if dur > b[6]:
            b[6] = dur
        if dur > SLOW_GC and len(self.slow_gc) < 20000:
            self.slow_gc.append((now, dur, gen, info.get("collected", 0)))

    async def lag_monitor(self) -> None:
        lags = self.lags
        while True:
            t = time.perf_counter()
            await asyncio.sleep(LAG_PERIOD)
            late = time.perf_counter() - t - LAG_PERIOD
            if len(lags) < 500_000:
                lags.append((time.monotonic(), late))
            if self.census_wanted:
                self.census_wanted = False
                self.take_census()

    def take_census(self) -> None:
        """Count the objects the collector tracks, by type (after the window: it stalls)."""
        t = time.perf_counter()
        objects = gc.get_objects()
        counts = collections.Counter(type(o).__name__ for o in objects)
        self.census = {
            "objects": len(objects),
            "seconds_to_count": time.perf_counter() - t,
            "top_types": counts.most_common(25),
        }
        del objects

    def dump(self, path: str) -> None:
        data = {
            "gc_threshold": gc.get_threshold(),
            "gc_stats": gc.get_stats(),
            "gc_freeze_count": gc.get_freeze_count(),
            "gc_per_second": {str(k): v for k, v in sorted(self.gc_seconds.items())},
            "slow_gc": self.slow_gc,
            "lags": [(round(t, 4), round(x, 6)) for t, x in self.lags],
            "lag_period": LAG_PERIOD,
            "heap": self.heap,
            "census": self.census,
        }
        with open(path, "w") as f:
            json.dump(data, f)


def summarize(data: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    """What the probe saw inside ``[start, end)`` (monotonic seconds)."""
    counts = [0, 0, 0]
    pause = [0.0, 0.0, 0.0]
    pmax = 0.0
    for sec, b in data.get("gc_per_second", {}).items():
        s = int(sec)
        frac = min(end, s + 1) - max(start, s)  # the part of this second inside the window
        if frac <= 0:
            continue
        for g in range(3):
            counts[g] += b[g] * frac
            pause[g] += b[3 + g] * frac
        pmax = max(pmax, b[6])
    span = end - start
    lags = sorted(x for t, x in data.get("lags", []) if start <= t < end)
    slow = [e for e in data.get("slow_gc", []) if start <= e[0] < end]

    def pct(p: float) -> float | None:
        if not lags:
            return None
        return lags[min(len(lags) - 1, max(0, int(-(-len(lags) * p // 100)) - 1))] * 1000

    return {
        "gc": {
            "gen0_count": round(counts[0]), "gen1_count": round(counts[1]),
            "gen2_count": round(counts[2]),
            "pause_ms_by_gen": [round(x * 1000, 2) for x in pause],
            "pause_total_ms": sum(pause) * 1000,
            "pause_max_ms": pmax * 1000,
            "window_share": sum(pause) / span if span else None,
            "pauses_over_5ms": len(slow),
            "gen2_pauses_ms": [round(e[1] * 1000, 1) for e in slow if e[2] == 2][:50],
            "threshold": data.get("gc_threshold"),
            "objects_at_full_collections": [n for t, n in data.get("heap", [])
                                            if start <= t < end][:50],
        },
        "census": data.get("census"),
        "lag": {
            "samples": len(lags),
            "p50_ms": pct(50), "p99_ms": pct(99), "p999_ms": pct(99.9),
            "max_ms": lags[-1] * 1000 if lags else None,
            "over_50ms": sum(1 for x in lags if x > 0.05),
            "over_10ms": sum(1 for x in lags if x > 0.01),
        },
    }


def main() -> None:
    argv = sys.argv[1:]
    if "--" not in argv or "--out" not in argv:
        raise SystemExit("usage: probe.py --out FILE -- (-m server | bench/floor.py) [args]")
    sep = argv.index("--")
    out = argv[argv.index("--out") + 1]
    rest = argv[sep + 1:]
    if rest[:2] == ["-m", "server"]:
        import server.__main__ as target

        target_argv = rest[2:]
    elif rest and Path(rest[0]).name == "floor.py":
        sys.path.insert(0, str(Path(rest[0]).resolve().parent))
        import floor as target  # type: ignore[no-redef]

        target_argv = rest[1:]
    else:
        raise SystemExit("probe.py runs only '-m server' or bench/floor.py")
    probe = Probe()
    gc.callbacks.append(probe.on_gc)
    original = target.create_app

    def create_app(*a: Any, **kw: Any) -> Any:
        app = original(*a, **kw)
        inner = app.router.lifespan_context

        @contextlib.asynccontextmanager
        async def lifespan(application: Any) -> AsyncIterator[Any]:
            async with inner(application) as state:
                task = asyncio.create_task(probe.lag_monitor())
                try:
                    yield state
                finally:
                    task.cancel()

        app.router.lifespan_context = lifespan
        return app

    target.create_app = create_app
    sys.argv = [rest[0], *target_argv]

    # uvicorn handles SIGTERM itself, then restores the previous handler and raises the
    # signal again once it has shut down: this handler then writes the data and exits.
    def on_term(signum: int, frame: Any) -> None:
        probe.dump(out)
        raise SystemExit(0)

    def on_usr1(signum: int, frame: Any) -> None:
        probe.census_wanted = True  # taken by the lag task, on the event loop

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.signal(signal.SIGUSR1, on_usr1)
    target.main()
    probe.dump(out)


if __name__ == "__main__":
    main()
