// The scoring cards of the sides in play (RULES.md §4), for the side panel.

import { el, symbol } from "./cards.js";

const SPIDER = { A: [0, 3, 10, 4, 2, 10, 1], B: [0, 10, 3, 2, 1, 10, 1] };
const LEOPARD = { A: [0, 0, 10, 0, 20, 0, 30, 0], B: [0, 0, 0, 15, 0, 0, 30, 0] };
const CANDY_B_RANKS = [3, 10, 6, 0, 0];

/** A count → points table, the last count meaning "or more". */
function countTable(points) {
  const table = el("table", "mini");
  const head = el("tr");
  const body = el("tr");
  head.append(el("th", "", "count"));
  body.append(el("th", "", "points"));
  points.forEach((value, count) => {
    head.append(el("td", "", count === points.length - 1 ? `${count}+` : count));
    body.append(el("td", value ? "pos" : "", value));
  });
  table.append(head, body);
  return table;
}

function ruleBlock(kind, side, title, ...content) {
  const block = el("div", `rule ${kind}`);
  const heading = el("div", "rule-head");
  heading.append(symbol(kind === "weather" ? "sun" : kind, "sym"), el("strong", "", title));
  if (side) heading.append(el("span", "side-badge", `side ${side}`));
  block.append(heading);
  for (const item of content) block.append(typeof item === "string" ? el("p", "", item) : item);
  return block;
}

/** The scoring rules panel for the rules in play: `rules.sides` and `rules.star_option`. */
export function scoringRules(rules) {
  const sides = rules.sides || { candy: "A", spider: "A", leopard: "A", star: "A" };
  const box = el("div", "rules-list");
  box.append(
    sides.candy === "B"
      ? ruleBlock(
        "candy", "B", "Candy",
        "Players are ranked by candies, most first (ties share a rank). Points by rank: "
          + CANDY_B_RANKS.map((p, i) => `${i + 1}${["st", "nd", "rd", "th", "th"][i]} ${p}`).join(", ") + ".",
      )
      : ruleBlock("candy", "A", "Candy", "You score the candies of every player who has strictly fewer candies than you."),
  );
  box.append(ruleBlock("spider", sides.spider, "Spider", countTable(SPIDER[sides.spider] || SPIDER.A)));
  box.append(ruleBlock("leopard", sides.leopard, "Leopard", countTable(LEOPARD[sides.leopard] || LEOPARD.A)));
  const starA = rules.star_option === "double"
    ? "2 stars: −5. All 3: your candy + spider + leopard points count double."
    : "2 stars: −5. All 3: the star scores twice your candy + spider + leopard points.";
  box.append(
    sides.star === "B"
      ? ruleBlock("star", "B", "Shooting star", "2 stars: −10. All 3: you win the game outright.")
      : ruleBlock("star", "A", "Shooting star", starA),
  );
  box.append(ruleBlock(
    "weather", "", "Good weather",
    "Bet that you win no sky card this round: +7 if you win none; otherwise every sky card you won "
      + "this round turns face down (−2 each, counting for nothing else).",
  ));
  box.append(el("p", "rule-note", "×2 cards count two elements. Blue is trump: the highest blue wins a trick, "
    + "else the highest card of the colour led. Follow the colour led if your pile holds it."));
  return box;
}
