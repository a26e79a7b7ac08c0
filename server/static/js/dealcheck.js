// Checking an archived game's deals in the browser (docs/rules.md "The shuffle"), with
// nothing but Web Crypto (crypto.subtle: SHA-256, HMAC-SHA256). Written from that text; no
// DOM, so Node (20+, which has the same crypto.subtle) runs it too, in the test suite,
// against the engine and against tests/js/shuffle_check.mjs on the same seeds.
//
// `verifyGame(body)` takes the answer of GET /api/games/{id} (seeds published, events as a
// spectator saw them) and checks, trusting nothing in it but what the table received while
// the game went on (the commitments in the events) and the cards it saw:
//   * SHA-256 of the game's seed G is the game_commitment event's commitment;
//   * each round of the cut: its seed is HMAC-SHA256(G, "cut/<r>"), and its pack's first
//     cards are the cards the cut_for_deal event showed, in order;
//   * each deal: its seed is HMAC-SHA256(G, "deal/<d>") and its SHA-256 is the
//     deal_commitment event's; the pack it shuffles deals exactly the hands the archive
//     lists, every card a seat played or showed was in the hand the pack dealt it, the
//     starter turned is the pack's, and with 3 players the crib shown holds the pack's card.
// The answer: {ok, deals, problems: [{scope: "game"|"cut"|"deal", n, reason}]}, `reason`
// one of REASONS.

export const REASONS = [
  "game_commitment", "cut_seed", "cut_cards", "deal_missing", "deal_seed",
  "deal_commitment", "deal_hands", "deal_played", "deal_starter", "deal_crib",
];

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
export const PACK = ["C", "D", "H", "S"].flatMap((suit) => RANKS.map((r) => r + suit));

const subtle = () => globalThis.crypto.subtle;
const ascii = (text) => new TextEncoder().encode(text);

export function fromHex(hex) {
  if (typeof hex !== "string" || !/^([0-9a-f]{2})*$/.test(hex)) throw new TypeError("not hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of `bytes`, as a Uint8Array. */
export async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

/** HMAC-SHA256 with key `key` (bytes) of the ASCII text `message`. */
export async function hmac(key, message) {
  const k = await subtle().importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle().sign("HMAC", k, ascii(message)));
}

/** The pack shuffled from `seed` (32 bytes): the 52 card texts, index 0 the top. */
export async function shuffledPack(seed) {
  const words = [];
  let block = 0n;
  const next = async () => {
    if (!words.length) {
      const input = new Uint8Array(seed.length + 8);
      input.set(seed);
      new DataView(input.buffer).setBigUint64(seed.length, block, false);
      block += 1n;
      const view = new DataView((await sha256(input)).buffer);
      for (const at of [0, 8, 16, 24]) words.push(view.getBigUint64(at, false));
    }
    return words.shift();
  };
  const two64 = 1n << 64n;
  const below = async (n) => {
    const big = BigInt(n);
    const limit = two64 - (two64 % big);
    for (;;) {
      const x = await next();
      if (x < limit) return Number(x % big);
    }
  };
  const pack = PACK.slice();
  for (let i = 51; i >= 1; i -= 1) {
    const j = await below(i + 1);
    [pack[i], pack[j]] = [pack[j], pack[i]];
  }
  return pack;
}

/** The hands, the crib's pack card (3 players) and the starter a pack deals. */
export function dealOf(pack, players, dealer) {
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

const sameList = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);

/** What the table saw of each deal, from the versions' events. */
function seen(body) {
  const deals = new Map();
  let game = null;
  let cuts = [];
  let current = null;
  const at = (n) => {
    if (!deals.has(n)) deals.set(n, { commitment: null, starter: null, played: [], shown: [], crib: null });
    return deals.get(n);
  };
  for (const v of body.versions || []) {
    for (const e of v.events || []) {
      switch (e.type) {
        case "game_commitment": game = e.commitment; break;
        case "cut_for_deal": cuts = e.cuts || []; break;
        case "deal_commitment": at(e.deal_number).commitment = e.commitment; break;
        case "deal": current = at(e.deal_number); break;
        case "starter": if (current) current.starter = e.card; break;
        case "play": if (current) current.played.push({ seat: e.seat, card: e.card }); break;
        case "show_hand":
          if (!current) break;
          if (e.kind === "crib") current.crib = e.cards;
          else current.shown.push({ seat: e.seat, cards: e.cards });
          break;
        default: break;
      }
    }
  }
  return { game, cuts, deals };
}

/** Check every shuffle of an archived game (GET /api/games/{id}); see the file's head. */
export async function verifyGame(body) {
  const problems = [];
  const add = (scope, n, reason) => problems.push({ scope, n, reason });
  const seeds = body.seeds || {};
  const table = seen(body);
  const players = body.options.players;
  let G;
  try {
    G = fromHex(seeds.game);
  } catch {
    add("game", 0, "game_commitment");
    return { ok: false, deals: 0, problems };
  }
  if (G.length !== 32 || toHex(await sha256(G)) !== table.game) add("game", 0, "game_commitment");
  const cutSeeds = new Map((seeds.cuts || []).map((c) => [c.round, c.seed]));
  for (let r = 1; r <= table.cuts.length; r += 1) {
    const round = table.cuts[r - 1];
    const hex = cutSeeds.get(r);
    if (typeof hex !== "string" || toHex(await hmac(G, `cut/${r}`)) !== hex) {
      add("cut", r, "cut_seed");
      continue;
    }
    const pack = await shuffledPack(fromHex(hex));
    if (!sameList(pack.slice(0, round.length), round.map((c) => c.card))) add("cut", r, "cut_cards");
  }
  const published = new Map((seeds.deals || []).map((d) => [d.deal_number, d]));
  let checked = 0;
  for (const [n, saw] of [...table.deals.entries()].sort((a, b) => a[0] - b[0])) {
    const deal = published.get(n);
    if (!deal || typeof deal.seed !== "string") {
      add("deal", n, "deal_missing");
      continue;
    }
    checked += 1;
    if (toHex(await hmac(G, `deal/${n}`)) !== deal.seed) {
      add("deal", n, "deal_seed");
      continue;
    }
    const seed = fromHex(deal.seed);
    if (toHex(await sha256(seed)) !== saw.commitment) {
      add("deal", n, "deal_commitment");
      continue;
    }
    const got = dealOf(await shuffledPack(seed), players, deal.dealer);
    const hands = deal.hands || {};
    if (!Object.keys(got.hands).every((s) => sameList(got.hands[s], hands[s]))
        || Object.keys(hands).length !== players) add("deal", n, "deal_hands");
    const dealt = (seat) => got.hands[String(seat)] || [];
    if (!saw.played.every((p) => dealt(p.seat).includes(p.card))
        || !saw.shown.every((s) => s.cards.every((c) => dealt(s.seat).includes(c)))) add("deal", n, "deal_played");
    if (saw.starter !== null && saw.starter !== got.starter) add("deal", n, "deal_starter");
    if (players === 3 && saw.crib && !saw.crib.includes(got.crib)) add("deal", n, "deal_crib");
  }
  return { ok: problems.length === 0, deals: checked, problems };
}
