"""Who plays whom: round-robin schedules, knockout brackets and Swiss pairings.

Pure functions of names, counts and seeds; :mod:`arena.tournament.tournament`
turns their pairs into match jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

Pair = tuple[str, str]

#: node budget of one Swiss matching search; past it the level counts as infeasible
SEARCH_BUDGET = 200_000


# ---------------------------------------------------------------- round-robin
def circle_rounds(bots: Sequence[str]) -> list[list[Pair]]:
    """Every unordered pairing once, in rounds where each bot plays at most once (circle method).

    Listing the pairings round by round spreads each bot's matches through the
    schedule, so a queue drained in order never waits on one busy bot.
    """
    players: list[str | None] = list(bots)
    if len(players) % 2:
        players.append(None)
    n = len(players)
    rounds: list[list[Pair]] = []
    for r in range(n - 1):
        pairs: list[Pair] = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is not None and b is not None:
                # alternate the first board so the fixed bot is not always first
                pairs.append((b, a) if i == 0 and r % 2 else (a, b))
        rounds.append(pairs)
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


# ------------------------------------------------------------------- knockout
def bracket_seeds(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order for a power-of-two ``size``.

    Slot ``i`` of the first round is seeds ``[2i], [2i+1]``: 1 v size, and the
    top two seeds meet only in the final, the top four only in the semifinals.
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"a bracket size is a power of two, not {size}")
    seeds = [1]
    while len(seeds) < size:
        total = 2 * len(seeds) + 1
        seeds = [s for top in seeds for s in (top, total - top)]
    return seeds


def first_round(bots: Sequence[str]) -> list[tuple[str | None, str | None]]:
    """First-round slots of a bracket seeded in the order of ``bots``; None is a bye.

    The bracket is the next power of two; the missing seeds are the lowest, so
    the byes go to the top seeds.
    """
    n = len(bots)
    size = 1 << max(0, (n - 1).bit_length())
    seeds = bracket_seeds(size)
    names = [bots[s - 1] if s <= n else None for s in seeds]
    return [(names[2 * i], names[2 * i + 1]) for i in range(size // 2)]


# ---------------------------------------------------------------------- Swiss
def swiss_pairings(
    ranked: Sequence[str], met: Mapping[frozenset[str], int], byes: Mapping[str, int],
) -> tuple[list[Pair], str | None]:
    """Pair ``ranked`` (best first) for one Swiss round; returns (pairs, bye).

    - Near scores: the best unpaired bot meets the best-ranked bot it may
      meet such that the rest can still be paired (the lexicographically
      first valid pairing in rank order); pairs list the higher-ranked first.
    - No repeated pairing when avoidable: pairs that met ``k`` times are
      allowed only if no pairing exists at a lower ``k``.
    - With an odd number, a bye: to the bot with the fewest byes, the
      lowest-ranked first, whose bye leaves a pairing at the lowest ``k``.
      Avoiding a repeat comes before avoiding a second bye.
    """
    players = list(ranked)
    top = max(met.values(), default=0)
    for level in range(top + 1):
        def ok(x: str, y: str, level: int = level) -> bool:
            return met.get(frozenset((x, y)), 0) <= level

        if len(players) % 2 == 0:
            found = _match(players, ok)
            if found is not None:
                return found, None
            continue
        positions = range(len(players))
        for c in sorted(positions, key=lambda i: (byes.get(players[i], 0), -i)):
            rest = players[:c] + players[c + 1:]
            found = _match(rest, ok)
            if found is not None:
                return found, players[c]
    raise AssertionError("every pair is allowed at the top level")  # pragma: no cover


class _OutOfBudget(Exception):
    pass


def _match(players: Sequence[str], ok: Callable[[str, str], bool]) -> list[Pair] | None:
    """The lexicographically first perfect matching of ``players`` under ``ok``, or None."""
    n = len(players)
    full = (1 << n) - 1
    failed: set[int] = set()
    budget = [SEARCH_BUDGET]

    def solve(mask: int) -> list[Pair] | None:
        if mask == full:
            return []
        if mask in failed:
            return None
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfBudget
        i = (~mask & (mask + 1)).bit_length() - 1  # lowest unpaired
        for j in range(i + 1, n):
            if not mask >> j & 1 and ok(players[i], players[j]):
                rest = solve(mask | 1 << i | 1 << j)
                if rest is not None:
                    return [(players[i], players[j]), *rest]
        failed.add(mask)
        return None

    try:
        return solve(0)
    except _OutOfBudget:
        return None
