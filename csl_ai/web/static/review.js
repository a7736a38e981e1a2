// The review of a saved game: step through every decision (← →), run the engine's
// analysis, draw the win chance over the game with blunders marked, export a position.

import { api, downloadFrom, sleep } from "./api.js";
import { el, rainCard } from "./cards.js";
import { nameOf, scoreTable, seatBox, seatDot, seatPlayer, skyLine, trickArea, winnerText } from "./board.js";
import { scoringRules } from "./rules.js";
import { winGraph } from "./graph.js";

const SERIES_COLOURS = ["#c79300", "#1c8fb8", "#d9622b", "#7c4dcc", "#4f9a1f"];
const POLL_MS = 400;
const pct = (p) => (p === null || p === undefined ? "?" : `${Math.round(p * 100)}%`);

export class ReviewView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.rid = null;
    this.review = null;
    this.k = 0;
    this.job = null;
    this.analysis = null;
    this.token = 0;
    this.onKey = (event) => this.key(event);
  }

  async open(rid) {
    this.token += 1;
    if (rid !== this.rid) {
      this.review = null;
      this.analysis = null;
      this.job = null;
      this.k = 0;
    }
    this.rid = rid;
    document.addEventListener("keydown", this.onKey);
    if (!this.review) {
      this.root.replaceChildren(el("div", "panel", "Loading the record…"));
      try {
        this.review = await api("GET", `/records/${encodeURIComponent(rid)}/review`);
      } catch (error) {
        this.app.showError(error);
        this.renderMissing(error.message);
        return;
      }
      this.seatChoice = new Set(this.defaultSeats());
    }
    this.render();
  }

  close() {
    this.token += 1;
    document.removeEventListener("keydown", this.onKey);
  }

  defaultSeats() {
    const humans = this.review.seats.filter((s) => s.human).map((s) => s.seat);
    return humans.length ? humans : this.review.seats.map((s) => s.seat);
  }

  key(event) {
    if (!this.review || event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const last = this.review.steps.length;
    let k = null;
    if (event.key === "ArrowRight") k = Math.min(this.k + 1, last);
    else if (event.key === "ArrowLeft") k = Math.max(this.k - 1, 0);
    else if (event.key === "Home") k = 0;
    else if (event.key === "End") k = last;
    if (k === null) return;
    event.preventDefault();
    this.goTo(k);
  }

  goTo(k) {
    this.k = Math.max(0, Math.min(k, this.review.steps.length));
    this.render();
  }

  ctx(board) {
    return { viewer: null, seats: board.seats, soloHuman: false, review: true };
  }

  decisionAt(step) {
    if (!this.analysis) return null;
    return this.analysis.decisions.find((d) => d.step === step) || null;
  }

  // --- analysis ------------------------------------------------------------------------
  async runAnalysis() {
    const token = this.token;
    const level = this.root.querySelector("#analysis-level");
    const body = { seats: [...this.seatChoice].sort() };
    if (level && level.value) body.level = level.value;
    try {
      const res = await api("POST", `/records/${encodeURIComponent(this.rid)}/analysis`, body);
      this.job = res.job;
      this.analysis = null;
      this.render();
      while (token === this.token && this.job && !["done", "failed"].includes(this.job.status)) {
        await sleep(POLL_MS);
        if (token !== this.token) return;
        const poll = await api("GET", `/analyses/${encodeURIComponent(this.job.id)}`);
        this.job = poll.job;
        this.renderProgress();
      }
      if (token !== this.token) return;
      if (this.job.status === "failed") {
        this.app.showError(this.job.error ? this.job.error.message : "the analysis failed");
      } else {
        this.analysis = this.job.result;
      }
    } catch (error) {
      this.app.showError(error);
    }
    this.render();
  }

  async exportPosition() {
    const steps = this.review.steps;
    if (this.k >= steps.length) return;
    const step = steps[this.k];
    try {
      await downloadFrom(
        `/records/${encodeURIComponent(this.rid)}/position?step=${this.k}`,
        `${this.rid}-${step.label.replace(/\s+/g, "-")}-seat${step.seat}.json`,
      );
    } catch (error) {
      this.app.showError(error);
    }
  }

  // --- drawing -------------------------------------------------------------------------
  renderMissing(message) {
    const panel = el("div", "panel");
    panel.append(el("h2", "", "This record cannot be reviewed"), el("p", "", message));
    const back = el("button", "primary", "Back to the saved games");
    back.type = "button";
    back.addEventListener("click", () => this.app.go("#/"));
    panel.append(back);
    this.root.replaceChildren(panel);
  }

  render() {
    if (!this.review) return;
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
    const review = this.review;
    const steps = review.steps;
    const board = review.frames[this.k];
    const ctx = this.ctx(board);
    this.root.dataset.step = String(this.k);
    this.root.dataset.analysed = this.analysis ? "yes" : "no";

    const main = el("div", "review-main");
    const felt = el("div", "felt");
    const bar = el("div", "status-bar");
    const step = steps[this.k] || null;
    const label = el("span", "turn-text");
    if (step) {
      label.textContent = `Round ${step.round + 1} of ${review.rules.rounds}${step.trick !== null ? ` · trick ${step.trick + 1}` : ""}: `
        + `${nameOf(step.seat, ctx)} to ${step.kind === "allocate" ? "split the hand" : step.kind === "weather" ? "bet" : "play"}`;
    } else {
      label.textContent = review.result ? winnerText(review.result, ctx) : review.resigned_by !== null ? `${nameOf(review.resigned_by, ctx)} resigned` : "The record ends here";
    }
    const where = el("span", "round-text", step ? `decision ${this.k + 1} of ${steps.length}` : `${steps.length} decisions`);
    bar.append(label, where);
    felt.append(bar);
    const seats = el("div", "seats");
    seats.classList.add("open-seats");
    seats.dataset.count = board.seats.length;
    for (const seat of board.seats) seats.append(seatBox(seat, board, ctx, { open: true }));
    felt.append(seats, skyLine(board, ctx));
    const prev = this.k > 0 ? steps[this.k - 1] : null;
    const fresh = prev && prev.kind === "play" ? { seat: prev.seat, card: prev.text } : null;
    felt.append(trickArea(board, ctx, { fresh }));
    felt.append(this.decisionBox(step, ctx), this.navBar(step));
    if (step && step.kind === "play") {
      const card = felt.querySelector(`.seat[data-seat="${step.seat}"] .card[data-card="${step.text}"]`);
      if (card) card.classList.add("next-play");
    }
    main.append(felt, this.graphPanel(ctx));

    const side = el("aside", "side");
    side.append(this.infoPanel(ctx), this.analysisPanel(ctx), this.rulesPanel());
    this.root.replaceChildren(main, side);
    if (focusKey) {
      const target = this.root.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (target && !target.disabled) target.focus();
    }
  }

  decisionBox(step, ctx) {
    const box = el("div", "decision-box");
    box.id = "decision-box";
    box.setAttribute("aria-live", "polite");
    if (!step) {
      box.append(el("div", "", "End of the record."));
      return box;
    }
    const line = el("div", "move-line");
    line.append(seatDot(step.seat), el("strong", "", `${nameOf(step.seat, ctx)}`), document.createTextNode(` ${verb(step)}`));
    if (step.kind === "play") line.append(rainCard(step.text, { small: true }));
    else if (step.kind === "allocate") line.append(pilesText(step.text));
    if (step.forced) line.append(el("span", "badge", "forced"));
    box.append(line);
    const d = this.decisionAt(this.k);
    if (d) {
      const judged = el("div", "move-line");
      if (d.forced) {
        judged.textContent = "The only legal move.";
      } else if (d.win_probability === null) {
        judged.textContent = `Engine: ${moveWords(d.kind, d.engine_text)} (${d.best_win_probability !== null ? pct(d.best_win_probability) : "?"}); the played move was not evaluated.`;
      } else {
        const verdict = d.verdict || (d.blunder ? "blunder" : "ok");
        const words = { blunder: "Blunder", close: "Worth a look", ok: "Good", forced: "Forced", "n/a": "Not judged" }[verdict] || verdict;
        judged.append(el("span", `judgement ${verdict.replace("/", "")}`, words));
        judged.append(document.createTextNode(
          ` played ${pct(d.win_probability)} to win · engine's choice ${moveWords(d.kind, d.engine_text)}`
            + `${d.best_win_probability !== null ? ` ${pct(d.best_win_probability)}` : ""}`
            + ` · loss ${pct(d.loss ?? 0)}${d.estimated ? " (estimated from the bet that followed)" : ""}`,
        ));
      }
      box.append(judged);
    } else if (this.analysis) {
      box.append(el("div", "hint-text", "Not analysed (another seat's decision)."));
    } else {
      box.append(el("div", "note", "Run the analysis to see the engine's judgement of each decision."));
    }
    return box;
  }

  navBar(step) {
    const steps = this.review.steps;
    const nav = el("div", "review-nav");
    const mk = (text, label, k, id) => {
      const b = el("button", "", text);
      b.type = "button";
      b.setAttribute("aria-label", label);
      b.dataset.focus = id;
      b.id = id;
      b.disabled = k === this.k || k < 0 || k > steps.length;
      b.addEventListener("click", () => this.goTo(k));
      return b;
    };
    nav.append(
      mk("« first", "first decision (Home)", 0, "rv-first"),
      mk("◀ back", "previous decision (←)", this.k - 1, "rv-prev"),
      el("span", "where", step ? longLabel(step) : "the end"),
      mk("next ▶", "next decision (→)", this.k + 1, "rv-next"),
      mk("end »", "end of the game (End)", steps.length, "rv-last"),
    );
    const exp = el("button", "", "Export position");
    exp.type = "button";
    exp.id = "export-position";
    exp.dataset.focus = "export";
    exp.title = "this decision point as a position JSON for csl best-move";
    exp.disabled = !step;
    exp.addEventListener("click", () => this.exportPosition());
    nav.append(exp);
    return nav;
  }

  graphPanel(ctx) {
    const panel = el("section", "panel graph-panel");
    panel.setAttribute("aria-label", "win chance graph");
    panel.append(el("h2", "", "Win chance over the game"));
    const wrap = el("div", "graph-wrap");
    wrap.id = "graph-wrap";
    if (this.analysis) {
      const steps = this.review.steps;
      const seats = [...new Set(this.analysis.decisions.map((d) => d.seat))].sort();
      const series = seats.map((seat) => ({
        seat,
        colour: SERIES_COLOURS[seat % SERIES_COLOURS.length],
        label: nameOf(seat, ctx),
        points: this.analysis.decisions.filter((d) => d.seat === seat).map((d) => ({
          index: d.step,
          win: d.win_probability,
          blunder: d.blunder,
          close: d.verdict === "close",
          label: `${d.label} · ${nameOf(seat, ctx)} ${moveWords(d.kind, d.played_text)}: ${d.win_probability !== null ? pct(d.win_probability) : "?"}${d.blunder ? " — blunder" : ""}`,
        })),
      }));
      const rounds = [];
      steps.forEach((s, i) => {
        if (i === 0 || s.round !== steps[i - 1].round) rounds.push(i);
      });
      wrap.append(winGraph({ total: Math.max(steps.length, 2), series, current: Math.min(this.k, steps.length - 1), onPick: (k) => this.goTo(k), rounds }));
      const legend = el("div", "legend");
      for (const s of series) {
        const item = el("span");
        const sw = el("span", "swatch");
        sw.style.background = s.colour;
        item.append(sw, document.createTextNode(s.label));
        legend.append(item);
      }
      legend.append(el("span", "", "red ??: blunder · orange ?!: worth a look · thin lines: new rounds · click a point to go there"));
      panel.append(wrap, legend);
    } else {
      wrap.append(el("div", "graph-empty", this.job ? "The engine is judging every decision…" : "Run the analysis (right) to draw the win chance of each decision."));
      panel.append(wrap);
    }
    return panel;
  }

  infoPanel(ctx) {
    const review = this.review;
    const panel = el("section", "panel");
    panel.append(el("h2", "", "Game"));
    const list = el("div", "rec-info");
    list.append(el("div", "rec-meta", review.id));
    for (const seat of review.seats) {
      const row = el("div", "");
      row.append(seatDot(seat.seat), document.createTextNode(` Seat ${seat.seat}: ${seatPlayer(seat)}`));
      list.append(row);
    }
    panel.append(list);
    if (review.result) {
      const last = review.frames[review.frames.length - 1];
      panel.append(el("h3", "", "Final scores"), scoreTable(last.seats, this.ctx(last), { result: review.result }));
      panel.append(el("p", "winner-text", winnerText(review.result, ctx)));
    } else if (review.resigned_by !== null && review.resigned_by !== undefined) {
      panel.append(el("p", "", `Seat ${review.resigned_by} resigned.`));
    } else {
      panel.append(el("p", "", "An unfinished game."));
    }
    const download = el("button", "", "Download the record");
    download.type = "button";
    download.addEventListener("click", async () => {
      try {
        await downloadFrom(`/records/${encodeURIComponent(this.rid)}`, `${this.rid}.json`);
      } catch (error) {
        this.app.showError(error);
      }
    });
    panel.append(download);
    return panel;
  }

  analysisPanel(ctx) {
    const panel = el("section", "panel");
    panel.append(el("h2", "", "Analysis"));
    const seats = el("div", "row");
    seats.setAttribute("role", "group");
    seats.setAttribute("aria-label", "seats to analyse");
    for (const seat of this.review.seats) {
      const label = el("label", "toggle");
      const box = el("input");
      box.type = "checkbox";
      box.checked = this.seatChoice.has(seat.seat);
      box.dataset.focus = `an-seat-${seat.seat}`;
      box.addEventListener("change", () => {
        if (box.checked) this.seatChoice.add(seat.seat);
        else this.seatChoice.delete(seat.seat);
        run.disabled = !this.seatChoice.size || this.running();
      });
      label.append(box, seatDot(seat.seat), document.createTextNode(` Seat ${seat.seat}`));
      seats.append(label);
    }
    panel.append(seats);
    const levelRow = el("div", "row");
    const levelField = el("label", "field");
    levelField.append(el("span", "", "Engine level"));
    const select = el("select");
    select.id = "analysis-level";
    select.dataset.focus = "an-level";
    const levels = (this.app.options && this.app.options.levels) || [{ name: "fast" }];
    for (const level of levels) {
      const players = this.review ? String(this.review.seats.length) : "2";
      const iterations = (level.iterations_by_players && level.iterations_by_players[players]) || level.iterations;
      const option = el("option", "", iterations ? `${level.name} (${iterations.toLocaleString("en")} iterations)` : level.name);
      option.value = level.name;
      select.append(option);
    }
    select.value = this.levelChoice || (levels.some((l) => l.name === "normal") ? "normal" : levels[0].name);
    select.addEventListener("change", () => {
      this.levelChoice = select.value;
    });
    levelField.append(select);
    const run = el("button", "primary", this.analysis ? "Run again" : "Run the analysis");
    run.type = "button";
    run.id = "run-analysis";
    run.dataset.focus = "run-analysis";
    run.disabled = !this.seatChoice.size || this.running();
    run.addEventListener("click", () => this.runAnalysis());
    levelRow.classList.add("analysis-row");
    levelRow.append(levelField, run);
    panel.append(levelRow);
    const progress = el("div", "progress-line");
    progress.id = "analysis-progress";
    progress.append(...this.progressContent());
    panel.append(progress);
    if (this.analysis) {
      for (const sum of this.analysis.summary) {
        const line = el("div", "progress-line");
        line.append(seatDot(sum.seat), document.createTextNode(
          ` Seat ${sum.seat}: ${sum.blunders} blunder${sum.blunders === 1 ? "" : "s"}`
            + `${sum.close ? `, ${sum.close} worth a look` : ""}, mean loss ${pct(sum.mean_loss ?? 0)} over ${sum.evaluated} judged decisions`,
        ));
        panel.append(line);
      }
      const blunders = this.analysis.decisions.filter((d) => d.blunder);
      if (blunders.length) {
        panel.append(el("h3", "", "Blunders"));
        const list = el("ul", "blunder-list");
        for (const d of blunders) {
          const item = el("li");
          const b = el("button", "", `${d.label} · ${nameOf(d.seat, ctx)} ${moveWords(d.kind, d.played_text)} (−${pct(d.loss)}), engine: ${moveWords(d.kind, d.engine_text)}`);
          b.type = "button";
          b.dataset.focus = `blunder-${d.step}`;
          b.addEventListener("click", () => this.goTo(d.step));
          item.append(b);
          list.append(item);
        }
        panel.append(list);
      }
    }
    return panel;
  }

  running() {
    return Boolean(this.job && !["done", "failed"].includes(this.job.status) && !this.analysis);
  }

  progressContent() {
    if (!this.job) return [document.createTextNode("Judges each decision of the chosen seats by a search from that seat's view.")];
    if (this.job.status === "done") return [document.createTextNode(`Done: ${this.job.total} decisions judged at level ${this.job.level}.`)];
    if (this.job.status === "failed") return [document.createTextNode("The analysis failed.")];
    const meter = el("div", "meter light");
    const fill = el("span");
    fill.style.width = this.job.total ? pct(this.job.done / this.job.total) : "0%";
    meter.append(fill);
    return [document.createTextNode(`Judging: ${this.job.done} / ${this.job.total} decisions`), meter];
  }

  renderProgress() {
    const box = this.root.querySelector("#analysis-progress");
    if (box) box.replaceChildren(...this.progressContent());
  }

  rulesPanel() {
    const panel = el("section", "panel");
    const details = el("details");
    details.append(el("summary", "", "Scoring of this game"), scoringRules(this.review.rules));
    panel.append(details);
    return panel;
  }
}

/** An allocation's text "B1 R2 G3 | ..." as small cards, pile by pile. */
function pilesText(text) {
  const box = el("span", "open-piles");
  for (const pile of text.split("|")) {
    const part = el("span", "open-pile");
    for (const card of pile.trim().split(/\s+/).filter(Boolean)) part.append(rainCard(card, { small: true }));
    box.append(part);
  }
  return box;
}

/** "round 2 · trick 5" for a step labelled "r2 t5"; "round 2 · piles". */
function longLabel(step) {
  const what = step.kind === "allocate" ? "piles" : step.kind === "weather" ? "bets" : `trick ${step.trick + 1}`;
  return `round ${step.round + 1} · ${what}`;
}

/** A move's text for people: "good weather" / "no bet" for a bet, else the notation. */
function moveWords(kind, text) {
  if (text === null || text === undefined) return "–";
  if (kind === "weather") return text === "yes" ? "good weather" : text === "no" ? "no bet" : text;
  return text;
}

function verb(step) {
  if (step.kind === "allocate") return "splits the hand:";
  if (step.kind === "weather") return step.move && step.move.good_weather ? "bets on good weather" : "makes no bet";
  return "plays";
}

