// Cards as DOM elements: rain cards (B7, R12, G3) and sky cards (C1, C2, S1, S2, L1, L2, *).
// Symbols are inline SVG so the page needs no font or image beyond itself.

const SVG_NS = "http://www.w3.org/2000/svg";

export const COLOURS = { B: "blue", R: "red", G: "green" };
export const COLOUR_WORDS = { B: "blue", R: "red", G: "green" };
export const KINDS = { C: "candy", S: "spider", L: "leopard", "*": "star" };
export const KIND_LABELS = { candy: "Candy", spider: "Spider", leopard: "Leopard", star: "Shooting star" };

const SYMBOL_PATHS = {
  drop: `<path d="M12 2.5C12 2.5 5 10.6 5 15.2a7 7 0 0 0 14 0C19 10.6 12 2.5 12 2.5z"/>`,
  candy: `<path d="M2.5 7.5 7.6 10.2 7.6 13.8 2.5 16.5 3.8 12z"/><path d="M21.5 7.5 16.4 10.2 16.4 13.8 21.5 16.5 20.2 12z"/>`
    + `<circle cx="12" cy="12" r="5"/><path d="M9 9.4c1.6 1 1.7 4.4 3.8 5.6" stroke="#fff" stroke-width="1.2" fill="none" opacity=".75"/>`,
  spider: `<ellipse cx="12" cy="14.2" rx="3.6" ry="4.4"/><circle cx="12" cy="8.3" r="2.4"/>`
    + `<g stroke="currentColor" stroke-width="1.5" fill="none" stroke-linecap="round">`
    + `<path d="M9.4 11.8 5.5 8.2 4 4.5M14.6 11.8 18.5 8.2 20 4.5"/>`
    + `<path d="M9 13.3 4.4 12.2 2.5 9.2M15 13.3 19.6 12.2 21.5 9.2"/>`
    + `<path d="M9 15.2 4.5 16.5 3 20M15 15.2 19.5 16.5 21 20"/>`
    + `<path d="M9.8 17.3 7.2 20.2 6.6 22.5M14.2 17.3 16.8 20.2 17.4 22.5"/></g>`,
  leopard: `<ellipse cx="12" cy="16" rx="5.2" ry="4.4"/><ellipse cx="5.3" cy="10.3" rx="2" ry="2.6" transform="rotate(-20 5.3 10.3)"/>`
    + `<ellipse cx="9.4" cy="6.3" rx="2" ry="2.7" transform="rotate(-6 9.4 6.3)"/>`
    + `<ellipse cx="14.6" cy="6.3" rx="2" ry="2.7" transform="rotate(6 14.6 6.3)"/>`
    + `<ellipse cx="18.7" cy="10.3" rx="2" ry="2.6" transform="rotate(20 18.7 10.3)"/>`,
  star: `<path d="M12 2.2l2.9 6.3 6.9.8-5.1 4.7 1.4 6.8L12 17.4l-6.1 3.4 1.4-6.8-5.1-4.7 6.9-.8z"/>`,
  sun: `<circle cx="12" cy="12" r="4.6"/><g stroke="currentColor" stroke-width="2" stroke-linecap="round">`
    + `<path d="M12 1.8v2.6M12 19.6v2.6M1.8 12h2.6M19.6 12h2.6M4.8 4.8l1.8 1.8M17.4 17.4l1.8 1.8M4.8 19.2l1.8-1.8M17.4 6.6l1.8-1.8"/></g>`,
  download: `<path d="M12 3v11m0 0-4.5-4.5M12 14l4.5-4.5" stroke="currentColor" stroke-width="2.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/><path d="M4.5 16.5V20h15v-3.5" stroke="currentColor" stroke-width="2.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/>`,
  cloud: `<path d="M7 19h10.5a4.5 4.5 0 0 0 .6-8.96A6 6 0 0 0 6.5 9.2 5 5 0 0 0 7 19z"/>`,
};

/** An inline SVG symbol: drop, candy, spider, leopard, star, sun or cloud. */
export function symbol(name, className = "sym") {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", className);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("fill", "currentColor");
  svg.innerHTML = SYMBOL_PATHS[name] || "";
  return svg;
}

/** Create an element with a class and optional text. */
export function el(tag, className = "", text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null && text !== undefined) node.textContent = String(text);
  return node;
}

/** Colour letter and rank of "B7". */
export function parseCard(text) {
  return { colour: text[0], rank: Number(text.slice(1)) };
}

/** Sort key in canonical order: blue, red, green, each by rank. */
export function cardOrder(text) {
  return "BRG".indexOf(text[0]) * 100 + Number(text.slice(1));
}

export function sortCards(cards) {
  return [...cards].sort((a, b) => cardOrder(a) - cardOrder(b));
}

/** Words for a rain card, for labels: "blue 7 (trump)". */
export function cardWords(text) {
  const { colour, rank } = parseCard(text);
  return `${COLOUR_WORDS[colour]} ${rank}${colour === "B" ? " (trump)" : ""}`;
}

/**
 * A rain card. With `button: true` it is a <button> (clickable, focusable); `small` and
 * `faceDown` change its look.
 */
export function rainCard(text, { button = false, small = false, faceDown = false } = {}) {
  const node = el(button ? "button" : "div", "card rain");
  if (button) node.type = "button";
  if (small) node.classList.add("small");
  if (faceDown) {
    node.classList.add("back");
    node.setAttribute("aria-label", "a hidden card");
    return node;
  }
  const { colour, rank } = parseCard(text);
  node.classList.add(COLOURS[colour]);
  node.dataset.card = text;
  node.setAttribute("aria-label", cardWords(text));
  node.title = cardWords(text);
  // Each face shows its colour letter as well as its colour (B blue, R red, G green), so
  // a player who cannot tell the colours apart reads the card as the notation writes it.
  const top = el("span", "corner top");
  top.append(el("span", "r", rank), el("span", "cl", colour));
  const bottom = el("span", "corner bottom");
  bottom.append(el("span", "r", rank), el("span", "cl", colour));
  const middle = el("span", "face");
  middle.append(el("span", "rank", rank), el("span", "cl", colour));
  node.append(top, middle, bottom);
  if (colour === "B") node.append(el("span", "trump", "trump"));
  return node;
}

/** Kind name and count of a sky card written "C2" or "*". */
export function parseSky(text) {
  if (text === "*") return { kind: "star", count: 1 };
  return { kind: KINDS[text[0]], count: Number(text[1]) };
}

/** Words for a sky card: "leopard ×2", "shooting star". */
export function skyWords(text) {
  const { kind, count } = parseSky(text);
  if (kind === "star") return "shooting star";
  return count === 2 ? `double ${kind} (×2)` : kind;
}

/** A sky card: its kind's symbol(s) on a sky-coloured card, ×2 marked. */
export function skyCard(text, { small = false, faceDown = false } = {}) {
  const node = el("div", "card sky");
  if (small) node.classList.add("small");
  if (faceDown) {
    node.classList.add("facedown");
    node.setAttribute("aria-label", `${skyWords(text)}, face down (−2)`);
    node.title = "face down: −2";
    node.append(symbol("cloud", "sym big"), el("span", "fd-label", "−2"));
    return node;
  }
  const { kind, count } = parseSky(text);
  node.classList.add(kind);
  node.dataset.sky = text;
  node.setAttribute("aria-label", skyWords(text));
  node.title = skyWords(text);
  const art = el("span", "art");
  for (let i = 0; i < count; i += 1) art.append(symbol(kind, "sym big"));
  node.append(el("span", "kind-label", kind === "star" ? "star" : kind), art);
  if (count === 2) node.append(el("span", "times", "×2"));
  return node;
}
