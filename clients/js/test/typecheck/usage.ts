// Compiled (not run) by test/types.test.js with tsc --strict: the declarations must let an
// app use the API as the README shows, and must refuse a wrong use.
import {
  CribbageClient,
  CribbageError,
  applyPatch,
  type Action,
  type ActAnswer,
  type ConnectionState,
  type Snapshot,
  type View,
  type ServerMessage,
} from "@cribbage/client";
import { applyPatch as applyPatch2 } from "@cribbage/client/patch";
import type { Update, Reject } from "@cribbage/client/protocol";

async function main(): Promise<void> {
  const client = new CribbageClient({ url: "ws://127.0.0.1:8000/ws", name: "Ann", encoding: "msgpack" });
  const states: ConnectionState[] = [];
  client.on("state", ({ state }) => states.push(state));
  client.on("event", ({ event, version }) => console.log(version, event.type));
  client.on("presence", (p) => console.log(p.seat, p.connected, p.computer_standin));
  client.on("update", (u: Update) => console.log(u.version, u.patch.length));
  client.on("message", (m: ServerMessage) => console.log(m.type));
  client.on("error", (e) => console.log(e.code, e.fatal));
  const welcome = await client.connect();
  const token: string = welcome.player_token;
  const created = await client.createRoom({ options: { players: 2, target: 61 }, computers: { "1": "standard" } });
  const snapshot: Snapshot = await client.join(created.room, 0);
  await client.join(created.room, 0, { token, since: snapshot.version });
  const view: View | null = client.view;
  const phase = view ? view["phase"] : null;
  const action: Action = { type: "play", card: "5H" };
  const answer: ActAnswer = await client.act(action);
  if (answer.type === "reject") {
    const r: Reject = answer;
    console.log(r.code);
  } else {
    console.log(answer.version, answer.duplicate);
  }
  const legal: Action[] = client.legalActions();
  const due: number | null = client.turnDeadline();
  const left: number | null = client.msUntilTurnDeadline(1);
  const patched = applyPatch<{ a: number }>({ a: 1 }, [{ op: "replace", path: "/a", value: 2 }]);
  applyPatch2(null, [{ op: "add", path: "", value: {} }]);
  try {
    await client.hint();
  } catch (err) {
    if (err instanceof CribbageError) console.log(err.code, err.closeCode);
  }
  console.log(token, snapshot.version, phase, legal, due, left, patched.a, states);
  await client.close();

  // @ts-expect-error: an action needs a known type
  await client.act({ type: "go" });
  // @ts-expect-error: no such event
  client.on("nonsense", () => {});
  // @ts-expect-error: the url is required
  new CribbageClient({ name: "x" });
}

void main;
