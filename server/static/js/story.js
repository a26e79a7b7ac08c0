// The story of the current game: every version's events as this seat saw them, kept by
// version so the same version coming from an update, a snapshot's `missed` or a `history`
// page is stored once. After a reload or a late join the page fills the gaps from the
// server's `history` (docs/protocol.md), so the play-by-play, the cut for deal, the lines
// under the board and the whole game can always be drawn from it.

export class Story {
  constructor() {
    /** @type {Map<number, object[]>} version -> events */
    this.versions = new Map();
    /** The version that started the current game (snapshot `history_from`). */
    this.first = null;
    /** Lines of this page's own (presence, "you are at seat 2"), after a version; a line
     * with `seat` belongs right after that seat's `seat_taken` event. */
    this.local = [];
    this.loading = false;
    this.failed = false;
  }

  /** The game started at `first`. A rematch forgets the previous game; what came before
   * the first game (seats taken while this page watched) stays. */
  startAt(first) {
    if (first === null || first === undefined || first === this.first) return;
    const rematch = this.first !== null && first > this.first;
    this.first = first;
    if (!rematch) return;
    for (const v of [...this.versions.keys()]) if (v < first) this.versions.delete(v);
    this.local = this.local.filter((l) => l.after >= first - 1);
  }

  /** Keep one version's events (the first copy wins: they never change). */
  add(version, events) {
    if (this.first !== null && version < this.first && this.versions.size && Math.min(...this.versions.keys()) >= this.first) return;
    if (!this.versions.has(version)) this.versions.set(version, events || []);
    // A rematch: the new game starts at the version whose events start it.
    if ((events || []).some((e) => e.type === "game_start") && (this.first === null || version > this.first)) {
      this.startAt(version);
    }
  }

  /** A line of the page's own, placed after `version` (or, given `seat`, right after the
   * event of that seat being taken, when the story has it). */
  addLocal(version, text, kind, seat = null) {
    this.local.push({ after: version, text, kind, seat });
    if (this.local.length > 200) this.local.splice(0, this.local.length - 200);
  }

  /** A local line's text: `text` itself, or what it gives when it is a function (a line
   * translated when shown, so that a change of language reaches it). */
  localText(line) {
    return typeof line.text === "function" ? line.text() : line.text;
  }

  /** Whether every version from the game's start to `upto` is here. */
  completeTo(upto) {
    if (this.first === null) return true;
    for (let v = this.first; v <= upto; v += 1) if (!this.versions.has(v)) return false;
    return true;
  }

  /** Every event of the game, oldest first: [{version, event}]. */
  events() {
    const out = [];
    for (const v of [...this.versions.keys()].sort((a, b) => a - b)) {
      for (const event of this.versions.get(v)) out.push({ version: v, event });
    }
    return out;
  }

  /** The events of the current deal (from its `deal` event on). */
  currentDeal() {
    const all = this.events();
    let start = 0;
    all.forEach((e, i) => { if (e.event.type === "deal") start = i; });
    return all.slice(start);
  }

  /** The game grouped by deal: [{deal, dealer, events: [{version, event}]}]; what came
   * before the first deal (the start, the cut) is deal 0. */
  byDeal() {
    const deals = [{ deal: 0, dealer: null, events: [] }];
    for (const e of this.events()) {
      if (e.event.type === "deal") deals.push({ deal: e.event.deal_number, dealer: e.event.dealer, events: [] });
      deals[deals.length - 1].events.push(e);
    }
    return deals;
  }

  /**
   * Where a line of the page's own goes among `events` (this story's `events()`): a
   * position between event indexes (i + 0.5 is right after event i). A line about a seat
   * goes right after the latest `seat_taken` of that seat up to its version; when the story
   * starts later than that (a reload: the history begins with the game), before the game;
   * other lines after every event up to their version.
   */
  localPosition(line, events) {
    let after = -1;
    let seated = -1;
    events.forEach((e, i) => {
      if (e.version > line.after) return;
      after = i;
      if (line.seat !== null && line.seat !== undefined && e.event.type === "seat_taken" && e.event.seat === line.seat) seated = i;
    });
    if (line.seat === null || line.seat === undefined) return after + 0.5;
    if (seated >= 0) return seated + 0.5;
    return this.first !== null && this.first <= line.after ? -0.5 : after + 0.5;
  }

  /** The cut for deal of this game (the event), or null. */
  cut() {
    return this.events().find((e) => e.event.type === "cut_for_deal")?.event || null;
  }
}

/** The counts of the play so far this deal, from its events: [{cards: [{seat, card}],
 * count, closed}] — `closed` once the count went back to 0. */
export function countsOfDeal(dealEvents) {
  const counts = [];
  let current = null;
  for (const { event } of dealEvents) {
    if (event.type === "play") {
      if (!current) counts.push((current = { cards: [], count: 0, closed: false }));
      current.cards.push({ seat: event.seat, card: event.card });
      current.count = event.count;
    } else if (event.type === "count_reset" && current) {
      current.closed = true;
      current = null;
    }
  }
  return counts;
}
