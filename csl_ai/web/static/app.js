// The page: the new-game form, the saved games, and routing between the home page, the
// table (#/game/ID) and the review (#/review/RECORD).

import { api, downloadFrom, hideError, readFile, showError } from "./api.js";
import { el, rainCard, skyCard, symbol } from "./cards.js";
import { seatDot } from "./board.js";
import { TableView } from "./table.js";
import { ReviewView } from "./review.js";

const KINDS = ["candy", "spider", "leopard", "star"];
const KIND_NAMES = { candy: "Candy", spider: "Spider", leopard: "Leopard", star: "Shooting star" };

class App {
  constructor() {
    this.options = null;
    this.views = {
      home: document.getElementById("view-home"),
      table: document.getElementById("view-table"),
      review: document.getElementById("view-review"),
    };
    this.table = new TableView(this.views.table, this);
    this.review = new ReviewView(this.views.review, this);
    this.pendingState = null;
    this.lastGame = null;
    this.lastReview = null;
  }

  async start() {
    this.decorate();
    document.getElementById("error-close").addEventListener("click", () => this.hideError());
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.hideError();
    });
    for (const button of document.querySelectorAll("[data-nav]")) {
      button.addEventListener("click", () => {
        const target = button.dataset.nav;
        if (target === "home") this.go("#/");
        else if (target === "table" && this.lastGame) this.go(`#/game/${encodeURIComponent(this.lastGame)}`);
        else if (target === "review" && this.lastReview) this.go(`#/review/${encodeURIComponent(this.lastReview)}`);
      });
    }
    this.form = document.getElementById("new-game-form");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.startGame();
    });
    for (const radio of this.form.querySelectorAll('input[name="players"]')) {
      radio.addEventListener("change", () => this.drawSeats());
    }
    document.getElementById("record-file").addEventListener("change", (event) => this.uploadRecord(event.target));
    window.addEventListener("hashchange", () => this.route());
    try {
      this.options = await api("GET", "/options");
    } catch (error) {
      this.showError(error);
    }
    this.fillForm();
    this.route();
  }

  /** The brand symbols and the fan of cards on the home page. */
  decorate() {
    const brand = document.getElementById("brand");
    const marks = el("span", "brand-marks");
    marks.append(symbol("candy", "sym b-candy"), symbol("spider", "sym b-spider"), symbol("leopard", "sym b-leopard"));
    brand.prepend(marks);
    const fan = document.getElementById("intro-fan");
    fan.append(rainCard("B12"), skyCard("L2"), rainCard("R7"), skyCard("*"));
  }

  // --- errors --------------------------------------------------------------------------
  showError(error) {
    showError(error);
  }

  hideError() {
    hideError();
  }

  // --- routing -------------------------------------------------------------------------
  go(hash) {
    if (window.location.hash === hash) this.route();
    else window.location.hash = hash;
  }

  show(name) {
    for (const [key, node] of Object.entries(this.views)) node.classList.toggle("hidden", key !== name);
    for (const button of document.querySelectorAll("[data-nav]")) {
      if (button.dataset.nav === name) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
    document.getElementById("nav-table").disabled = !this.lastGame;
    document.getElementById("nav-review").disabled = !this.lastReview;
  }

  route() {
    this.hideError();
    const hash = window.location.hash || "#/";
    const game = /^#\/game\/([A-Za-z0-9_-]+)$/.exec(hash);
    const review = /^#\/review\/([A-Za-z0-9_-]+)$/.exec(hash);
    if (game) {
      this.review.close();
      this.lastGame = game[1];
      this.show("table");
      const state = this.pendingState && this.pendingState.id === game[1] ? this.pendingState : null;
      this.pendingState = null;
      this.table.open(game[1], state);
    } else if (review) {
      this.table.close();
      this.lastReview = review[1];
      this.show("review");
      this.review.open(review[1]);
    } else {
      this.table.close();
      this.review.close();
      this.show("home");
      this.refreshRecords();
    }
  }

  // --- the new-game form ---------------------------------------------------------------
  levels() {
    return (this.options && this.options.levels) || [{ name: "normal" }];
  }

  fillForm() {
    const o = this.options;
    const defaults = (o && o.defaults) || {};
    const players = defaults.players || 4;
    const radio = this.form.querySelector(`input[name="players"][value="${players}"]`);
    if (radio) radio.checked = true;
    this.drawSeats();
    const grid = document.getElementById("sides-grid");
    grid.replaceChildren();
    for (const kind of KINDS) {
      const name = el("span", "kind-name");
      name.append(symbol(kind, `sym k-${kind}`), document.createTextNode(KIND_NAMES[kind]));
      name.style.color = `var(--${kind})`;
      const seg = el("div", "seg");
      seg.setAttribute("role", "radiogroup");
      seg.setAttribute("aria-label", `${KIND_NAMES[kind]} scoring side`);
      for (const side of (o && o.sides) || ["A", "B"]) {
        const label = el("label");
        const input = el("input");
        input.type = "radio";
        input.name = `side-${kind}`;
        input.value = side;
        input.checked = ((defaults.sides && defaults.sides[kind]) || "A") === side;
        label.append(input, document.createTextNode(side));
        seg.append(label);
      }
      grid.append(name, seg);
    }
    const deck = document.getElementById("deck-select");
    deck.replaceChildren();
    for (const name of (o && o.decks) || ["default"]) {
      const option = el("option", "", name);
      option.value = name;
      deck.append(option);
    }
    if (defaults.deck) deck.value = defaults.deck;
    if (defaults.star_option) document.getElementById("star-option").value = defaults.star_option;
    if (typeof defaults.takebacks === "boolean") document.getElementById("takebacks").checked = defaults.takebacks;
  }

  drawSeats() {
    const players = Number(this.form.querySelector('input[name="players"]:checked').value);
    const rows = document.getElementById("seat-rows");
    const before = [...rows.querySelectorAll(".seat-row")].map((row) => ({
      human: row.querySelector('input[type="checkbox"]').checked,
      level: row.querySelector("select").value,
    }));
    const defaults = (this.options && this.options.defaults) || {};
    const humans = defaults.humans || [0];
    const defaultLevel = defaults.ai || (this.options && this.options.default_level) || this.levels()[0].name;
    rows.replaceChildren();
    for (let seat = 0; seat < players; seat += 1) {
      const row = el("div", "seat-row");
      const chip = el("span", "seat-chip");
      chip.append(seatDot(seat), document.createTextNode(`Seat ${seat}`));
      const humanLabel = el("label", "toggle");
      const human = el("input");
      human.type = "checkbox";
      human.name = `human-${seat}`;
      human.id = `human-${seat}`;
      human.checked = before[seat] ? before[seat].human : humans.includes(seat);
      humanLabel.append(human, document.createTextNode("human"));
      const select = el("select");
      select.name = `level-${seat}`;
      select.id = `level-${seat}`;
      select.setAttribute("aria-label", `AI level of seat ${seat}`);
      for (const level of this.levels()) {
        const iterations = (level.iterations_by_players && level.iterations_by_players[String(players)]) || level.iterations;
        const option = el("option", "", iterations ? `AI ${level.name} (${iterations.toLocaleString("en")} iterations)` : `AI ${level.name}`);
        option.value = level.name;
        select.append(option);
      }
      select.value = before[seat] ? before[seat].level : defaultLevel;
      if (!select.value) select.selectedIndex = 0;
      select.disabled = human.checked;
      human.addEventListener("change", () => {
        select.disabled = human.checked;
      });
      row.append(chip, humanLabel, select);
      rows.append(row);
    }
  }

  async startGame() {
    const form = this.form;
    const players = Number(form.querySelector('input[name="players"]:checked').value);
    const humans = [];
    const ai = [];
    for (let seat = 0; seat < players; seat += 1) {
      if (form.querySelector(`#human-${seat}`).checked) humans.push(seat);
      else ai.push(form.querySelector(`#level-${seat}`).value);
    }
    if (!humans.length) {
      this.showError("Tick at least one human seat: somebody has to play at this screen.");
      return;
    }
    const sides = {};
    for (const kind of KINDS) sides[kind] = form.querySelector(`input[name="side-${kind}"]:checked`).value;
    const body = {
      players,
      humans,
      ai,
      sides,
      star_option: document.getElementById("star-option").value,
      takebacks: document.getElementById("takebacks").checked,
    };
    const deckText = await readFile(document.getElementById("deck-file"));
    if (deckText !== null) body.deck_toml = deckText;
    else body.deck = document.getElementById("deck-select").value;
    const seed = document.getElementById("seed").value.trim().replace(/^0+(?=\d)/, "");
    if (seed !== "") {
      if (!/^\d+$/.test(seed)) {
        this.showError(`The seed must be a whole number, got ${JSON.stringify(seed)}`);
        return;
      }
      body.seed = "SEED";
    }
    const button = document.getElementById("start-game");
    button.disabled = true;
    document.getElementById("form-note").textContent = "Dealing…";
    try {
      // The seed goes as written: a 63-bit seed is beyond a JavaScript number's precision.
      const text = JSON.stringify(body).replace('"seed":"SEED"', `"seed":${seed}`);
      const state = await api("POST", "/games", text);
      this.hideError();
      this.pendingState = state;
      this.go(`#/game/${encodeURIComponent(state.id)}`);
    } catch (error) {
      this.showError(error);
    }
    button.disabled = false;
    document.getElementById("form-note").textContent = "";
  }

  // --- saved games ---------------------------------------------------------------------
  async refreshRecords() {
    const list = document.getElementById("records-list");
    let data;
    try {
      data = await api("GET", "/records");
    } catch (error) {
      list.replaceChildren(el("li", "hint-text", "The saved games cannot be listed."));
      this.showError(error);
      return;
    }
    list.replaceChildren();
    const title = document.getElementById("records-title");
    title.title = data.folder || "";
    if (!data.records.length) {
      list.append(el("li", "hint-text", `No saved games yet${data.folder ? ` in ${data.folder}` : ""}. Finished and unfinished games are saved there.`));
      return;
    }
    for (const rec of data.records) list.append(this.recordItem(rec));
  }

  recordItem(rec) {
    const item = el("li");
    item.dataset.record = rec.id;
    const title = el("div", "rec-title");
    const meta = el("div", "rec-meta");
    const actions = el("div", "rec-actions");
    if (rec.error) {
      title.textContent = rec.id;
      meta.textContent = `not a readable record: ${rec.error.message || rec.error}`;
      item.append(title, meta, actions);
      return item;
    }
    const who = rec.agents ? rec.agents.map((a) => (a === "human" ? "human" : `AI ${a.replace(/^ismcts:/, "")}`)) : [];
    title.textContent = `${rec.players} players${who.length ? `: ${who.join(", ")}` : ""}`;
    let status;
    if (rec.live) status = el("span", "tag live", "playing now");
    else if (rec.finished) status = el("span", "tag", rec.winners && rec.winners.length ? `won by seat ${rec.winners.join(", ")}` : "finished");
    else if (rec.resigned_by !== null && rec.resigned_by !== undefined) status = el("span", "tag", `seat ${rec.resigned_by} resigned`);
    else status = el("span", "tag", "unfinished");
    title.append(status);
    meta.textContent = `${rec.saved_at ? rec.saved_at.replace("T", " ") : ""} · ${rec.id}`;
    const unfinished = !rec.finished && (rec.resigned_by === null || rec.resigned_by === undefined);
    if (unfinished || rec.live) {
      const resume = el("button", "primary", rec.live ? "Open" : "Resume");
      resume.type = "button";
      resume.setAttribute("aria-label", `${rec.live ? "Open" : "Resume"} the game ${rec.id}`);
      resume.addEventListener("click", () => this.resume(rec.id));
      actions.append(resume);
    }
    // A game that is not over opens for review only once finished or resigned: its record
    // holds the AI seats' hidden cards (the server refuses it too).
    const reviewable = rec.reviewable ?? (!rec.live && !unfinished);
    if (reviewable) {
      const review = el("button", "", "Review");
      review.type = "button";
      review.setAttribute("aria-label", `Review the game ${rec.id}`);
      review.addEventListener("click", () => this.go(`#/review/${encodeURIComponent(rec.id)}`));
      const download = el("button", "icon-button");
      download.append(symbol("download", "sym"));
      download.type = "button";
      download.title = "download the record";
      download.setAttribute("aria-label", `Download the record ${rec.id}`);
      download.addEventListener("click", async () => {
        try {
          await downloadFrom(`/records/${encodeURIComponent(rec.id)}`, `${rec.id}.json`);
        } catch (error) {
          this.showError(error);
        }
      });
      actions.append(review, download);
    }
    item.append(title, meta, actions);
    return item;
  }

  async resume(rid) {
    try {
      const state = await api("POST", `/records/${encodeURIComponent(rid)}/resume`);
      this.pendingState = state;
      this.go(`#/game/${encodeURIComponent(state.id)}`);
    } catch (error) {
      this.showError(error);
    }
  }

  async uploadRecord(input) {
    const text = await readFile(input);
    input.value = "";
    if (text === null) return;
    try {
      const info = await api("POST", "/records", text);
      this.go(`#/review/${encodeURIComponent(info.id)}`);
    } catch (error) {
      this.showError(error);
    }
  }
}

const app = new App();
window.addEventListener("unhandledrejection", (event) => {
  app.showError(event.reason && event.reason.message ? event.reason.message : String(event.reason));
});
app.start();
