// Real servers for the tests: `python -m server` from the repository, on a free loopback
// port, with the in-memory store or a Redis; and a Redis of a test's own when it has to
// freeze one.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
export const PYTHON = process.env.PYTHON || "python3";
export const REDIS_URL = process.env.CRIBBAGE_TEST_REDIS_URL || "redis://127.0.0.1:6379/0";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Child processes still running when the test process ends (a test that failed half-way)
// are killed with it.
const children = new Set();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});
function track(proc) {
  children.add(proc);
  proc.on("exit", () => children.delete(proc));
  return proc;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

/** A random Redis key prefix for one test. */
export function randomPrefix() {
  return `test:js:${randomBytes(6).toString("hex")}:`;
}

/**
 * One `python -m server` process. `start()` waits for `/readyz`; `kill(signal)` ends it and
 * waits for the exit; `start()` again restarts it on the same port.
 */
export class ServerProcess {
  constructor({ port, redisUrl = null, keyPrefix = null, extraArgs = [], env = {} } = {}) {
    this.port = port;
    this.redisUrl = redisUrl;
    this.keyPrefix = keyPrefix;
    this.extraArgs = extraArgs;
    this.env = env;
    this.proc = null;
    this.output = [];
  }

  static async start(options = {}) {
    const server = new ServerProcess({ ...options, port: options.port ?? (await freePort()) });
    await server.start();
    return server;
  }

  get http() {
    return `http://127.0.0.1:${this.port}`;
  }

  get ws() {
    return `ws://127.0.0.1:${this.port}/ws`;
  }

  async start() {
    const args = ["-m", "server", "--port", String(this.port), "--log-level", "warning"];
    if (this.redisUrl) args.push("--redis-url", this.redisUrl);
    if (this.keyPrefix) args.push("--key-prefix", this.keyPrefix);
    args.push(...this.extraArgs);
    const env = { ...process.env, PYTHONPATH: REPO_ROOT, PYTHONUNBUFFERED: "1", ...this.env };
    const proc = track(spawn(PYTHON, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] }));
    this.proc = proc;
    const keep = (chunk) => {
      this.output.push(chunk.toString());
      if (this.output.length > 200) this.output.shift();
    };
    proc.stdout.on("data", keep);
    proc.stderr.on("data", keep);
    proc.exited = once(proc, "exit");
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      if (proc.exitCode !== null) break;
      try {
        const res = await fetch(`${this.http}/readyz`, { signal: AbortSignal.timeout(1000) });
        if (res.ok) return this;
      } catch {
        /* not up yet */
      }
      await sleep(50);
    }
    await this.kill("SIGKILL");
    throw new Error(`server on port ${this.port} did not become ready:\n${this.output.join("")}`);
  }

  /** Send `signal` and wait for the process to end. */
  async kill(signal = "SIGTERM") {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(timer);
  }

  async stop() {
    await this.kill("SIGTERM");
  }

  /** `GET /api/rooms/{id}`. */
  async roomSummary(room) {
    const res = await fetch(`${this.http}/api/rooms/${room}`);
    if (!res.ok) throw new Error(`GET /api/rooms/${room}: ${res.status}`);
    return res.json();
  }

  /** `POST /api/rooms`. */
  async createRoom(body) {
    const res = await fetch(`${this.http}/api/rooms`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST /api/rooms: ${res.status} ${await res.text()}`);
    return res.json();
  }
}

/** Run a few lines of Python with redis-py (a dependency of the server) against `url`. */
export function redisPython(url, code) {
  const script = `import redis, sys\nr = redis.Redis.from_url(sys.argv[1])\n${code}`;
  const done = spawnSync(PYTHON, ["-c", script, url], { cwd: REPO_ROOT, encoding: "utf8", timeout: 20_000 });
  if (done.status !== 0) throw new Error(`redis helper failed: ${done.stderr}`);
  return done.stdout.trim();
}

/** Delete every key under `prefix`; returns how many there were. */
export function deleteKeys(url, prefix) {
  return Number(
    redisPython(
      url,
      `n = 0\nfor k in r.scan_iter(match=sys.argv[2] + "*", count=500):\n    n += r.delete(k)\nprint(n)`.replace(
        "sys.argv[2]",
        JSON.stringify(prefix),
      ),
    ),
  );
}

/** A redis-server of a test's own on a free loopback port, with an append-only file in a
 * temporary folder, so it can be stopped and started again with its data. */
export class OwnRedis {
  static async start() {
    const redis = new OwnRedis(await freePort(), await mkdtemp(path.join(tmpdir(), "crib-redis-")));
    await redis.start();
    return redis;
  }

  constructor(port, dir) {
    this.port = port;
    this.dir = dir;
    this.proc = null;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start() {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always"];
    const proc = track(spawn("redis-server", args, { stdio: ["ignore", "ignore", "ignore"] }));
    proc.exited = once(proc, "exit");
    this.proc = proc;
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      if (proc.exitCode !== null) break;
      try {
        if (redisPython(this.url, "print(r.ping())") === "True") return;
      } catch {
        /* not up yet */
      }
      await sleep(50);
    }
    proc.kill("SIGKILL");
    throw new Error("redis-server did not start");
  }

  /** CLIENT PAUSE for `ms`: mode "ALL" (every command waits) or "WRITE". */
  pause(ms, mode = "ALL") {
    redisPython(this.url, `r.execute_command("CLIENT", "PAUSE", ${Math.round(ms)}, ${JSON.stringify(mode)})`);
  }

  /** SIGSTOP: Redis keeps its connections open and answers nothing (what it is sent
   * waits in its socket buffers and is read after `thaw`). */
  freeze() {
    this.proc?.kill("SIGSTOP");
  }

  /** SIGCONT after `freeze`. */
  thaw() {
    this.proc?.kill("SIGCONT");
  }

  /** Stop it (its data stays in the append-only file for the next start). */
  async stop() {
    const proc = this.proc;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }

  /** Stop it and remove its folder. */
  async destroy() {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The ids of the rooms stored under `prefix` (their state keys). */
export function roomIds(url, prefix) {
  const out = redisPython(
    url,
    `import json\nkeys = sorted(k.decode() for k in r.scan_iter(match=${JSON.stringify(`${prefix}room:*:state`)}, count=500))\n` +
      `print(json.dumps([k.split("{", 1)[1].split("}", 1)[0] for k in keys]))`,
  );
  return JSON.parse(out);
}

/** A room's log in Redis (one entry per version): `[{version, id, seat, join}]` — `id` is
 * the action id of an action's entry. */
export function roomLog(url, prefix, room) {
  const key = `${prefix}room:{${room}}:log`;
  const out = redisPython(
    url,
    `import json\nrows = []\nfor entry_id, fields in r.xrange(${JSON.stringify(key)}):\n` +
      `    e = json.loads(fields[b"e"])\n` +
      `    rows.append({"version": int(entry_id.split(b"-")[0]), "id": e.get("id"), "seat": e.get("seat"), "join": e.get("join")})\n` +
      `print(json.dumps(rows))`,
  );
  return JSON.parse(out);
}
