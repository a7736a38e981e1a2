// The Candy Lab table: a game against the engine, drawn from the server's JSON alone.
//
// Everything goes through /api/candylab/ (docs/web-api.md, "Candy Lab") with the same
// client as the main page (/static/api.js: JSON content type, same-origin cookies, so the
// server's token cookie travels with every request). The page shows only what the server
// sends for its seat: its own hand, the others' hand sizes.

import { api, hideError, showError, sleep } from "/static/api.js";

/** Each effect symbol: a short mark and word for the bar, and what it does. */
const EFFECTS = {
  none: { mark: "", word: "", title: "no effect" },
  draw: { mark: "+", word: "draw", title: "draw a card: the top face-down card or a face-up one" },
  discard_hand: { mark: "✕", word: "discard", title: "a random card of another player's hand goes to the box" },
  return_bar: { mark: "↩", word: "return", title: "another player's bar of the same colour goes back to an end of the belt" },
  discard_played: { mark: "⤺", word: "unplay", title: "the last card another player played goes to the box" },
  swap_hands: { mark: "⇄", word: "swap", title: "swap hands with another player (with 2 players: the third hand)" },
};

const PHASE_HELP = {
  main: "Play an order card and take its run of bars off the belt (A), give bars back to draw cards (B), or draw one card (C).",
  effects: "Apply the effects of the bars you just took, one at a time, in the order you choose.",
  returning: "Give back another bar (at most 3 in all), or stop.",
  drawing: "Draw your cards: one for each point of the bars you gave back.",
};

const KIND_TITLES = {
  play: "Play an order card",
  give_back: "Give back a bar",
  stop: "Stop giving back",
  draw: "Draw a card",
  effect: "Apply an effect",
};

const POLL_MS = 400;

function el(tag, className = "", text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null) node.textContent = text;
  return node;
}

function seatName(state, seat) {
  if (seat === state.seat) return `Seat ${seat} (you)`;
  return state.agents[seat] === "human" ? `Seat ${seat}` : `Seat ${seat} (AI)`;
}

/** A candy bar: its colour, value and effect mark, with the whole of it for screen readers. */
function barNode(bar, tag = "span", position = null) {
  const effect = EFFECTS[bar.effect] || { mark: "?", word: bar.effect, title: bar.effect };
  const node = el(tag, `bar c-${bar.colour}`);
  const spoken = `${bar.colour} bar, value ${bar.value}${bar.effect === "none" ? "" : `, ${effect.word} effect`}`;
  node.title = `${bar.colour} ${bar.value}: ${effect.title}`;
  if (position !== null) {
    node.append(el("span", "pos", String(position)));
    node.setAttribute("aria-label", `position ${position}: ${spoken}`);
  } else {
    node.setAttribute("aria-label", spoken);
  }
  node.append(el("span", "value", String(bar.value)));
  if (effect.word) node.append(el("span", "effect", `${effect.mark} ${effect.word}`));
  node.dataset.bar = String(bar.id);
  return node;
}

/** An order card: its colours as a row of chips, its letters and points. */
function orderNode(order, tag = "li") {
  const node = el(tag, "order");
  node.setAttribute("aria-label", `order #${order.id}: ${order.colours.join(", ")}, ${order.points} points`);
  const chips = el("span", "chips");
  chips.setAttribute("aria-hidden", "true");
  for (const colour of order.colours) chips.append(el("span", `chip c-${colour}`));
  node.append(chips, el("span", "order-text", `#${order.id} ${order.text}`), el("span", "points", `${order.points} pt`));
  node.dataset.order = String(order.id);
  return node;
}

class CandyLabPage {
  constructor() {
    const params = new URLSearchParams(window.location.search);
    this.ai = params.get("ai");
    this.gameId = params.get("game");
    this.state = null;
    this.sending = false;
    this.table = document.getElementById("lab-table");
  }

  async start() {
    document.getElementById("error-close").addEventListener("click", () => this.hideError());
    document.getElementById("lab-new-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.newGame();
    });
    if (this.ai) {
      // ?ai=SPEC (scripts and tests): an AI spec the server accepts, offered as a level.
      const level = document.getElementById("lab-level");
      const option = el("option", "", `custom (${this.ai})`);
      option.value = "custom";
      level.append(option);
      level.value = "custom";
    }
    if (this.gameId) {
      try {
        this.show(await api("GET", `/candylab/games/${encodeURIComponent(this.gameId)}`));
        this.pollWhileThinking();
      } catch (error) {
        this.showError(error);
      }
    }
  }

  showError(error) {
    showError(error);
  }

  hideError() {
    hideError();
  }

  async newGame() {
    const button = document.getElementById("lab-start");
    const level = document.getElementById("lab-level").value;
    const body = { players: Number(document.getElementById("lab-players").value), humans: [0] };
    if (level === "custom") body.ai = this.ai;
    else body.level = level;
    button.disabled = true;
    this.hideError();
    try {
      const state = await api("POST", "/candylab/games", body);
      this.gameId = state.id;
      const url = new URL(window.location.href);
      url.searchParams.set("game", state.id);
      window.history.replaceState(null, "", url);
      this.show(state);
    } catch (error) {
      this.showError(error);
    } finally {
      button.disabled = false;
    }
  }

  async play(move) {
    if (this.sending || !this.state) return;
    this.sending = true;
    this.hideError();
    this.table.removeAttribute("data-ready");
    for (const button of document.querySelectorAll("#lab-moves button")) button.disabled = true;
    this.setStatus("The AI seats are moving…", true);
    try {
      this.show(await api("POST", `/candylab/games/${this.state.id}/move`, { seat: this.state.seat, move }));
    } catch (error) {
      this.showError(error);
      try {
        this.show(await api("GET", `/candylab/games/${this.state.id}?seat=${this.state.seat}`));
      } catch (again) {
        this.showError(again);
      }
    } finally {
      this.sending = false;
    }
    this.pollWhileThinking();
  }

  /** A game opened while its AI seats move (a reload): ask again until they are done. */
  async pollWhileThinking() {
    while (this.state && this.state.thinking && !this.sending) {
      await sleep(POLL_MS);
      try {
        this.show(await api("GET", `/candylab/games/${this.state.id}?seat=${this.state.seat}`));
      } catch (error) {
        this.showError(error);
        return;
      }
    }
  }

  setStatus(text, thinking = false) {
    const status = document.getElementById("lab-status");
    status.textContent = text;
    status.classList.toggle("thinking-now", thinking);
  }

  show(state) {
    this.state = state;
    this.table.classList.remove("hidden");
    this.table.dataset.phase = state.phase;
    if (state.over) this.table.dataset.ready = "over";
    else if (state.your_turn) this.table.dataset.ready = "human";
    else this.table.removeAttribute("data-ready");
    this.drawStatus(state);
    this.drawBelt(state);
    this.drawCards(state);
    this.drawMoves(state);
    this.drawSeats(state);
    this.drawLog(state);
    this.drawEnd(state);
  }

  drawStatus(state) {
    if (state.over) {
      this.setStatus(`The game is over (${state.end}) after ${state.turn + 1} turns.`);
    } else if (state.your_turn) {
      this.setStatus(`Turn ${state.turn + 1}: your move (${state.phase}).`);
    } else if (state.thinking) {
      this.setStatus(`Turn ${state.turn + 1}: ${seatName(state, state.current)} is thinking…`, true);
    } else {
      this.setStatus(`Turn ${state.turn + 1}: ${seatName(state, state.current)} is to move.`);
    }
  }

  drawBelt(state) {
    const belt = document.getElementById("lab-belt");
    belt.replaceChildren(...state.belt.map((bar, i) => barNode(bar, "li", i)));
    if (!state.belt.length) belt.append(el("li", "hint-text", "The belt is empty."));
  }

  drawCards(state) {
    const faceUp = document.getElementById("lab-face-up");
    faceUp.replaceChildren(
      ...state.face_up.map((order, slot) => {
        const node = order ? orderNode(order) : el("li", "order empty", "empty slot");
        node.prepend(el("span", "slot", `up${slot}`));
        return node;
      }),
    );
    const extra = state.third_hand_size ? `; the third hand holds ${state.third_hand_size}` : "";
    document.getElementById("lab-pile").textContent =
      `Face-down pile: ${state.pile_size} cards; box: ${state.box_size}${extra}.`;
    const hand = document.getElementById("lab-hand");
    const mine = state.hands[state.seat].cards || [];
    hand.replaceChildren(...mine.map((order) => orderNode(order)));
    if (!mine.length) hand.append(el("li", "hint-text", "No cards in your hand."));
  }

  /** The legal moves as buttons, grouped by kind; a card's run lights up on the belt. */
  drawMoves(state) {
    const box = document.getElementById("lab-moves");
    const help = document.getElementById("lab-phase-help");
    box.replaceChildren();
    help.textContent = state.your_turn ? PHASE_HELP[state.phase] || "" : "";
    if (!state.your_turn) {
      box.append(el("p", "hint-text", state.over ? "No more moves: the game is over." : "Wait for your turn."));
      return;
    }
    const groups = new Map();
    for (const move of state.legal_moves) {
      if (!groups.has(move.kind)) groups.set(move.kind, []);
      groups.get(move.kind).push(move);
    }
    for (const [kind, moves] of groups) {
      const group = el("div", "move-group");
      group.setAttribute("role", "group");
      const title = el("h3", "", KIND_TITLES[kind] || kind);
      title.id = `moves-${kind}`;
      group.setAttribute("aria-labelledby", title.id);
      const buttons = el("div", "move-buttons");
      for (const move of moves) {
        const button = el("button", "move", move.text);
        button.type = "button";
        button.dataset.move = String(move.move);
        button.addEventListener("click", () => this.play(move.move));
        if (move.run) {
          const light = (on) => this.lightRun(move.run, on);
          button.addEventListener("mouseenter", () => light(true));
          button.addEventListener("mouseleave", () => light(false));
          button.addEventListener("focus", () => light(true));
          button.addEventListener("blur", () => light(false));
        }
        buttons.append(button);
      }
      group.append(title, buttons);
      box.append(group);
    }
  }

  lightRun(run, on) {
    const bars = document.querySelectorAll("#lab-belt .bar");
    for (const position of run) {
      if (bars[position]) bars[position].classList.toggle("in-run", on);
    }
  }

  drawSeats(state) {
    const body = document.querySelector("#lab-seats tbody");
    body.replaceChildren();
    for (let seat = 0; seat < state.players; seat += 1) {
      const row = el("tr", seat === state.current ? "to-move" : "");
      row.dataset.seat = String(seat);
      const who = el("th", "who", seatName(state, seat));
      who.scope = "row";
      if (state.golden === seat) who.append(el("span", "golden", " ★ Golden Sugar"));
      const hand = el("td", "hand-size", `${state.hands[seat].size} cards`);
      const bars = el("td", "bars");
      const list = el("div", "bar-list");
      for (const bar of state.bars[seat]) list.append(barNode(bar));
      if (state.bars[seat].length) bars.append(list);
      else bars.textContent = "none";
      const stack = el("td", "stack");
      const top = state.stacks[seat].top;
      if (top) stack.append(orderNode(top, "span"), el("span", "count", ` ×${state.stacks[seat].count}`));
      else stack.textContent = "none";
      const score = el("td", "score", String(state.scores[seat]));
      score.dataset.seat = String(seat);
      row.append(who, hand, bars, stack, score);
      body.append(row);
    }
  }

  /** The recent moves, newest first, numbered as in the whole game. */
  drawLog(state) {
    const log = document.getElementById("lab-log");
    log.reversed = true;
    log.start = state.event_count;
    const items = state.events
      .slice()
      .reverse()
      .map((event) => {
        let text = `${seatName(state, event.seat)}: ${event.text}`;
        if (event.card) text += ` (card: #${event.card.id} ${event.card.text})`;
        if (event.turned_up) text += ` (turned up #${event.turned_up.id} ${event.turned_up.text})`;
        return el("li", event.seat === state.seat ? "mine" : "", text);
      });
    log.replaceChildren(...items);
    if (!items.length) log.append(el("li", "hint-text", "No moves yet."));
  }

  drawEnd(state) {
    const end = document.getElementById("lab-end");
    end.classList.toggle("hidden", !state.over);
    if (!state.over) return;
    const names = state.winners.map((seat) => seatName(state, seat));
    const scores = state.scores.map((points, seat) => `${seatName(state, seat)} ${points}`).join(", ");
    document.getElementById("lab-winners").textContent =
      `${names.join(" and ")} ${names.length > 1 ? "win" : "wins"}. Scores: ${scores}.`;
    const record = document.getElementById("lab-record");
    if (state.record_id) record.textContent = `Saved as ${state.record_id}.json in the records folder (seed ${state.seed}).`;
    else if (state.save_error) record.textContent = `The record could not be saved: ${state.save_error}`;
    else record.textContent = "";
  }
}

new CandyLabPage().start();
