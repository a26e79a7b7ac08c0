// The lobby through the library against a real server (in-memory store): a follower's
// `lobbySubscribe` gets the public tables waiting for players and their changes as
// "lobby" events; a private table never shows; the full table leaves; the hello's
// `language` is the default language of the tables the client creates.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { ServerProcess } from "./helpers/server.js";
import { nextEvent, testClient } from "./helpers/play.js";

let server;

before(async () => {
  server = await ServerProcess.start();
});

after(async () => {
  await server?.stop();
});

test("a public table comes, changes and goes in the followers' lobby", { timeout: 60_000 }, async () => {
  const follower = testClient(server.ws, "Eve");
  const host = testClient(server.ws, "Ann", { language: "sv" });
  const guest = testClient(server.ws, "Bob");
  try {
    const first = nextEvent(follower, "lobby");
    follower.lobbySubscribe({ players: 2 });
    await follower.connect();
    assert.deepEqual((await first).tables, []);
    assert.deepEqual(follower.lobby, []);
    await host.connect();
    const secret = await host.createRoom({ options: { players: 2 } });
    const made = await host.createRoom({ options: { players: 2, target: 61 }, room: { public: true } });
    assert.equal(made.room_settings.public, true);
    assert.equal(made.room_settings.language, "sv"); // the hello's language
    const listed = nextEvent(follower, "lobby", ({ tables }) => tables.some((t) => t.room === made.room && t.seats[0].name === "Ann"));
    await host.join(made.room, 0);
    const { tables, update } = await listed;
    assert.ok(update && update.type === "lobby_update");
    const entry = tables.find((t) => t.room === made.room);
    assert.equal(entry.language, "sv");
    assert.equal(entry.options.target, 61);
    assert.equal(entry.seats_free, 1);
    assert.ok(!tables.some((t) => t.room === secret.room));
    const gone = nextEvent(follower, "lobby", ({ tables: now }) => !now.some((t) => t.room === made.room));
    await guest.connect();
    await guest.join(made.room, 1);
    await gone;
    assert.ok(!follower.lobby.some((t) => t.room === made.room));
    follower.lobbyUnsubscribe();
    assert.equal(follower.lobby, null);
  } finally {
    await Promise.all([follower.close(), host.close(), guest.close()]);
  }
});
