// Drawing a Board (docs/web-api.md) on the felt: seats, the sky line in its groups, the
// trick, the score table. Shared by the live table and the review.

import { el, rainCard, skyCard, skyWords, symbol, COLOUR_WORDS, KIND_LABELS } from "./cards.js";

export const KIND_ORDER = ["candy", "spider", "leopard", "star"];

/** A seat as the page names it: "You" (the one human), "Seat 2 (you)" at a hot seat, "Seat 1". */
export function seatName(seat, ctx) {
  if (ctx.viewer === seat.seat && ctx.soloHuman) return "You";
  if (seat.human) return ctx.viewer === seat.seat ? `Seat ${seat.seat} (you)` : `Seat ${seat.seat}`;
  return `Seat ${seat.seat}`;
}

/** A short description of a seat's player: "AI · fast", "human". */
export function seatPlayer(seat) {
  if (seat.human) return "human";
  if (seat.level) return `AI · ${seat.level}`;
  return `AI · ${String(seat.agent).replace(/^ismcts:/, "")}`;
}

export function seatDot(seat) {
  return el("span", `seat-dot s${seat}`);
}

/** The text name of a seat for messages. */
export function nameOf(seatIndex, ctx) {
  const seat = ctx.seats ? ctx.seats[seatIndex] : null;
  return seat ? seatName(seat, ctx) : `Seat ${seatIndex}`;
}

/**
 * Face-up elements by kind as the table stands: those of the finished rounds (`elements`,
 * what the score counts) and those won this round so far (`round_elements`).
 */
export function liveElements(seat) {
  const counts = {};
  for (const kind of KIND_ORDER) counts[kind] = seat.elements[kind] + seat.round_elements[kind];
  return counts;
}

/** Badges of face-up elements by kind ("3 candies") and face-down cards. */
export function elementBadges(seat) {
  const out = [];
  const elements = liveElements(seat);
  for (const kind of KIND_ORDER) {
    const n = elements[kind];
    if (!n) continue;
    const badge = el("span", `badge el-${kind}`);
    badge.title = `${n} ${KIND_LABELS[kind].toLowerCase()} element${n === 1 ? "" : "s"}`;
    badge.append(symbol(kind, "sym"), document.createTextNode(String(n)));
    out.push(badge);
  }
  const down = (seat.taken || []).filter((t) => !t.face_up).length;
  if (down) {
    const badge = el("span", "badge", `${down} face down`);
    badge.title = `${down} sky card(s) face down: −2 each`;
    out.push(badge);
  }
  if (seat.good_weather_cards) {
    const badge = el("span", "badge");
    badge.title = `${seat.good_weather_cards} honoured good weather bet(s): +7 each`;
    badge.append(symbol("sun", "sym"), document.createTextNode(`×${seat.good_weather_cards}`));
    out.push(badge);
  }
  return out;
}

/**
 * The bet badge of a seat for the current round, or null when nothing is known yet. In a
 * game that is over (or resigned) nobody is still splitting or deciding.
 */
export function betBadge(seat, phase, { over = false } = {}) {
  if (over && (phase === "allocate" || (phase === "weather" && seat.good_weather === null))) return null;
  if (phase === "allocate") {
    return seat.allocated ? el("span", "badge ready", "piles ready") : el("span", "badge", "splitting…");
  }
  if (seat.good_weather === true) {
    const badge = el("span", "badge bet");
    badge.append(symbol("sun", "sym"), document.createTextNode("good weather"));
    badge.title = "bet on good weather: wants to win no sky card this round";
    return badge;
  }
  if (seat.good_weather === false) return el("span", "badge bet-no", "no bet");
  if (phase === "weather") return el("span", seat.declared ? "badge ready" : "badge", seat.declared ? "has bet" : "deciding…");
  return null;
}

/** Void badges: colours a seat showed it lacks, per pile of the current round. */
export function voidBadges(seat) {
  const out = [];
  (seat.voids || []).forEach((colours, g) => {
    for (const c of colours) {
      const badge = el("span", `badge void ${c}`, `no ${COLOUR_WORDS[c]} in pile ${g + 1}`);
      badge.title = `Seat ${seat.seat} showed its pile ${g + 1} holds no ${COLOUR_WORDS[c]}`;
      out.push(badge);
    }
  });
  return out;
}

/** Sky cards a seat won in one round (the current one by default), small. */
export function wonCards(seat, round) {
  const box = el("div", "won");
  for (const t of seat.taken || []) {
    if (round !== null && t.round !== round) continue;
    box.append(skyCard(t.card, { small: true, faceDown: !t.face_up }));
  }
  return box;
}

/**
 * A seat box for the top of the felt. `open` (review) draws the seat's piles face up;
 * otherwise the piles are card backs with their counts.
 */
export function seatBox(seat, board, ctx, { open = false } = {}) {
  const box = el("div", `seat s${seat.seat}`);
  box.dataset.seat = seat.seat;
  if (board.to_move === seat.seat) box.classList.add("to-move");
  const head = el("div", "seat-head");
  const who = el("span", "who");
  who.append(seatDot(seat.seat), document.createTextNode(` ${seatName(seat, ctx)}`));
  const player = el("span", "badge player", seatPlayer(seat));
  player.title = seat.agent;
  head.append(who, player);
  const leads = leaderOf(board);
  if (leads === seat.seat && !ctx.over) {
    const badge = el("span", "badge first", "leads");
    badge.title = board.phase === "play"
      ? "leads this trick (the winner of a trick leads the next)"
      : "the first player of this round: leads its first trick";
    head.append(badge);
  }
  const score = el("span", "badge score", `${seat.score ? seat.score.total : 0} pts`);
  score.title = "points as it stands";
  head.append(score);
  box.append(head);

  const info = el("div", "seat-info");
  const bet = betBadge(seat, board.phase, { over: ctx.over });
  if (bet) info.append(bet);
  info.append(...elementBadges(seat));
  if (board.phase === "play") info.append(...voidBadges(seat));
  box.append(info);

  const bottom = el("div", "seat-bottom");
  if (open && seat.piles) {
    bottom.append(openPiles(seat, board));
  } else if (open && seat.hand) {
    const row = el("div", "mini-hand");
    for (const c of seat.hand) row.append(rainCard(c, { small: true }));
    bottom.append(row);
  } else if (!open && seat.hidden_counts && seat.hidden_counts.some((n) => n > 0)) {
    const row = el("div", "backs");
    seat.hidden_counts.forEach((n, g) => {
      const pile = el("span", "back-pile");
      pile.title = `${n} card(s) left in pile ${g + 1}`;
      for (let i = 0; i < n; i += 1) pile.append(rainCard("", { small: true, faceDown: true }));
      if (n === 0) pile.append(el("span", "empty-pile", "–"));
      row.append(pile);
    });
    bottom.append(row);
  }
  bottom.append(wonCards(seat, board.round));
  box.append(bottom);
  return box;
}

/** The seat that leads the trick in progress (or the next one); the round's first player
 * before the tricks begin. */
export function leaderOf(board) {
  if (board.phase === "play") return board.trick ? board.trick.leader : board.leader;
  if (board.phase === "allocate" || board.phase === "weather") return board.first_player;
  return null;
}

function openPiles(seat, board) {
  const row = el("div", "open-piles");
  seat.piles.forEach((pile, g) => {
    const part = el("span", "open-pile");
    if (board.group === g) part.classList.add("active");
    part.title = `pile ${g + 1}`;
    if (!pile.length) part.append(el("span", "empty-pile", "–"));
    for (const c of pile) part.append(rainCard(c, { small: true }));
    row.append(part);
  });
  return row;
}

function worthLine(item) {
  const box = el("div", "worth");
  if (item.worth === 0) box.classList.add("nil");
  if (item.worth_text) {
    box.title = item.worth_text;
    const match = /^(.*?):?\s*([+\u2212-]?\s*\d+)\s*$/.exec(item.worth_text);
    if (match) {
      const value = el("b", item.worth > 0 ? "plus" : item.worth < 0 ? "minus" : "", match[2].replace("-", "−"));
      box.append(value, el("span", "why", match[1]));
    } else {
      box.append(el("span", "why", item.worth_text));
    }
  } else if (item.worth !== null && item.worth !== undefined) {
    const sign = item.worth > 0 ? "+" : "";
    box.append(el("b", item.worth > 0 ? "plus" : item.worth < 0 ? "minus" : "", `${sign}${item.worth}`));
  }
  return box;
}

/** The round's sky line in its groups: each card, who took it, or its worth to the viewer. */
export function skyLine(board, ctx) {
  const wrap = el("div", "sky-line");
  if (ctx.review) wrap.classList.add("no-worth");
  const groups = [];
  const currentIndex = board.trick ? board.trick.index : nextTrickIndex(board);
  for (const item of board.line) {
    if (!groups[item.group]) groups[item.group] = [];
    groups[item.group].push(item);
  }
  groups.forEach((items, g) => {
    const box = el("div", "group");
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", `group ${g + 1}`);
    if (board.phase === "play" && board.group === g) box.classList.add("active");
    if (items.every((i) => i.taken_by !== null)) box.classList.add("done");
    box.append(el("div", "group-title", `Group ${g + 1} · pile ${g + 1}`));
    const row = el("div", "group-cards");
    for (const item of items) {
      const slot = el("div", "sky-slot");
      slot.dataset.index = item.index;
      if (item.taken_by !== null) slot.classList.add("taken");
      if (board.phase === "play" && item.index === currentIndex) slot.classList.add("current");
      const card = skyCard(item.card);
      slot.append(card);
      if (item.taken_by !== null) {
        const tag = el("span", `taker s${item.taken_by}`, nameOf(item.taken_by, ctx));
        tag.title = `${nameOf(item.taken_by, ctx)} took this ${skyWords(item.card)}`;
        slot.append(tag, el("div", "worth"));
      } else {
        slot.append(el("span", "taker"), ctx.hideWorth ? el("div", "worth") : worthLine(item));
      }
      row.append(slot);
    }
    box.append(row);
    wrap.append(box);
  });
  return wrap;
}

function nextTrickIndex(board) {
  return board.tricks ? board.tricks.filter((t) => t.winner !== null).length : 0;
}

/**
 * The trick in the middle of the table: the one in progress, else the last one won (this
 * round, or the last of the previous round). Slots are reserved for every seat, in play
 * order from the leader, so nothing moves as cards arrive.
 */
export function trickArea(board, ctx, { fresh = null } = {}) {
  const area = el("div", "trick-area");
  area.setAttribute("aria-live", "polite");
  let trick = board.trick;
  let past = false;
  if (!trick && board.tricks && board.tricks.length) {
    trick = board.tricks[board.tricks.length - 1];
    past = true;
  } else if (!trick && board.past_rounds && board.past_rounds.length) {
    const last = board.past_rounds[board.past_rounds.length - 1];
    trick = last.tricks[last.tricks.length - 1] || null;
    past = true;
  }
  const n = board.seats.length;
  const title = el("div", "trick-title");
  const cards = el("div", "trick-cards");
  if (board.phase === "play" && !board.trick) {
    const leader = board.leader;
    title.textContent = `${nameOf(leader, ctx)} ${leader === ctx.viewer && ctx.soloHuman ? "lead" : "leads"} the next trick`;
  }
  if (trick) {
    if (past) {
      if (board.phase !== "play") {
        title.textContent = trick.winner !== null && trick.sky
          ? `Last trick: ${nameOf(trick.winner, ctx)} took the ${skyWords(trick.sky)}`
          : "";
      } else {
        title.textContent += trick.winner !== null && trick.sky
          ? ` · last trick: ${nameOf(trick.winner, ctx)} took the ${skyWords(trick.sky)}`
          : "";
      }
    } else {
      const led = trick.led_colour ? `, ${COLOUR_WORDS[trick.led_colour]} led` : "";
      title.textContent = `Trick ${trick.index + 1} for the ${skyWords(trick.sky)}: ${nameOf(trick.leader, ctx)} `
        + `${trick.leader === ctx.viewer && ctx.soloHuman ? "lead" : "leads"}${led}`;
    }
    for (let k = 0; k < n; k += 1) {
      const seat = (trick.leader + k) % n;
      const play = trick.plays.find((p) => p.seat === seat);
      const slot = el("div", "trick-slot");
      slot.dataset.seat = seat;
      if (trick.winner === seat) slot.classList.add("winner");
      const tags = [k === 0 ? "leads" : "", trick.winner === seat ? "wins" : ""].filter(Boolean);
      slot.append(el("span", "lead-tag", tags.join(" · ")));
      const place = el("div", "slot-card");
      if (play) {
        const card = rainCard(play.card);
        if (fresh && fresh.seat === seat && fresh.card === play.card) card.classList.add("drop-in");
        place.append(card);
      } else if (!past && board.to_move === seat) {
        place.classList.add("waiting");
      }
      const name = el("span", "slot-name");
      name.append(seatDot(seat), document.createTextNode(` ${nameOf(seat, ctx)}`));
      slot.append(place, name);
      cards.append(slot);
    }
    if (past) area.classList.add("past");
  }
  if (board.phase === "weather" && !trick) {
    title.textContent = "Good weather bets: secret until every seat has bet";
  } else if (!title.textContent) {
    title.textContent = board.phase === "allocate" ? "New round: the sky line is dealt" : "";
  }
  area.append(title, cards);
  return area;
}

const SCORE_COLUMNS = ["candy", "spider", "leopard", "star"];

/** The score table by kind: points, with face-up elements under each. */
export function scoreTable(seats, ctx, { result = null, labels = false } = {}) {
  const table = el("table", "scores");
  table.setAttribute("aria-label", "scores by element");
  const head = el("tr");
  head.append(el("th", "", "seat"));
  for (const kind of SCORE_COLUMNS) {
    const th = el("th", `k-${kind}`);
    th.title = KIND_LABELS[kind];
    th.append(symbol(kind, "sym"), el("span", labels ? "col-label" : "sr-only", KIND_LABELS[kind]));
    head.append(th);
  }
  const weather = el("th");
  weather.title = "good weather (+7 each)";
  weather.append(symbol("sun", "sym"), el("span", labels ? "col-label" : "sr-only", "good weather"));
  const down = el("th", "", "−2");
  if (labels) down.append(el("span", "col-label", "face down"));
  head.append(weather, down, el("th", "", "total"));
  head.lastChild.previousSibling.title = "face-down sky cards (−2 each)";
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  const winners = result ? result.winners : [];
  seats.forEach((seat, i) => {
    const score = result ? result.scores[i] : seat.score;
    const row = el("tr");
    if (winners.includes(i)) row.classList.add("winner");
    const name = el("td");
    name.append(seatDot(i), document.createTextNode(` ${seatName(seat, ctx)}`));
    row.append(name);
    const elements = liveElements(seat);
    for (const kind of SCORE_COLUMNS) {
      const td = el("td", "", score ? score[kind] : 0);
      const n = elements[kind];
      td.append(el("span", "elements", `×${n}`));
      td.title = `${n} ${kind} element(s): ${score ? score[kind] : 0} points`;
      row.append(td);
    }
    row.append(
      el("td", "", score ? score.good_weather : 0),
      el("td", "", score ? score.face_down : 0),
      el("td", "total", score ? score.total : 0),
    );
    body.append(row);
  });
  table.append(thead, body);
  return table;
}

/** "Seat 1 wins", "You win", "Shared win: ..." for a result. */
export function winnerText(result, ctx) {
  if (!result) return "";
  const names = result.winners.map((s) => nameOf(s, ctx));
  if (result.outright !== null && result.outright !== undefined) {
    return `${nameOf(result.outright, ctx)} ${names[0] === "You" ? "win" : "wins"} outright with all 3 shooting stars`;
  }
  if (names.length === 1) return `${names[0]} ${names[0] === "You" ? "win" : "wins"} the game`;
  return `Shared win: ${names.join(", ")}`;
}

/** The bet of a seat in a finished round, in words, with its outcome. */
function betOutcome(line) {
  const cell = el("span", "bet-outcome");
  if (!line.good_weather) {
    cell.textContent = "no bet";
    cell.classList.add("none");
    return cell;
  }
  cell.append(symbol("sun", "sym"));
  if (line.held) {
    cell.classList.add("held");
    cell.append(document.createTextNode("held: +7"));
    cell.title = "bet on good weather and won no sky card: +7";
  } else {
    const n = line.face_down.length;
    cell.classList.add("failed");
    cell.append(document.createTextNode(`failed: ${n} face down`));
    cell.title = `bet on good weather but won ${n} sky card${n === 1 ? "" : "s"}: face down, −2 each`;
  }
  return cell;
}

/**
 * What a finished round did (a RoundResult, docs/web-api.md): each seat's bet and whether
 * it held, the sky cards it won (those turned face down drawn so), the round's points and
 * the total.
 */
export function roundSummaryTable(result, ctx) {
  const table = el("table", "summary-table");
  table.setAttribute("aria-label", `round ${result.round + 1} by seat`);
  const head = el("tr");
  for (const [text, cls] of [["seat", ""], ["good weather", ""], ["won this round", ""], ["round", "num"], ["total", "num"]]) {
    head.append(el("th", cls, text));
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const line of result.seats) {
    const row = el("tr");
    row.dataset.seat = line.seat;
    const name = el("td", "who");
    name.append(seatDot(line.seat), document.createTextNode(` ${nameOf(line.seat, ctx)}`));
    const bet = el("td");
    bet.append(betOutcome(line));
    const won = el("td", "won-cards");
    const down = new Set(line.face_down);
    for (const card of line.won) won.append(skyCard(card, { small: true, faceDown: down.has(card) }));
    if (!line.won.length) won.append(el("span", "none", "none"));
    const points = el("td", `num points${line.points > 0 ? " plus" : line.points < 0 ? " minus" : ""}`,
      `${line.points > 0 ? "+" : ""}${line.points}`.replace("-", "−"));
    points.title = "points this round (the change of the total: candy points depend on the others' candies too)";
    const total = el("td", "num total", line.score.total);
    row.append(name, bet, won, points, total);
    body.append(row);
  }
  table.append(thead, body);
  return table;
}
