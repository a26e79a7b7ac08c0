// An independent check of docs/rules.md "The shuffle", written from that text alone.
//
// Reads JSON from standard input: {"games": [game, ...]}, each game
//   {"room_seed"?: text, "game_number": g, "game_seed": hex, "game_commitment": hex,
//    "cuts": [{"round", "seed", "cards": [card, ...]}],
//    "deals": [{"deal_number", "seed", "commitment", "players", "dealer",
//               "hands": {seat: [cards]}, "crib_card": card|null, "starter": card}]}
// and writes {"results": [{"ok": bool, "problems": [text, ...]}, ...]} to standard output.
import { createHash, createHmac } from "node:crypto";

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const PACK = [];
for (const suit of ["C", "D", "H", "S"]) for (const rank of RANKS) PACK.push(rank + suit);

const sha256 = (bytes) => createHash("sha256").update(bytes).digest();
const hmac = (key, text) => createHmac("sha256", key).update(Buffer.from(text, "ascii")).digest();

function stream(seed) {
  let block = 0n;
  let words = [];
  return () => {
    if (words.length === 0) {
      const counter = Buffer.alloc(8);
      counter.writeBigUInt64BE(block);
      block += 1n;
      const digest = sha256(Buffer.concat([seed, counter]));
      words = [0, 8, 16, 24].map((at) => digest.readBigUInt64BE(at));
    }
    return words.shift();
  };
}

function shuffle(seed) {
  const next = stream(seed);
  const two64 = 1n << 64n;
  const below = (n) => {
    const big = BigInt(n);
    const limit = two64 - (two64 % big);
    for (;;) {
      const x = next();
      if (x < limit) return Number(x % big);
    }
  };
  const pack = PACK.slice();
  for (let i = 51; i >= 1; i -= 1) {
    const j = below(i + 1);
    [pack[i], pack[j]] = [pack[j], pack[i]];
  }
  return pack;
}

function dealOf(pack, players, dealer) {
  const size = players === 2 ? 6 : 5;
  const hands = {};
  for (let s = 0; s < players; s += 1) hands[String(s)] = [];
  let at = 0;
  for (let round = 0; round < size; round += 1) {
    for (let k = 1; k <= players; k += 1) hands[String((dealer + k) % players)].push(pack[at++]);
  }
  const crib = players === 3 ? pack[at++] : null;
  return { hands, crib, starter: pack[at] };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function check(game) {
  const problems = [];
  const G = Buffer.from(game.game_seed, "hex");
  if (game.room_seed !== undefined) {
    const key = Buffer.from(`str:${game.room_seed}`, "utf8");
    const derived = hmac(key, `cribbage/v2/game/${game.game_number}`).toString("hex");
    if (derived !== game.game_seed) problems.push("game seed is not derived from the room seed");
  }
  if (sha256(G).toString("hex") !== game.game_commitment) problems.push("game commitment");
  for (const cut of game.cuts) {
    if (hmac(G, `cut/${cut.round}`).toString("hex") !== cut.seed) problems.push(`cut ${cut.round} seed`);
    const pack = shuffle(Buffer.from(cut.seed, "hex"));
    if (!same(pack.slice(0, cut.cards.length), cut.cards)) problems.push(`cut ${cut.round} cards`);
  }
  for (const deal of game.deals) {
    const seed = Buffer.from(deal.seed, "hex");
    if (hmac(G, `deal/${deal.deal_number}`).toString("hex") !== deal.seed) problems.push(`deal ${deal.deal_number} seed`);
    if (sha256(seed).toString("hex") !== deal.commitment) problems.push(`deal ${deal.deal_number} commitment`);
    const got = dealOf(shuffle(seed), deal.players, deal.dealer);
    if (!same(got.hands, deal.hands)) problems.push(`deal ${deal.deal_number} hands`);
    if (got.crib !== (deal.crib_card ?? null)) problems.push(`deal ${deal.deal_number} crib card`);
    if (got.starter !== deal.starter) problems.push(`deal ${deal.deal_number} starter`);
  }
  return { ok: problems.length === 0, problems };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const { games } = JSON.parse(input);
  process.stdout.write(JSON.stringify({ results: games.map(check) }));
});
