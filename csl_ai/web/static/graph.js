// The win-chance graph of a reviewed game: inline SVG, one line per analysed seat,
// blunders marked, the current decision shown, points clickable.

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/**
 * Draw the graph.
 * - total: the number of decisions in the game (x runs 0..total-1);
 * - series: [{seat, colour, label, points: [{index, win, blunder, label}]}], win in 0..1;
 * - current: the decision index shown now (a vertical marker), or null;
 * - onPick(index): called when a point is clicked (or activated by keyboard).
 */
export function winGraph({ total, series, current = null, onPick = null, rounds = [] }) {
  const width = 760;
  const height = 200;
  const pad = { left: 40, right: 12, top: 12, bottom: 24 };
  const w = width - pad.left - pad.right;
  const h = height - pad.top - pad.bottom;
  const x = (i) => pad.left + (total > 1 ? (i / (total - 1)) * w : w / 2);
  const y = (p) => pad.top + (1 - p) * h;

  const svg = svgEl("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "win-graph",
    role: "img",
    "aria-label": "win chance over the game",
  });
  svg.append(svgEl("rect", { x: pad.left, y: pad.top, width: w, height: h, class: "plot-bg" }));
  for (const start of rounds) {
    if (start > 0) {
      svg.append(svgEl("line", { x1: x(start), x2: x(start), y1: pad.top, y2: pad.top + h, class: "round-line" }));
    }
  }
  for (const p of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(svgEl("line", { x1: pad.left, x2: pad.left + w, y1: y(p), y2: y(p), class: p === 0.5 ? "mid-line" : "grid-line" }));
    const label = svgEl("text", { x: pad.left - 6, y: y(p) + 4, class: "axis-label", "text-anchor": "end" });
    label.textContent = `${Math.round(p * 100)}%`;
    svg.append(label);
  }
  if (current !== null && current !== undefined) {
    svg.append(svgEl("line", { x1: x(current), x2: x(current), y1: pad.top, y2: pad.top + h, class: "current-line" }));
  }
  for (const s of series) {
    const pts = s.points.filter((pt) => pt.win !== null && pt.win !== undefined);
    if (!pts.length) continue;
    const area = `M${x(pts[0].index)},${y(0)} ` + pts.map((pt) => `L${x(pt.index)},${y(pt.win)}`).join(" ")
      + ` L${x(pts[pts.length - 1].index)},${y(0)} Z`;
    if (series.length === 1) svg.append(svgEl("path", { d: area, class: "win-area", fill: s.colour }));
    svg.append(svgEl("path", {
      d: pts.map((pt, i) => `${i ? "L" : "M"}${x(pt.index)},${y(pt.win)}`).join(" "),
      class: "win-line",
      stroke: s.colour,
    }));
    for (const pt of pts) {
      const dot = svgEl("circle", {
        cx: x(pt.index),
        cy: y(pt.win),
        r: pt.blunder ? 6 : pt.close ? 5 : 3.5,
        class: pt.blunder ? "dot blunder" : pt.close ? "dot close" : "dot",
        fill: pt.blunder ? "#d62828" : pt.close ? "#f08c2e" : s.colour,
        "data-index": pt.index,
      });
      const title = svgEl("title");
      title.textContent = pt.label || `${s.label}: ${Math.round(pt.win * 100)}%`;
      dot.append(title);
      if (onPick) {
        dot.setAttribute("tabindex", "0");
        dot.setAttribute("role", "button");
        dot.addEventListener("click", () => onPick(pt.index));
        dot.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            onPick(pt.index);
          }
        });
      }
      svg.append(dot);
      if (pt.blunder || pt.close) {
        const mark = svgEl("text", { x: x(pt.index), y: y(pt.win) - 9, class: pt.blunder ? "blunder-mark" : "close-mark", "text-anchor": "middle" });
        mark.textContent = pt.blunder ? "??" : "?!";
        svg.append(mark);
      }
    }
  }
  return svg;
}
