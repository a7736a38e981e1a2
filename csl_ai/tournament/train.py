"""Expert iteration for the learned card policy, on the self-play harness (Ray or in-process).

Each generation the search plays itself at every player count asked for, with the current
card policy in its playouts; every card decision with a choice keeps the search's visit
counts and the legal cards' features (training rows, csl_ai.tournament.selfplay, read back
by csl_ai.tournament.rows), and the policy is refitted to those visit shares
(csl_ai.policy.fit), starting from the last one.
Generation 0 starts from weights that imitate the playout rules. Games, agents' seeds and
the fit are all fixed by the seed, and rows are sorted before fitting, so a run reproduces
the same weights whatever the number of workers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np

from csl_ai.agents import Agent, IsmctsAgent, make_agent
from csl_ai.policy import CardPolicy, Example, cross_entropy, fit, rules_policy
from csl_ai.rules import RulesConfig
from csl_ai.seeds import derive_seed
from csl_ai.tournament.harness import TRAINING_FILE, RunOptions, connect_ray, start, where_to_play
from csl_ai.tournament.rows import TrainingRows, load_training_rows
from csl_ai.tournament.runner import TournamentConfig, TournamentError

MAX_GENERATIONS: Final = 50


@dataclass(frozen=True)
class TrainConfig:
    """What fixes a training run's result."""

    players: tuple[int, ...] = (2, 3, 4, 5)
    games: int = 200
    """Self-play games per player count and generation."""
    generations: int = 2
    iterations: int = 2000
    """Search iterations per decision in self-play."""
    seed: int = 1
    l2: float = 1e-3
    start_strength: float = 3.0
    """Generation 0's policy: the rules' card with weight this (rules_policy)."""

    def __post_init__(self) -> None:
        if not self.players or any(p not in (2, 3, 4, 5) for p in self.players):
            raise TournamentError(f"players: each must be 2..5, got {list(self.players)!r}")
        if len(set(self.players)) != len(self.players):
            raise TournamentError(f"players: each count once, got {list(self.players)!r}")
        for name, value, top in (
            ("games", self.games, 1_000_000),
            ("generations", self.generations, MAX_GENERATIONS),
            ("iterations", self.iterations, 10_000_000),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise TournamentError(f"{name}: must be an integer 1..{top}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise TournamentError(f"seed: must be a non-negative integer, got {self.seed!r}")


class PolicyAgentFactory:
    """Builds the self-play agents from their spec, playing with the given card policy
    (a picklable callable, so Ray workers can build them)."""

    def __init__(self, weights: Sequence[float]) -> None:
        self.weights = tuple(float(w) for w in weights)

    def __call__(self, spec: str, seed: int) -> Agent:
        agent = make_agent(spec, seed)
        if isinstance(agent, IsmctsAgent):
            agent.config = replace(agent.config, card_policy="learned", card_weights=self.weights)
        return agent


@dataclass(frozen=True)
class Generation:
    """What one generation learnt."""

    index: int
    examples: int
    loss_before: float
    """Mean cross-entropy of the previous policy to this generation's visit shares."""
    loss_after: float
    top_agreement: float
    """Share of decisions where the new policy's likeliest card is the search's most visited."""
    weights: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.index,
            "examples": self.examples,
            "loss_before": round(self.loss_before, 6),
            "loss_after": round(self.loss_after, 6),
            "top_agreement": round(self.top_agreement, 6),
            "weights": [round(w, 6) for w in self.weights],
        }


def card_examples(rows: TrainingRows) -> list[Example]:
    """The card decisions with a choice, a search and some visits, in (job, step) order:
    the legal cards' features (ascending card index) and the search's visit shares."""
    play = rows.play
    out = []
    for i in np.flatnonzero(play.searched & play.has_card_features):
        cards = np.flatnonzero(play.legal[i])
        counts = play.visits[i, cards].astype(float)
        if len(cards) < 2 or counts.sum() <= 0:
            continue
        out.append(Example(play.card_features[i, cards], counts / counts.sum()))
    return out


def train(
    config: TrainConfig,
    out: str | os.PathLike[str],
    options: RunOptions = RunOptions(),
    on_generation: Callable[[Generation], None] | None = None,
) -> tuple[CardPolicy, list[Generation]]:
    """Run expert iteration into the folder out (one self-play run per generation and
    player count); returns the final policy and each generation's figures.

    Unless the options say to play in this process, Ray is started (or joined) once for
    the whole training, not once per self-play run."""
    root = Path(out)
    if root.exists():
        raise TournamentError(f"out: {str(root)!r} already exists; choose a new folder")
    root.mkdir(parents=True)
    started_ray = where_to_play(options) != "here" and connect_ray(options)
    try:
        return _train(config, root, options, on_generation)
    finally:
        if started_ray:
            import ray

            ray.shutdown()


def _train(
    config: TrainConfig,
    root: Path,
    options: RunOptions,
    on_generation: Callable[[Generation], None] | None,
) -> tuple[CardPolicy, list[Generation]]:
    weights = np.array(rules_policy(config.start_strength).weights)
    generations: list[Generation] = []
    spec = f"ismcts:iters={config.iterations}"
    for g in range(config.generations):
        examples: list[Example] = []
        for players in config.players:
            run = TournamentConfig(
                agents=(spec,),
                rules=RulesConfig(players=players),
                games=config.games,
                seed=derive_seed(config.seed, "train", g, players) & ((1 << 62) - 1),
                mode="selfplay",
                training_rows=True,
            )
            folder = root / f"gen{g}-{players}p"
            start(run, folder, options, factory=PolicyAgentFactory(weights))
            examples += card_examples(load_training_rows(folder / TRAINING_FILE))
        if not examples:
            raise TournamentError("self-play gave no card decision to learn from")
        before = cross_entropy(weights, examples)
        weights, after = fit(examples, start=weights, l2=config.l2)
        agree = sum(
            int(np.argmax(ex.features @ weights) == np.argmax(ex.target)) for ex in examples
        ) / len(examples)
        generation = Generation(g, len(examples), before, after, agree, tuple(map(float, weights)))
        generations.append(generation)
        if on_generation is not None:
            on_generation(generation)
    policy = CardPolicy(
        tuple(round(float(w), 6) for w in weights),
        {
            "made": "csl train",
            "players": list(config.players),
            "games": config.games,
            "generations": config.generations,
            "iterations": config.iterations,
            "seed": config.seed,
            "l2": config.l2,
            "history": [g.to_json() for g in generations],
        },
    )
    policy.save(root / "card_policy.json")
    return policy, generations
