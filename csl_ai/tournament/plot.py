"""The standings picture: each agent's win share with its 95% interval, as a PNG.

Drawn with matplotlib's Agg canvas directly (no pyplot), so it needs no display and
leaves no global figure state behind.
"""

from __future__ import annotations

import math
import os

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from csl_ai.tournament.stats import Summary


def plot_win_share(summary: Summary, path: str | os.PathLike[str]) -> None:
    """Write a PNG: win share per agent (best at the top) with interval bars.

    The dashed line is 1/players, the share every agent would get if all were equal.
    """
    standings = list(reversed(summary.standings))
    labels = [s.label for s in standings]
    values = [s.win_share.value for s in standings]
    lower = [max(s.win_share.value - s.win_share.low, 0.0) for s in standings]
    upper = [max(s.win_share.high - s.win_share.value, 0.0) for s in standings]
    fig = Figure(figsize=(7.0, 1.2 + 0.5 * len(labels)), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ys = range(len(labels))
    ax.barh(ys, values, color="#7aa6d6", height=0.6)
    ax.errorbar(values, ys, xerr=[lower, upper], fmt="none", ecolor="#1b3a5c", capsize=4, lw=1.2)
    ax.axvline(1 / summary.players, color="#888888", ls="--", lw=1, label=f"1/{summary.players} (equal)")
    ax.set_yticks(list(ys), labels)
    highs = [s.win_share.high for s in standings if not math.isnan(s.win_share.high)]
    ax.set_xlim(0, max([1 / summary.players, *highs]) * 1.15)
    ax.set_xlabel("win share (shared win = 1/k), 95% bootstrap interval over deals")
    ax.set_title(f"{summary.games} games · {summary.deals} deals · {summary.players} players")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(os.fspath(path), format="png")
