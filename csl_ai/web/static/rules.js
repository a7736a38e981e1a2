// The scoring panel: the scoring cards of the rules in play, drawn from the server's
// words and point tables (`rules.scoring`, docs/web-api.md: Rules), which it computes
// through the engine's own scoring.

import { el, symbol } from "./cards.js";

/** A count → points table: `rows` of {count, points}, the last count meaning "or more". */
function countTable(rows) {
  const table = el("table", "mini");
  const head = el("tr");
  const body = el("tr");
  head.append(el("th", "", "count"));
  body.append(el("th", "", "points"));
  for (const { count, points } of rows) {
    head.append(el("td", "", count));
    body.append(el("td", points > 0 ? "pos" : "", points));
  }
  table.append(head, body);
  return table;
}

/** One scoring card: symbol, title, side badge, its words and its table. */
function ruleBlock(card) {
  const block = el("div", `rule ${card.kind}`);
  const heading = el("div", "rule-head");
  heading.append(symbol(card.kind === "weather" ? "sun" : card.kind, "sym"), el("strong", "", card.title));
  if (card.side) heading.append(el("span", "side-badge", `side ${card.side}`));
  block.append(heading, el("p", "", card.text));
  if (card.table) block.append(countTable(card.table));
  return block;
}

/** The scoring rules panel for the rules in play (a Rules object with `scoring`). */
export function scoringRules(rules) {
  const box = el("div", "rules-list");
  for (const card of rules.scoring || []) box.append(ruleBlock(card));
  if (rules.scoring_note) box.append(el("p", "rule-note", rules.scoring_note));
  return box;
}
