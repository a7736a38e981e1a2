// The live table: one game from a human seat's view. The AI seats move one decision per
// /step call, with a pause between them (the player's chosen pace), so their cards fall
// one by one; the next AI decision is already asked for during the pause.

import { api, downloadFrom, sleep } from "./api.js";
import { el, rainCard, skyCard, sortCards, symbol } from "./cards.js";
import {
  betBadge, elementBadges, leaderOf, nameOf, roundSummaryTable, scoreTable, seatBox, seatDot, seatName, seatPlayer,
  skyLine, trickArea, voidBadges, winnerText,
} from "./board.js";
import { scoringRules } from "./rules.js";

const PARAMS = new URLSearchParams(window.location.search);
/**
 * The AI's pace: the pause after each AI decision and the longer one after a complete
 * trick, so its winner can be seen (ms). The player picks one (remembered); `?delay=N` in
 * the address adds a "custom" pace of N ms (N×3 after a trick) and starts with it.
 */
const PACES = {
  instant: { label: "Instant", step: 0, trick: 0 },
  quick: { label: "Quick", step: 150, trick: 800 },
  normal: { label: "Normal", step: 400, trick: 1400 },
  slow: { label: "Slow", step: 900, trick: 2800 },
};
const DELAY = PARAMS.has("delay") ? Math.max(0, Number(PARAMS.get("delay")) || 0) : null;
if (DELAY !== null) PACES.custom = { label: `Custom (${DELAY} ms)`, step: DELAY, trick: DELAY * 3 };
const DEFAULT_PACE = "quick";
/** How long the end-of-round summary stays when nobody closes it (ms). */
const SUMMARY_MS = 15000;
const ESTIMATE_KEY = "csl.showEstimate";
const PACE_KEY = "csl.pace";
const TRICK_CLICK_KEY = "csl.trickClick";
const WHY_KEY = "csl.showWhy";
/** Earlier AI decisions the "why" panel lists. */
const WHY_LIST = 30;

function stored(key) {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function store(key, value) {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // storage refused (private mode): the choice lasts this page only
  }
}

const pct = (p) => (p === null || p === undefined ? "?" : `${Math.round(p * 100)}%`);

export class TableView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.gameId = null;
    this.state = null;
    this.viewer = null;
    this.runToken = 0;
    this.showEstimate = stored(ESTIMATE_KEY) !== "off";
    const pace = stored(PACE_KEY);
    this.pace = DELAY !== null ? "custom" : PACES[pace] ? pace : DEFAULT_PACE;
    this.trickClick = stored(TRICK_CLICK_KEY) === "on";
    this.showWhy = stored(WHY_KEY) === "on";
    this.advance = null;
    this.summaryTimer = null;
    this.reset();
  }

  reset() {
    this.alloc = null;
    this.hint = null;
    this.estimate = null;
    this.log = [];
    this.busy = false;
    this.thinking = false;
    this.hinting = false;
    this.fresh = null;
    this.confirmResign = false;
    this.handover = false;
    this.waitingTrick = false;
    this.summaryRound = null;
    this.closeSummary(false);
    this.lastWhy = null;
    this.whyList = null;
  }

  /** Stop driving the AI: a drive loop still running (or waiting for a click) ends. */
  cancel() {
    this.runToken += 1;
    this.waitingTrick = false;
    if (this.advance) this.advance();
    this.advance = null;
  }

  paceTimes() {
    return PACES[this.pace] || PACES[DEFAULT_PACE];
  }

  /** Open a game by id (state given when just created), then let the AI seats move. */
  async open(gameId, state = null, seat = null) {
    this.cancel();
    delete this.root.dataset.ready;
    if (gameId !== this.gameId) this.reset();
    this.gameId = gameId;
    if (!state) {
      try {
        state = await api("GET", `/games/${encodeURIComponent(gameId)}${seat !== null ? `?seat=${seat}` : ""}`);
      } catch (error) {
        this.app.showError(error);
        this.state = null;
        this.renderMissing();
        return;
      }
    }
    this.setState(state);
    this.render();
    this.drive();
  }

  /** Stop driving the AI (leaving the view); a hidden table waits for no one. */
  close() {
    this.cancel();
    this.closeSummary(false);
    delete this.root.dataset.ready;
  }

  path(action = "", withSeat = true) {
    const base = `/games/${encodeURIComponent(this.gameId)}${action}`;
    return withSeat && this.viewer !== null ? `${base}?seat=${this.viewer}` : base;
  }

  setState(state) {
    this.state = state;
    this.viewer = state.viewer;
    this.revealBets(state.board);
    if (this.summaryRound !== null && this.summaryRound !== undefined) {
      const round = this.summaryRound;
      this.summaryRound = null;
      if (state.status === "playing") this.openSummary(round);
    }
    const me = this.me();
    if (state.board.phase === "allocate" && state.your_turn && me && me.hand) {
      const key = `${state.board.round}:${me.hand.join(" ")}`;
      if (!this.alloc || this.alloc.key !== key) {
        this.alloc = { key, piles: state.rules.group_sizes.map(() => []), selected: 0 };
      }
    } else {
      this.alloc = null;
    }
  }

  me() {
    return this.state ? this.state.board.seats[this.viewer] : null;
  }

  ctx() {
    const s = this.state;
    return { viewer: this.viewer, seats: s.board.seats, soloHuman: s.humans.length === 1, over: s.status !== "playing" };
  }

  // --- driving the AI ----------------------------------------------------------------
  /** One /step, as a promise that never rejects: `{res}` or `{error}`. */
  stepRequest() {
    return api("POST", this.path("/step")).then((res) => ({ res }), (error) => ({ error }));
  }

  /**
   * Let the AI seats (and a human's forced cards) move until a human must choose. After
   * each decision the page pauses at the chosen pace (longer after a complete trick, or
   * until "Next trick" is clicked) while the next decision is already being searched.
   * `trickDone`: the human's own card has just completed a trick.
   */
  async drive(trickDone = false) {
    const token = ++this.runToken;
    let conflicts = 0;
    let pending = null;
    if (trickDone && this.state && this.state.next === "step") {
      pending = this.stepRequest();
      this.thinking = true;
      await this.pause(token, true);
    }
    while (token === this.runToken && this.state) {
      const s = this.state;
      if (s.next === "step") {
        this.thinking = true;
        this.render();
        const { res, error } = await (pending || this.stepRequest());
        pending = null;
        if (token !== this.runToken) return;
        this.thinking = false;
        if (error) {
          if (error.status === 409 && conflicts < 20) {
            conflicts += 1;
            await sleep(300);
            if (!(await this.refresh(token))) return;
            continue;
          }
          this.app.showError(error);
          this.render();
          return;
        }
        this.applyStep(res.step);
        this.setState(res.state);
        const done = Boolean(res.step && res.step.trick && res.step.trick.winner !== null && !res.step.round_over);
        if (res.state.next === "step") {
          // The next seat searches while this move is on show.
          pending = this.stepRequest();
          this.thinking = true;
        }
        this.render();
        // A trick the human leads next stays on show until they play: no pause then.
        await this.pause(token, done && res.state.next === "step");
        continue;
      }
      if (s.next === "human" && s.waiting_for !== null && s.waiting_for !== this.viewer) {
        const seat = s.waiting_for;
        try {
          const next = await api("GET", `/games/${encodeURIComponent(this.gameId)}?seat=${seat}`);
          if (token !== this.runToken) return;
          this.handover = next.humans.length > 1;
          this.hint = null;
          this.setState(next);
        } catch (error) {
          this.app.showError(error);
        }
      }
      this.render();
      return;
    }
  }

  /** The pause after a move: the pace's, or after a complete trick until "Next trick" is
   * clicked (at once with the click, whatever the pace). */
  async pause(token, trickDone) {
    const times = this.paceTimes();
    if (!trickDone) {
      if (times.step > 0) await sleep(times.step);
      return;
    }
    if (!this.trickClick && times.trick <= 0) return;
    this.waitingTrick = true;
    this.render();
    const click = new Promise((resolve) => {
      this.advance = resolve;
    });
    await (this.trickClick ? click : Promise.race([click, sleep(times.trick)]));
    if (token === this.runToken) {
      this.waitingTrick = false;
      this.advance = null;
    }
  }

  nextTrick() {
    if (this.advance) this.advance();
  }

  async refresh(token) {
    try {
      const state = await api("GET", this.path());
      if (token !== this.runToken) return false;
      this.setState(state);
      this.render();
      return true;
    } catch (error) {
      this.app.showError(error);
      return false;
    }
  }

  applyStep(step) {
    if (!step) return;
    const ctx = this.ctx();
    const who = nameOf(step.seat, ctx);
    const you = who === "You";
    if (step.kind === "play") {
      this.fresh = { seat: step.seat, card: step.text };
      const auto = step.by === "auto" ? " (your only card)" : "";
      this.addLog(`${who} ${you ? "play" : "plays"} ${step.text}${auto}`, step.seat);
      if (step.trick && step.trick.winner !== null) {
        const winner = nameOf(step.trick.winner, ctx);
        this.addLog(`→ ${winner} ${winner === "You" ? "take" : "takes"} the ${skyName(step.trick.sky)}`, step.trick.winner, true);
      }
    } else if (step.kind === "allocate") {
      this.addLog(`${who} ${you ? "have" : "has"} split ${you ? "your" : "their"} hand${step.text && !you ? `: ${step.text}` : ""}`, step.seat);
    } else if (step.kind === "weather") {
      const bet = step.move ? (step.move.good_weather ? "good" : "none") : "secret";
      const words = {
        good: ["bet on good weather", "bets on good weather"],
        none: ["make no bet", "makes no bet"],
        secret: ["have made a secret bet", "has made a secret bet"],
      }[bet];
      const entry = this.addLog(`${who} ${words[you ? 0 : 1]}`, step.seat);
      // Rewritten once the bets show (`revealBets`).
      if (bet === "secret") entry.bet = { round: this.state.board.round, seat: step.seat, who };
    }
    if (step.by === "ai" && step.estimate) {
      this.estimate = { seat: step.seat, ...step.estimate };
      this.lastWhy = { ...step, round: this.state.board.round };
    }
    const finished = step.round_over ? this.state.board.round : null;
    if (step.round_over && !step.game_over) this.addLog("— the round is over; a new sky line falls —", null, true);
    if (step.game_over) this.addLog("— the game is over —", null, true);
    if (finished !== null && !step.game_over) this.summaryRound = finished;
    if (this.showWhy && (step.round_over || (step.kind === "weather" && step.move && step.by === "ai"))) this.loadWhy();
  }

  addLog(text, seat, strong = false) {
    const entry = { text, seat, strong };
    this.log.push(entry);
    if (this.log.length > 200) this.log.shift();
    return entry;
  }

  /** Rewrite the log's "has made a secret bet" once every seat's bet is on the table. */
  revealBets(board) {
    for (const entry of this.log) {
      if (!entry.bet) continue;
      const { round, seat, who } = entry.bet;
      let bet = null;
      if (round === board.round && (board.phase === "play" || board.phase === "over")) {
        bet = board.seats[seat].good_weather;
      } else if (round < board.round && board.past_rounds[round]) {
        bet = board.past_rounds[round].declarations[seat];
      }
      if (bet === null || bet === undefined) continue;
      entry.text = `${who} ${bet ? "bet on good weather" : "made no bet"} (shown once every seat had bet)`;
      delete entry.bet;
    }
  }

  // --- end of a round ----------------------------------------------------------------
  /** Show what the round just finished did: until closed, or for `SUMMARY_MS` (unless the
   * player waits for a click after each trick). */
  openSummary(round) {
    const result = (this.state.board.round_results || []).find((r) => r.round === round);
    if (!result) return;
    this.closeSummary(false);
    this.summary = result;
    if (!this.trickClick) this.summaryTimer = setTimeout(() => this.closeSummary(), SUMMARY_MS);
  }

  closeSummary(draw = true) {
    if (this.summaryTimer) clearTimeout(this.summaryTimer);
    this.summaryTimer = null;
    const was = this.summary;
    this.summary = null;
    if (draw && was && this.state) this.render();
  }

  // --- why the AI moved --------------------------------------------------------------
  async loadWhy() {
    if (!this.gameId) return;
    const id = this.gameId;
    try {
      const data = await api("GET", this.path("/why"));
      if (id !== this.gameId) return;
      this.whyList = data.decisions;
      if (this.state) this.render();
    } catch (error) {
      this.app.showError(error);
    }
  }

  // --- human actions -------------------------------------------------------------------
  async move(move) {
    if (this.busy || !this.state || !this.state.your_turn) return;
    this.busy = true;
    this.render();
    let trickDone = false;
    try {
      const res = await api("POST", this.path("/move"), { move, seat: this.viewer });
      this.hint = null;
      this.applyStep(res.step);
      this.setState(res.state);
      trickDone = Boolean(res.step && res.step.trick && res.step.trick.winner !== null && !res.step.round_over);
    } catch (error) {
      this.app.showError(error);
    }
    this.busy = false;
    this.render();
    this.drive(trickDone);
  }

  async askHint() {
    if (this.busy || !this.state || !this.state.your_turn) return;
    this.busy = true;
    this.hinting = true;
    this.render();
    try {
      const res = await api("POST", this.path("/hint", false));
      this.hint = res.hint;
    } catch (error) {
      this.app.showError(error);
    }
    this.busy = false;
    this.hinting = false;
    this.render();
  }

  async undo() {
    if (this.busy || this.thinking) return;
    this.cancel();
    this.busy = true;
    this.render();
    try {
      const state = await api("POST", this.path("/undo"));
      this.hint = null;
      this.estimate = null;
      this.lastWhy = null;
      this.alloc = null;
      this.closeSummary(false);
      this.addLog("↶ takeback", null, true);
      this.setState(state);
      if (this.showWhy) this.loadWhy();
    } catch (error) {
      this.app.showError(error);
    }
    this.busy = false;
    this.render();
    this.drive();
  }

  async resign() {
    if (!this.confirmResign) {
      this.confirmResign = true;
      this.render();
      return;
    }
    this.confirmResign = false;
    this.cancel();
    this.busy = true;
    this.render();
    try {
      const state = await api("POST", this.path("/resign"), { seat: this.viewer });
      this.addLog(`${nameOf(this.viewer, this.ctx())} resigned`, this.viewer, true);
      this.closeSummary(false);
      this.setState(state);
      if (this.showWhy) this.loadWhy();
      this.app.refreshRecords();
    } catch (error) {
      this.app.showError(error);
    }
    this.busy = false;
    this.render();
  }

  async downloadPosition() {
    try {
      await downloadFrom(this.path("/position"), `position-seat${this.viewer}.json`);
    } catch (error) {
      this.app.showError(error);
    }
  }

  // --- allocation ----------------------------------------------------------------------
  allocHand() {
    const me = this.me();
    const used = new Set(this.alloc.piles.flat());
    return sortCards(me.hand.filter((c) => !used.has(c)));
  }

  putInPile(card, pile = null) {
    const sizes = this.state.rules.group_sizes;
    const piles = this.alloc.piles;
    for (const p of piles) {
      const at = p.indexOf(card);
      if (at >= 0) p.splice(at, 1);
    }
    let target = pile ?? this.alloc.selected;
    if (piles[target].length >= sizes[target]) target = piles.findIndex((p, g) => p.length < sizes[g]);
    if (target < 0) return;
    piles[target].push(card);
    piles[target] = sortCards(piles[target]);
    if (piles[target].length >= sizes[target]) {
      const next = piles.findIndex((p, g) => p.length < sizes[g]);
      if (next >= 0) this.alloc.selected = next;
    } else {
      this.alloc.selected = target;
    }
    this.render();
  }

  takeBack(card) {
    this.alloc.piles.forEach((p, g) => {
      const at = p.indexOf(card);
      if (at >= 0) {
        p.splice(at, 1);
        this.alloc.selected = g;
      }
    });
    this.render();
  }

  allocFull() {
    const sizes = this.state.rules.group_sizes;
    return this.alloc && this.alloc.piles.every((p, g) => p.length === sizes[g]);
  }

  useHintPiles() {
    if (!this.hint || this.hint.best.type !== "allocate" || !this.alloc) return;
    this.alloc.piles = this.hint.best.piles.map((text) => sortCards(text.split(/\s+/).filter(Boolean)));
    this.render();
  }

  // --- drawing -------------------------------------------------------------------------
  renderMissing() {
    this.root.replaceChildren();
    const panel = el("div", "panel");
    panel.append(el("h2", "", "No game here"), el("p", "", "This game is not open in the server (it may have been closed). Start a new game or resume a saved one."));
    const back = el("button", "primary", "New game");
    back.type = "button";
    back.addEventListener("click", () => this.app.go("#/"));
    panel.append(back);
    this.root.append(panel);
  }

  render() {
    if (!this.state) return;
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
    const s = this.state;
    const ctx = this.ctx();
    const board = s.board;
    this.root.dataset.phase = board.phase;
    // data-ready (for scripts and tests): "summary" while the end-of-round summary is up,
    // "human" when the viewer is to choose, "over" once the game is over or resigned.
    let ready = s.status !== "playing" ? "over"
      : s.your_turn && !this.busy && !this.thinking && !this.handover ? "human" : "";
    if (this.summary && s.status === "playing") ready = "summary";
    if (ready) this.root.dataset.ready = ready;
    else delete this.root.dataset.ready;
    if (this.waitingTrick) this.root.dataset.waiting = "trick";
    else delete this.root.dataset.waiting;

    const felt = el("div", "felt");
    felt.append(this.statusBar(ctx));
    if (this.summary && s.status === "playing") felt.append(this.summaryBox(ctx));
    const seats = el("div", "seats");
    const others = board.seats.filter((seat) => seat.seat !== this.viewer);
    seats.dataset.count = others.length;
    for (const seat of others) seats.append(seatBox(seat, board, ctx));
    felt.append(seats, skyLine(board, { ...ctx, hideWorth: this.handover }));
    const middle = el("div", "middle");
    if (board.phase === "allocate" && s.status === "playing") middle.classList.add("compact");
    const betting = board.phase === "weather" && s.your_turn && !this.handover && s.status === "playing";
    const trick = betting ? this.weatherArea() : trickArea(board, ctx, { fresh: this.fresh });
    if (this.waitingTrick && !betting) trick.append(this.nextTrickButton());
    middle.append(trick, this.adviceBox(ctx));
    felt.append(middle, this.youArea(ctx));

    const side = el("aside", "side");
    side.setAttribute("aria-label", "game panel");
    side.append(this.controlsPanel());
    if (this.showWhy) side.append(this.whyPanel(ctx));
    side.append(this.scoresPanel(ctx), this.rulesPanel(), this.logPanel());
    this.root.replaceChildren(felt, side);
    this.fresh = null;
    if (focusKey) {
      const target = this.root.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (target && !target.disabled) target.focus();
    }
  }

  statusBar(ctx) {
    const s = this.state;
    const board = s.board;
    const bar = el("div", "status-bar");
    bar.setAttribute("role", "status");
    const text = el("span", "turn-text");
    const thinking = el("span", "thinking");
    thinking.append(el("span", "spinner"), el("span", "think-text", "thinking…"));
    if (s.status === "over") {
      text.textContent = winnerText(s.result, ctx);
    } else if (s.status === "resigned") {
      const who = nameOf(s.resigned_by, ctx);
      text.textContent = `${who} resigned in round ${board.round + 1}: the game is over`;
    } else if (this.hinting) {
      text.textContent = "The engine is thinking about your move…";
      thinking.classList.add("on");
      thinking.lastChild.textContent = "hint…";
    } else if (s.your_turn && !this.handover) {
      const me = nameOf(this.viewer, ctx);
      const lead = me === "You" ? "Your turn" : `${me}: your turn`;
      if (board.phase === "allocate") text.textContent = `${lead}: split your hand into ${s.rules.group_sizes.length} piles, one per group`;
      else if (board.phase === "weather") text.textContent = `${lead}: bet on good weather, or not`;
      else text.textContent = `${lead}: play a card from pile ${board.group + 1}`;
    } else if (this.handover) {
      text.textContent = `Seat ${this.viewer}'s turn: pass the screen to seat ${this.viewer}`;
    } else if (s.next === "step") {
      const seat = board.to_move;
      const player = board.seats[seat];
      if (player && player.human) {
        text.textContent = `${nameOf(seat, ctx)}: only one card can be played, so it is played`;
        thinking.lastChild.textContent = "playing…";
      } else {
        text.textContent = `${nameOf(seat, ctx)} (${seatPlayer(player)}) to move`;
        thinking.lastChild.textContent = phaseVerb(board.phase);
      }
      if (this.thinking) thinking.classList.add("on");
    } else {
      text.textContent = "Waiting…";
    }
    const round = el("span", "round-text");
    if (s.status === "playing") {
      const tricks = board.tricks.filter((t) => t.winner !== null).length;
      round.textContent = `Round ${board.round + 1} of ${s.rules.rounds}`
        + (board.phase === "play" ? ` · trick ${Math.min(tricks + 1, board.line.length)} of ${board.line.length}` : ` · ${board.phase === "allocate" ? "splitting" : "betting"}`);
    } else if (s.status === "resigned") {
      round.textContent = `Round ${board.round + 1} of ${s.rules.rounds} · resigned`;
    } else {
      round.textContent = `${s.rules.rounds} rounds played`;
    }
    const turnDot = el("span", "turn-dot");
    if (board.to_move !== null && board.to_move !== undefined && s.status === "playing") turnDot.append(seatDot(board.to_move));
    bar.append(turnDot, text, thinking, round);
    if (s.save_error) {
      const warn = el("span", "warning-line", `not saved: ${s.save_error}`);
      warn.title = s.save_error;
      bar.append(warn);
    }
    return bar;
  }

  /** The end-of-round summary, above the next round's table. */
  summaryBox(ctx) {
    const result = this.summary;
    const box = el("section", "round-summary");
    box.id = "round-summary";
    box.setAttribute("aria-label", `end of round ${result.round + 1}`);
    const head = el("div", "summary-head");
    head.append(el("h2", "", `Round ${result.round + 1} of ${this.state.rules.rounds} is over`));
    box.append(head, roundSummaryTable(result, ctx));
    const notes = [];
    for (const line of result.seats) {
      if (!line.good_weather) continue;
      const who = nameOf(line.seat, ctx);
      if (line.held) notes.push(`${who} bet on good weather and won no sky card: +7.`);
      else {
        const n = line.face_down.length;
        notes.push(`${who} bet on good weather but won ${n} sky card${n === 1 ? "" : "s"}: `
          + `${n === 1 ? "it turns" : "they turn"} face down (−2 each).`);
      }
    }
    if (!notes.length) notes.push("Nobody bet on good weather.");
    box.append(el("p", "summary-notes", notes.join(" ")));
    const actions = el("div", "actions");
    const close = el("button", "primary", result.round + 1 < this.state.rules.rounds ? "Next round" : "Close");
    close.type = "button";
    close.id = "summary-close";
    close.dataset.focus = "summary-close";
    close.addEventListener("click", () => this.closeSummary());
    actions.append(close, el("span", "note", this.trickClick ? "" : `(closes by itself after ${SUMMARY_MS / 1000} s)`));
    box.append(actions);
    requestAnimationFrame(() => {
      if (document.activeElement === document.body || !document.activeElement) close.focus({ preventScroll: true });
    });
    return box;
  }

  nextTrickButton() {
    const button = el("button", "next-trick primary", "Next trick");
    button.type = "button";
    button.id = "next-trick";
    button.dataset.focus = "next-trick";
    button.title = this.trickClick ? "the table waits for this click after each trick" : "go on now";
    button.addEventListener("click", () => this.nextTrick());
    return button;
  }

  /** Why the AI moved: its last decision's top candidates (win chance, points, visits),
   * and its earlier decisions' once their candidates are public. */
  whyPanel(ctx) {
    const panel = el("section", "panel why-panel");
    panel.id = "why-panel";
    panel.setAttribute("aria-label", "why the AI moved");
    panel.append(el("h2", "", "Why the AI moved"));
    const latest = el("div", "why-latest");
    const w = this.lastWhy;
    if (!w) {
      latest.append(el("p", "hint-text", "After an AI seat's move: the moves it weighed, with its search's win chance, points and visits."));
    } else {
      const e = w.estimate;
      latest.append(el("div", "why-move", `${nameOf(w.seat, ctx)} ${whyVerb(w)}`));
      latest.append(el("div", "why-stats",
        `${pct(e.win_probability)} to win · ${e.expected_points.toFixed(1)} points expected · `
        + `${(e.visits ?? 0).toLocaleString("en")} of ${e.iterations.toLocaleString("en")} visits · ${seconds(e.elapsed_s)}`));
      if (w.candidates) latest.append(candidateTable(w.candidates, w.text));
      else latest.append(el("p", "hint-text", hiddenWhy(w)));
    }
    panel.append(latest);
    const earlier = (this.whyList || []).filter((d) => d.candidates && d.candidates.length);
    if (earlier.length) {
      panel.append(el("h3", "", "Earlier decisions"));
      const list = el("div", "why-list");
      for (const d of earlier.slice(-WHY_LIST).reverse()) {
        const item = el("details", "why-item");
        const summary = el("summary");
        summary.append(seatDot(d.seat), document.createTextNode(
          ` ${d.label} · ${nameOf(d.seat, ctx)}: ${moveName(d.kind, d.text)} · ${pct(d.win_probability)}`,
        ));
        item.append(summary, candidateTable(d.candidates, d.text));
        list.append(item);
      }
      panel.append(list);
    } else if (this.whyList && this.lastWhy) {
      panel.append(el("p", "hint-text", "The candidates of the AI's cards and piles show here once their round is over: before that they are cards of its hidden hand."));
    }
    return panel;
  }

  adviceBox(ctx) {
    const box = el("div", "estimate-box");
    box.append(el("div", "est-title", "The engine"));
    const est = el("div", "est-line");
    const meter = el("div", "meter");
    const fill = el("span");
    meter.append(fill);
    if (!this.showEstimate) {
      est.textContent = "AI win estimate hidden";
      meter.classList.add("hidden");
    } else if (this.estimate) {
      const e = this.estimate;
      const ci = e.ci95 ? ` (${pct(e.ci95[0])}–${pct(e.ci95[1])})` : "";
      est.textContent = `${nameOf(e.seat, ctx)} rates its chance ${pct(e.win_probability)}${ci}`;
      est.title = `its own search: ${e.iterations} iterations, ${e.elapsed_s.toFixed(2)} s; expected ${e.expected_points.toFixed(1)} points`;
      fill.style.width = pct(e.win_probability);
    } else {
      est.textContent = "The AI's win estimate shows after its moves";
      fill.style.width = "0%";
    }
    box.append(est, meter);
    const hint = el("div", "hint-box");
    hint.setAttribute("aria-live", "polite");
    if (this.hint) {
      const h = this.hint;
      const best = h.best.type === "weather" ? (h.best.good_weather ? "bet on good weather" : "no bet") : h.best_text;
      const chance = h.win_probability === null ? "the only legal move" : `${pct(h.win_probability)} to win`;
      hint.append(el("strong", "", "Hint: "), document.createTextNode(`${best} · ${chance}`));
      hint.title = `searched ${h.iterations} iterations in ${h.elapsed_s.toFixed(2)} s at the AI's level`;
      if (h.best.type === "allocate" && this.alloc) {
        const use = el("button", "", "Use these piles");
        use.type = "button";
        use.dataset.focus = "use-hint";
        use.style.marginTop = "0.3rem";
        use.addEventListener("click", () => this.useHintPiles());
        hint.append(el("br"), use);
      }
    } else {
      hint.append(el("span", "", this.hinting ? "Searching…" : "Hint: the engine's advice, at the AI's own level."));
    }
    box.append(hint);
    return box;
  }

  youArea(ctx) {
    const s = this.state;
    const board = s.board;
    const me = this.me();
    const area = el("section", "you");
    area.setAttribute("aria-label", "your hand");
    if (board.to_move === this.viewer && s.status === "playing") area.classList.add("to-move");
    const head = el("div", "you-head");
    const title = el("div", "you-title");
    title.append(seatDot(this.viewer), document.createTextNode(` ${seatName(me, ctx)}`));
    if (board.phase === "allocate" && this.alloc && s.status === "playing") {
      title.append(el("span", "prompt", "click a card to put it in the selected pile, or drag it; click a pile's card to take it back"));
    }
    head.append(title);
    if (s.status === "playing") {
      if (leaderOf(board) === this.viewer) {
        const leads = el("span", "badge first", "leads");
        leads.title = board.phase === "play" ? "you lead this trick" : "the first player of this round: you lead its first trick";
        head.append(leads);
      }
      const bet = betBadge(me, board.phase);
      if (bet) head.append(bet);
    }
    head.append(...elementBadges(me));
    if (s.status === "playing") head.append(...voidBadges(me));
    const pts = el("span", "badge score", `${me.score.total} pts`);
    head.append(pts);
    area.append(head);

    if (s.status !== "playing") {
      area.append(this.endBox(ctx));
      return area;
    }
    if (this.handover) {
      const overlay = el("div", "overlay");
      const box = el("div", "handover");
      box.append(el("div", "winner-line", `Seat ${this.viewer}'s turn`));
      box.append(el("div", "", `Pass the screen to seat ${this.viewer}; the cards show when that player asks.`));
      const show = el("button", "primary", "Show my cards");
      show.type = "button";
      show.dataset.focus = "show-cards";
      show.addEventListener("click", () => {
        this.handover = false;
        this.render();
      });
      box.append(show);
      overlay.append(box);
      area.classList.add("covered");
      area.append(overlay);
      return area;
    }
    if (board.phase === "allocate" && this.alloc) {
      area.append(...this.allocationArea());
    } else {
      area.append(this.pilesView(board.phase === "play" && s.your_turn));
      const actions = el("div", "actions");
      const note = el("span", "note");
      if (board.phase === "allocate") note.textContent = me.allocated ? "Your piles are set. The others are splitting their hands…" : "";
      else if (board.phase === "weather") note.textContent = s.your_turn ? "Bet in the middle of the table: good weather, or no bet." : "Waiting for the other bets…";
      else if (!s.your_turn) note.textContent = `Waiting for ${nameOf(board.to_move, ctx)}…`;
      else note.textContent = "Highlighted cards can be played: follow the colour led if your pile holds it.";
      actions.append(note);
      area.append(actions);
    }
    return area;
  }

  allocationArea() {
    const sizes = this.state.rules.group_sizes;
    const disabled = this.busy || this.handover;
    const hand = el("div", "hand");
    hand.setAttribute("aria-label", "cards not yet in a pile");
    for (const card of this.allocHand()) {
      const button = rainCard(card, { button: true });
      button.dataset.focus = `hand-${card}`;
      button.disabled = disabled;
      button.draggable = !disabled;
      button.setAttribute("aria-label", `${button.getAttribute("aria-label")}: put in pile ${this.alloc.selected + 1}`);
      button.addEventListener("click", () => this.putInPile(card));
      button.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData("text/plain", card);
        button.classList.add("dragging");
      });
      button.addEventListener("dragend", () => button.classList.remove("dragging"));
      hand.append(button);
    }
    hand.addEventListener("dragover", (event) => {
      event.preventDefault();
      hand.classList.add("drop-target");
    });
    hand.addEventListener("dragleave", () => hand.classList.remove("drop-target"));
    hand.addEventListener("drop", (event) => {
      event.preventDefault();
      const card = event.dataTransfer.getData("text/plain");
      if (card) this.takeBack(card);
    });

    const piles = el("div", "piles");
    sizes.forEach((size, g) => {
      const cards = this.alloc.piles[g];
      const pile = el("div", "pile");
      pile.dataset.pile = g;
      pile.dataset.focus = `pile-${g}`;
      pile.tabIndex = 0;
      pile.setAttribute("role", "button");
      pile.setAttribute("aria-pressed", String(this.alloc.selected === g));
      pile.setAttribute("aria-label", `pile ${g + 1} for group ${g + 1}: ${cards.length} of ${size} cards${this.alloc.selected === g ? ", selected" : ""}`);
      if (this.alloc.selected === g) pile.classList.add("selected");
      if (cards.length === size) pile.classList.add("full");
      pile.append(this.pileHead(g, `${cards.length}/${size}`));
      const row = el("div", "pile-cards");
      for (const card of cards) {
        const button = rainCard(card, { button: true });
        button.dataset.focus = `pile-card-${card}`;
        button.disabled = disabled;
        button.draggable = !disabled;
        button.setAttribute("aria-label", `${button.getAttribute("aria-label")} in pile ${g + 1}: take back`);
        button.addEventListener("click", (event) => {
          event.stopPropagation();
          this.takeBack(card);
        });
        button.addEventListener("dragstart", (event) => event.dataTransfer.setData("text/plain", card));
        row.append(button);
      }
      pile.append(row);
      const select = () => {
        this.alloc.selected = g;
        this.render();
      };
      pile.addEventListener("click", select);
      pile.addEventListener("keydown", (event) => {
        if (event.target === pile && (event.key === "Enter" || event.key === " ")) {
          event.preventDefault();
          select();
        }
      });
      pile.addEventListener("dragover", (event) => {
        event.preventDefault();
        pile.classList.add("drag-over");
      });
      pile.addEventListener("dragleave", () => pile.classList.remove("drag-over"));
      pile.addEventListener("drop", (event) => {
        event.preventDefault();
        event.stopPropagation();
        const card = event.dataTransfer.getData("text/plain");
        if (card) this.putInPile(card, g);
      });
      piles.append(pile);
    });

    const actions = el("div", "actions");
    const clear = el("button", "", "Clear piles");
    clear.type = "button";
    clear.dataset.focus = "clear";
    clear.disabled = disabled || this.alloc.piles.every((p) => !p.length);
    clear.addEventListener("click", () => {
      this.alloc.piles = sizes.map(() => []);
      this.alloc.selected = 0;
      this.render();
    });
    const confirm = el("button", "primary", "Confirm piles");
    confirm.type = "button";
    confirm.id = "confirm-piles";
    confirm.dataset.focus = "confirm";
    confirm.disabled = disabled || !this.allocFull();
    confirm.addEventListener("click", () => {
      if (!this.allocFull()) return;
      this.move({ type: "allocate", piles: this.alloc.piles.map((p) => p.join(" ")) });
    });
    const note = el("span", "note", this.allocFull() ? "Your piles are ready." : `${this.allocHand().length} card(s) still to place; pile ${this.alloc.selected + 1} is selected.`);
    actions.append(note, el("span", "spacer"), clear, confirm);
    return [hand, piles, actions];
  }

  pileHead(g, countText) {
    const head = el("div", "pile-head");
    const label = el("span", "", `Pile ${g + 1}`);
    const sky = el("span", "pile-sky");
    sky.title = `plays the tricks for group ${g + 1}`;
    for (const item of this.state.board.line.filter((i) => i.group === g)) sky.append(skyCard(item.card, { small: true }));
    head.append(label, sky, el("span", "pile-count", countText));
    return head;
  }

  /** The viewer's piles after allocating; in its turn to play, the legal cards are buttons. */
  pilesView(playable) {
    const s = this.state;
    const board = s.board;
    const me = this.me();
    const sizes = s.rules.group_sizes;
    const piles = el("div", "piles");
    const legal = new Set(playable && Array.isArray(s.legal) ? s.legal.filter((c) => typeof c === "string") : []);
    const suggested = this.hint && this.hint.best.type === "play" ? this.hint.best.card : null;
    sizes.forEach((size, g) => {
      const cards = me.piles ? me.piles[g] : [];
      const pile = el("div", "pile");
      pile.dataset.pile = g;
      if (board.phase === "play") {
        if (board.group === g) pile.classList.add("active");
        else if (board.group > g) pile.classList.add("spent");
        else pile.classList.add("inactive");
      }
      pile.append(this.pileHead(g, board.phase === "play" ? `${cards.length} left` : `${cards.length} cards`));
      const row = el("div", "pile-cards");
      for (const card of cards) {
        if (board.phase === "play" && board.group === g && playable) {
          const button = rainCard(card, { button: true });
          button.dataset.focus = `play-${card}`;
          const ok = legal.has(card) && !this.busy && !this.handover;
          button.disabled = !ok;
          if (legal.has(card)) button.classList.add("legal");
          if (card === suggested) button.classList.add("suggested");
          button.setAttribute("aria-label", `${button.getAttribute("aria-label")}${legal.has(card) ? ": play it" : ": cannot be played now"}`);
          button.addEventListener("click", () => this.move({ type: "play", card }));
          row.append(button);
        } else {
          row.append(rainCard(card));
        }
      }
      pile.append(row);
      piles.append(pile);
    });
    if (!me.piles && me.hand) {
      const hand = el("div", "hand");
      for (const card of me.hand) hand.append(rainCard(card));
      return hand;
    }
    return piles;
  }

  weatherArea() {
    const area = el("div", "trick-area weather-area");
    area.append(el("div", "trick-title", "Good weather? Every seat bets in secret; the bets show once all have bet."), this.weatherChoice());
    return area;
  }

  weatherChoice() {
    const box = el("div", "weather-choice");
    const disabled = this.busy || this.handover;
    const suggested = this.hint && this.hint.best.type === "weather" ? this.hint.best.good_weather : null;
    const yes = el("button", "yes");
    yes.type = "button";
    yes.id = "bet-yes";
    yes.dataset.focus = "bet-yes";
    yes.disabled = disabled;
    const yesText = el("span");
    yesText.append(el("strong", "", "Good weather"), el("small", "", "Bet you win no sky card this round: +7 if you win none, else every card you win this round turns face down (−2 each)."));
    yes.append(symbol("sun", "sym"), yesText);
    yes.addEventListener("click", () => this.move({ type: "weather", good_weather: true }));
    const no = el("button", "no");
    no.type = "button";
    no.id = "bet-no";
    no.dataset.focus = "bet-no";
    no.disabled = disabled;
    const noText = el("span");
    noText.append(el("strong", "", "No bet"), el("small", "", "Play the round normally: the sky cards you win count for your score."));
    no.append(symbol("cloud", "sym"), noText);
    no.addEventListener("click", () => this.move({ type: "weather", good_weather: false }));
    if (suggested === true) yes.classList.add("suggested");
    if (suggested === false) no.classList.add("suggested");
    box.append(yes, no);
    return box;
  }

  endBox(ctx) {
    const s = this.state;
    const box = el("div", "end-box");
    box.id = "end-box";
    const line = el("div", "winner-line");
    line.append(symbol("star", "sym"), el("span", "", s.status === "resigned" ? `${nameOf(s.resigned_by, ctx)} resigned` : winnerText(s.result, ctx)));
    box.append(line);
    if (s.result) {
      const panel = el("div", "panel");
      panel.append(scoreTable(s.board.seats, ctx, { result: s.result, labels: true }));
      box.append(panel);
    }
    const results = s.board.round_results || [];
    const last = results[results.length - 1];
    if (last && s.status === "over") {
      const panel = el("div", "panel round-summary last-round");
      panel.append(el("h2", "", `Round ${last.round + 1}`), roundSummaryTable(last, ctx));
      box.append(panel);
    }
    const actions = el("div", "actions");
    const link = el("a", "button-link", "Download the record");
    link.href = `/api/games/${encodeURIComponent(this.gameId)}/record`;
    link.id = "record-link";
    link.setAttribute("download", `${s.record_id || "csl-game"}.json`);
    actions.append(link);
    if (s.record_id) {
      const review = el("button", "primary", "Review this game");
      review.type = "button";
      review.id = "review-game";
      review.addEventListener("click", () => this.app.go(`#/review/${encodeURIComponent(s.record_id)}`));
      actions.append(review);
      actions.append(el("span", "note", `Saved as ${s.record_id}`));
    }
    const again = el("button", "", "New game");
    again.type = "button";
    again.addEventListener("click", () => this.app.go("#/"));
    actions.append(again);
    box.append(actions);
    return box;
  }

  controlsPanel() {
    const s = this.state;
    const panel = el("section", "panel");
    panel.setAttribute("aria-label", "game controls");
    panel.append(el("h2", "", "Controls"));
    const row = el("div", "side-controls");
    const playing = s.status === "playing";
    const hint = el("button", "", "Hint");
    hint.type = "button";
    hint.id = "hint-button";
    hint.dataset.focus = "hint";
    hint.title = "the engine's advice, searched at the AI's own level";
    hint.disabled = !playing || !s.your_turn || this.busy || this.handover;
    hint.addEventListener("click", () => this.askHint());
    const undo = el("button", "", "Undo");
    undo.type = "button";
    undo.id = "undo-button";
    undo.dataset.focus = "undo";
    undo.title = s.takebacks ? "take back your last choice" : "takebacks are off in this game";
    undo.disabled = !playing || !s.can_undo || this.busy || this.thinking;
    undo.addEventListener("click", () => this.undo());
    const resign = el("button", "danger", this.confirmResign ? "Really resign?" : "Resign");
    resign.type = "button";
    resign.id = "resign-button";
    resign.dataset.focus = "resign";
    resign.disabled = !playing || this.busy;
    resign.addEventListener("click", () => this.resign());
    row.append(hint, undo, resign);
    if (this.confirmResign) {
      const cancel = el("button", "", "Keep playing");
      cancel.type = "button";
      cancel.dataset.focus = "keep";
      cancel.addEventListener("click", () => {
        this.confirmResign = false;
        this.render();
      });
      row.append(cancel);
    }
    const position = el("button", "", "Position JSON");
    position.type = "button";
    position.title = "download this view as a position for csl best-move";
    position.dataset.focus = "position";
    position.addEventListener("click", () => this.downloadPosition());
    row.append(position);
    panel.append(row);
    const toggle = el("label", "toggle");
    const box = el("input");
    box.type = "checkbox";
    box.id = "estimate-toggle";
    box.dataset.focus = "estimate-toggle";
    box.checked = this.showEstimate;
    box.addEventListener("change", () => {
      this.showEstimate = box.checked;
      store(ESTIMATE_KEY, box.checked ? "on" : "off");
      this.render();
    });
    toggle.append(box, document.createTextNode("Show the AI's win estimate"));
    panel.append(toggle, this.paceControls());
    const whyToggle = el("label", "toggle");
    const why = el("input");
    why.type = "checkbox";
    why.id = "why-toggle";
    why.dataset.focus = "why-toggle";
    why.checked = this.showWhy;
    why.addEventListener("change", () => {
      this.showWhy = why.checked;
      store(WHY_KEY, why.checked ? "on" : "off");
      if (this.showWhy) this.loadWhy();
      this.render();
    });
    whyToggle.append(why, document.createTextNode("Show why the AI moved (its candidates)"));
    panel.append(whyToggle);
    return panel;
  }

  /** The AI's pace (remembered), and whether to wait for a click after each trick. */
  paceControls() {
    const box = el("div", "pace-row");
    const label = el("label", "field pace-field");
    label.append(el("span", "", "AI pace"));
    const select = el("select");
    select.id = "pace-select";
    select.dataset.focus = "pace";
    select.setAttribute("aria-label", "AI pace");
    for (const [name, pace] of Object.entries(PACES)) {
      const option = el("option", "", pace.label);
      option.value = name;
      select.append(option);
    }
    select.value = this.pace;
    select.title = "the pause after each AI move, and after each trick";
    select.addEventListener("change", () => {
      this.pace = select.value;
      if (select.value !== "custom") store(PACE_KEY, select.value);
      this.render();
    });
    label.append(select);
    const click = el("label", "toggle");
    const box2 = el("input");
    box2.type = "checkbox";
    box2.id = "trick-click";
    box2.dataset.focus = "trick-click";
    box2.checked = this.trickClick;
    box2.addEventListener("change", () => {
      this.trickClick = box2.checked;
      store(TRICK_CLICK_KEY, box2.checked ? "on" : "off");
      if (!this.trickClick && this.advance) this.advance();
      this.render();
    });
    click.append(box2, document.createTextNode("Wait for my click after each trick"));
    box.append(label, click);
    return box;
  }

  scoresPanel(ctx) {
    const panel = el("section", "panel");
    panel.append(el("h2", "", "Scores"));
    panel.append(scoreTable(this.state.board.seats, ctx, { result: this.state.result }));
    if (this.state.status === "playing") {
      panel.append(el("p", "rule-note", "×n: elements held face up. Points are counted at the end of each round, when the good weather bets settle."));
    }
    return panel;
  }

  rulesPanel() {
    const panel = el("section", "panel");
    const details = el("details");
    details.open = true;
    const summary = el("summary", "", "Scoring of this game");
    details.append(summary, scoringRules(this.state.rules));
    panel.append(details);
    return panel;
  }

  logPanel() {
    const panel = el("section", "panel");
    panel.append(el("h2", "", "Moves"));
    const list = el("ol", "log");
    list.setAttribute("aria-label", "moves so far");
    for (const entry of this.log.slice(-60)) {
      const item = el("li", entry.strong ? "strong" : "");
      if (entry.seat !== null && entry.seat !== undefined) item.append(seatDot(entry.seat), document.createTextNode(" "));
      item.append(document.createTextNode(entry.text));
      list.append(item);
    }
    if (!this.log.length) list.append(el("li", "hint-text", "No moves yet."));
    panel.append(list);
    requestAnimationFrame(() => {
      list.scrollTop = list.scrollHeight;
    });
    return panel;
  }
}

function skyName(text) {
  if (!text) return "sky card";
  if (text === "*") return "shooting star";
  const kind = { C: "candy", S: "spider", L: "leopard" }[text[0]];
  return text[1] === "2" ? `double ${kind}` : kind;
}

function phaseVerb(phase) {
  if (phase === "allocate") return "splitting its hand…";
  if (phase === "weather") return "deciding its bet…";
  return "thinking…";
}

/** A search's time: "4 ms", "1.25 s". */
function seconds(s) {
  return s < 0.1 ? `${Math.max(1, Math.round(s * 1000))} ms` : `${s.toFixed(2)} s`;
}

/** What an AI decision did, in words: "played R5", "split its hand", "made no bet". */
function whyVerb(step) {
  if (step.kind === "play") return `played ${step.text}`;
  if (step.kind === "allocate") return step.text ? `split its hand: ${step.text}` : "split its hand (its piles are secret)";
  if (!step.move) return "made a secret bet";
  return step.move.good_weather ? "bet on good weather" : "made no bet";
}

/** Why a decision's candidates are not listed yet. */
function hiddenWhy(step) {
  if (step.kind === "weather") return "The bets are secret until every seat has bet: its candidates show then.";
  if (step.kind === "allocate") return "Its other splits would show its hand: they show here when the round is over.";
  return "Its other candidates are cards it still holds: they show here when the round is over.";
}

/** A move's text for people: weather bets in words. */
function moveName(kind, text) {
  if (kind === "weather") return text === "yes" ? "good weather" : text === "no" ? "no bet" : text;
  return text;
}

/** The candidates of a decision: move, win chance, expected points, visits; the one chosen marked. */
function candidateTable(candidates, chosen) {
  const table = el("table", "cands");
  const head = el("tr");
  for (const [text, cls] of [["move", ""], ["win", "num"], ["points", "num"], ["visits", "num"]]) head.append(el("th", cls, text));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const c of candidates) {
    const row = el("tr");
    if (chosen !== null && chosen !== undefined && c.text === chosen) row.classList.add("chosen");
    const kind = c.move.type === "weather" ? "weather" : c.move.type;
    const move = el("td", "move", moveName(kind, c.text));
    move.title = c.text;
    const win = el("td", "num", pct(c.win_probability));
    if (c.ci95) win.title = `95% interval ${pct(c.ci95[0])}–${pct(c.ci95[1])}`;
    row.append(move, win, el("td", "num", c.expected_points.toFixed(1)), el("td", "num", c.visits.toLocaleString("en")));
    body.append(row);
  }
  table.append(thead, body);
  return table;
}
