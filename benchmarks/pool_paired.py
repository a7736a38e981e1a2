"""Pool paired tune_search rows: one difference over several rows, with its interval.

A change is judged on several rows (opponents, sides, player counts), each a pair of
`tune_search.py --save` files on the same deals: the change's run and the baseline's. This
prints each row's paired difference and the pooled one, over every game the pairs have in
common, with a 95% interval that resamples whole deals (a deal of one row and the same
index in another row are different deals, so each row's deals stay apart).

That interval holds the deals' luck, not the search's own: another search stream of the
same build on the same deals reads a few points off (`tune_search.py --stream 1`). A
baseline given as several streams (OLD.json,OLD_STREAM1.json) is compared game by game
with their mean, which halves the variance of that part for two streams.

    python benchmarks/pool_paired.py NEW.json:OLD.json[,OLD2.json] [NEW2.json:OLD3.json ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from strength_metrics import deal_bootstrap  # noqa: E402
from tune_search import load_games  # noqa: E402


class PoolError(Exception):
    """A pair that cannot be pooled: a missing or broken file, or two deal sets."""


Pair = tuple[Path, tuple[Path, ...]]
"""A row: the change's --save file and the baseline's (one or several streams)."""


def _load(path: Path) -> tuple[dict[str, object], dict[tuple[int, int], float]]:
    try:
        return load_games(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PoolError(f"{path}: not a tune_search --save file ({e})") from None


def paired_rows(pairs: list[Pair]) -> dict[tuple[int, int], list[float]]:
    """Every game's difference (new minus the baseline streams' mean), by (row, deal),
    over the games every file of the row played."""
    by_deal: dict[tuple[int, int], list[float]] = {}
    for row, (new_path, old_paths) in enumerate(pairs):
        new_deals, new = _load(new_path)
        olds = []
        for old_path in old_paths:
            old_deals, old = _load(old_path)
            if old_deals != new_deals:
                raise PoolError(f"{new_path}:{old_path}: the two files played other deals ({new_deals} / {old_deals})")
            olds.append(old)
        common = set(new).intersection(*olds)
        for key in sorted(common):
            baseline = sum(old[key] for old in olds) / len(olds)
            by_deal.setdefault((row, key[0]), []).append(new[key] - baseline)
    return by_deal


def pooled_line(by_deal: dict[tuple[int, int], list[float]]) -> str:
    """The mean difference in points with its deal-resampled 95% interval."""
    games = sum(len(v) for v in by_deal.values())
    if not games:
        return "no game in common"
    mean = sum(sum(v) for v in by_deal.values()) / games
    ci = deal_bootstrap(by_deal)
    interval = f"({100 * ci[0]:+.1f}..{100 * ci[1]:+.1f})" if ci is not None else "(one deal: no interval)"
    return f"{100 * mean:+.1f} {interval} over {games} games"


def parse_pair(text: str) -> Pair:
    new, sep, old = text.partition(":")
    olds = tuple(Path(o) for o in old.split(",") if o)
    if not sep or not new or not olds:
        raise argparse.ArgumentTypeError(f"expected NEW.json:OLD.json[,OLD2.json], got {text!r}")
    return Path(new), olds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "pairs", nargs="+", type=parse_pair,
        help="NEW.json:OLD.json[,OLD2.json]: tune_search --save files, the baseline in one or several streams",
    )
    args = parser.parse_args(argv)
    try:
        pooled = paired_rows(args.pairs)
    except PoolError as e:
        parser.exit(2, f"pool_paired.py: {e}\n")
    for row, (new, old) in enumerate(args.pairs):
        games = {key: diffs for key, diffs in pooled.items() if key[0] == row}
        print(f"{new.name} - {'+'.join(o.name for o in old)}: {pooled_line(games)}")
    print(f"pooled: {pooled_line(pooled)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
