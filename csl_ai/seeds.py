"""Every seed csl_ai derives from another, and every fresh one it draws: one home, so that
seeded games, reviews and tournaments reproduce exactly.

Each derivation below is fixed: changing one changes the games that seeds replay.

- `derive_seed`: a tournament's seeds (each deal, each seat of each game, the schedule's
  shuffles, each training generation), from the tournament seed and a purpose;
- `labelled_seed`: a table's AI seats and hints from the game seed, a review's searches
  from the review seed;
- `decision_seed`: each decision of a seeded search agent, from its base seed and where
  the decision falls (by `joined_seed`, which the benchmark scripts use for their seats);
- `thread_seed`, `pool_seed` and `core_seed`: the seeds one search hands the C core;
- `fresh_seed`: a secret seed from the operating system, for a game or a run without one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from csl_ai.game import Observation

SEED_BITS: Final = 63
"""Bits of a derived seed, and of a game's seed."""
MAX_SEED: Final = (1 << SEED_BITS) - 1
"""Largest game seed."""
MASK64: Final = (1 << 64) - 1
"""A seed as the C core takes it: 64 bits."""
_GOLDEN: Final = 0x9E3779B97F4A7C15
"""2**64 / golden ratio: the step between the seeds of a search's threads."""
_POOL_SALT: Final = 0xD1B54A32D192ED03
"""Sets the world pool's stream apart from the threads' streams of the same search."""


def fresh_seed(bits: int = SEED_BITS) -> int:
    """A secret seed of `bits` bits from the operating system (not reproducible)."""
    return random.SystemRandom().randrange(1 << bits)


def derive_seed(seed: int, *parts: int | str) -> int:
    """A 63-bit seed for one purpose (named by parts), independent of every other: a hash
    of the seed and parts."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & MAX_SEED


def labelled_seed(seed: int, label: str) -> int:
    """A 63-bit seed derived from a seed and a label (``"agent2"``, ``"hint3"``)."""
    return random.Random(f"{seed}:{label}").getrandbits(SEED_BITS)


def joined_seed(*parts: object) -> int:
    """A 63-bit seed hashed from parts written out and joined by ``|``."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - SEED_BITS)


def decision_seed(base: int, obs: Observation) -> int:
    """A seed for one decision: a hash of the base seed and where the decision falls.

    The decision is located by seat, round, phase, cards played so far in the round, the
    seat's hand and the round's line, so every decision of a game gets its own seed and
    replaying the game gives the same seeds.
    """
    current = obs.current
    plays = sum(len(trick.plays) for trick in current.tricks)
    line = ",".join(map(str, current.line))
    return joined_seed(base, obs.seat, len(obs.rounds), obs.phase.value, plays, obs.hand, line)


def core_seed(seed: int) -> int:
    """seed cut to the 64 bits the C core takes."""
    return seed & MASK64


def thread_seed(seed: int, thread: int) -> int:
    """The seed of one thread of a root-parallel search."""
    return (seed + thread * _GOLDEN) & MASK64


def pool_seed(seed: int) -> int:
    """The seed of a search's world pool, apart from its threads' seeds."""
    return (seed ^ _POOL_SALT) & MASK64


__all__: Sequence[str] = (
    "MASK64",
    "MAX_SEED",
    "SEED_BITS",
    "core_seed",
    "decision_seed",
    "derive_seed",
    "fresh_seed",
    "joined_seed",
    "labelled_seed",
    "pool_seed",
    "thread_seed",
)
