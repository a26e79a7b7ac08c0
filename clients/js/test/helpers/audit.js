// Checks shared by the game tests: what every client saw must add up.

import assert from "node:assert/strict";

/** Every act answer of the players: id -> versions its acks named (a re-sent id is acked
 * again with the first version). */
export function ackedIds(answerLists) {
  const ids = new Map();
  for (const answers of answerLists) {
    for (const { answer } of answers) {
      if (answer.type !== "ack") continue;
      if (!ids.has(answer.action_id)) ids.set(answer.action_id, new Set());
      ids.get(answer.action_id).add(answer.version);
    }
  }
  return ids;
}

/**
 * The whole-game audit: every client at game over at the room's version, the same scores,
 * every acked action applied exactly once (one version per id, ids never sharing a
 * version, and the room's version = `seatedVersion` + the number of acked ids), one
 * `game_over` event each, views advanced one version per update.
 */
export function auditGame({ clients, logs, answerLists, summary, seatedVersion, target }) {
  const ids = ackedIds(answerLists);
  for (const [id, versions] of ids) assert.equal(versions.size, 1, `action ${id} acked with versions ${[...versions]}`);
  const versions = [...ids.values()].map((v) => [...v][0]);
  assert.equal(new Set(versions).size, versions.length, "two action ids acked with the same version");
  assert.equal(summary.status, "game_over");
  assert.equal(summary.version, seatedVersion + ids.size, "room version = seats taken + acked actions");
  const scores = clients.map((c) => JSON.stringify(c.view.scores));
  assert.equal(new Set(scores).size, 1, `scores differ: ${scores}`);
  assert.equal(Math.max(...clients[0].view.scores), target);
  for (const [i, c] of clients.entries()) {
    assert.equal(c.status, "game_over");
    assert.equal(c.view.phase, "game_over");
    assert.equal(c.version, summary.version, `client ${i} version`);
    const log = logs[i];
    assert.equal(log.events.filter((e) => e.event.type === "game_over").length, 1, `client ${i}: one game_over event`);
    for (let k = 1; k < log.events.length; k++) {
      assert.ok(log.events[k].version >= log.events[k - 1].version, "events in version order");
    }
    // An update moves the view by exactly one version (only a snapshot may jump).
    for (let k = 1; k < log.views.length; k++) {
      if (log.views[k].cause === "update") assert.equal(log.views[k].version, log.views[k - 1].version + 1);
    }
  }
  return ids;
}
