"""The versions of a bot: each version it connected with, kept in its registry entry.

A bot's stream may say its own version in its Hello (``bot_version``: the
SDK's ``Bot.version``). Each version the bot connected with is a
:class:`Version` of its :class:`~arena.referee.registry.BotEntry`: when it was
first and last seen, how many matches it played, and where it stands:

- ``promoted``: the version the bot plays as in tournaments and the ladder,
  and the one the leaderboard shows. A bot's first version is promoted as it
  is first seen (there is nothing to test it against); later ones by an SPRT
  or by hand (``how``: ``first``, ``sprt`` or ``hand``). Exactly one version
  of a versioned bot is promoted.
- ``candidate``: a newer version, waiting for its test (an SPRT on ladder
  slots against the promoted version: :mod:`arena.node.versions`) or for a
  promotion by hand;
- ``testing``: its SPRT is under way (``test`` is the SPRT tournament's id);
- ``rejected``: its SPRT accepted H0: it is no better than the promoted one
  by the test's bounds; its owner sees the evidence on the bot's versions
  page, and may still promote it by hand;
- ``undecided``: its SPRT ended without a verdict (its most pairs played, or
  cancelled), which says nothing against it: a test decides only on evidence
  (two versions that always pass have their every pair set aside, as no
  card was played). It is not tested again by itself; its owner may promote
  it by hand, or connect a newer version;
- ``retired``: it was promoted once, and another version was promoted since.

Every change is a function of the stored entry (:func:`seen`,
:func:`promote`, :func:`start_test`, :func:`decide`, :func:`add_games`) that the
registry applies atomically (:meth:`~arena.referee.registry.BotRegistry.update_versions`),
so two nodes deciding the same test at once write it once. A version label is
1 to 32 letters, digits, ``_``, ``.`` or ``-``; a bot keeps at most
:data:`MAX_VERSIONS` (the oldest retired or rejected go first), so an entry's
size is bounded whatever its owner sends.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from arena.records import VERSION_JOIN

State = Literal["promoted", "candidate", "testing", "rejected", "undecided", "retired"]
STATES: tuple[State, ...] = ("promoted", "candidate", "testing", "rejected", "undecided", "retired")
#: the states of a version whose test ended (it waits for no test)
ENDED: tuple[State, ...] = ("retired", "rejected", "undecided")
How = Literal["", "first", "sprt", "hand"]

#: the most versions a bot's entry keeps
MAX_VERSIONS = 16
#: a version's last_seen is written again only when it moved this much (a bot that reconnects often
#: does not write its entry on every stream)
SEEN_EVERY_S = 60
VERSION_RULE = "1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: joins a bot's name and a version in a player's key: ``name@version`` (never in a bot's name)
SEP = VERSION_JOIN


class VersionError(ValueError):
    """A bad version label, an unknown version, or a change that cannot be made."""


def valid_version(text: object) -> bool:
    return isinstance(text, str) and _VERSION.fullmatch(text) is not None


def player_key(name: str, version: str) -> str:
    """The key a match names one version of a bot by (``bot@2``); the bot's name alone when ``version``
    is empty (whichever version it plays as: the promoted one)."""
    return f"{name}{SEP}{version}" if version else name


def split_key(key: str) -> tuple[str, str]:
    """(name, version) of a player's key; version "" for a bare name."""
    name, _, version = key.partition(SEP)
    return name, version


@dataclass(frozen=True)
class Version:
    version: str
    #: unix seconds
    first_seen: int
    last_seen: int
    state: State = "candidate"
    #: how it was promoted (a promoted or retired version): first, sprt, hand
    how: How = ""
    #: matches it played (counted by the nodes, written a few at a time)
    games: int = 0
    #: its SPRT tournament's id, once one started
    test: str = ""
    #: the version its SPRT tested it against
    against: str = ""
    #: the SPRT's end: its decision (H0, H1, "" undecided) and LLR, the pairs and the Elo estimate
    decision: str = ""
    llr: float = 0.0
    pairs: int = 0
    elo: float | None = None
    #: the ends of the Elo estimate's 95% interval (None: unbounded on that side, or no estimate)
    elo_low: float | None = None
    elo_high: float | None = None
    #: the pairs its test set aside (a leg with no card played: no evidence)
    set_aside: int = 0
    #: when its state last changed (unix seconds)
    changed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Version:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def check_version(version: str) -> str:
    if not valid_version(version):
        raise VersionError(f"bad version {version[:40]!r}: {VERSION_RULE}")
    return version


def find(versions: Sequence[Version], version: str) -> Version | None:
    return next((v for v in versions if v.version == version), None)


def promoted(versions: Sequence[Version]) -> Version | None:
    return next((v for v in versions if v.state == "promoted"), None)


def next_candidate(versions: Sequence[Version]) -> Version | None:
    """The candidate to test next: the first seen of those waiting (one test a bot at a time)."""
    waiting = [v for v in versions if v.state == "candidate"]
    return min(waiting, key=lambda v: (v.first_seen, v.version)) if waiting else None


def _replace(versions: Sequence[Version], new: Version) -> tuple[Version, ...]:
    return tuple(new if v.version == new.version else v for v in versions)


def _bounded(versions: Sequence[Version]) -> tuple[Version, ...]:
    """At most MAX_VERSIONS: the oldest retired, rejected or undecided go first (never the promoted
    one, a candidate or a version under test)."""
    out = list(versions)
    while len(out) > MAX_VERSIONS:
        gone = [v for v in out if v.state in ENDED]
        if not gone:
            break
        out.remove(min(gone, key=lambda v: (v.last_seen, v.version)))
    return tuple(out)


def seen(versions: Sequence[Version], version: str, now: int) -> tuple[Version, ...] | None:
    """``version`` connected at ``now``: the new versions, or None when nothing needs writing.

    A new version is promoted if the bot has none promoted, else a candidate. A bot with
    MAX_VERSIONS versions none of which can go keeps its versions: the new one plays unrecorded.
    """
    check_version(version)
    known = find(versions, version)
    if known is not None:
        if now - known.last_seen < SEEN_EVERY_S:
            return None
        return _replace(versions, dataclasses.replace(known, last_seen=now))
    first = promoted(versions) is None
    new = Version(version, now, now, state="promoted" if first else "candidate",
                  how="first" if first else "", changed=now)
    out = _bounded((*versions, new))
    return out if find(out, version) is not None else None


def promote(versions: Sequence[Version], version: str, how: How, now: int,
            test: str = "") -> tuple[Version, ...]:
    """``version`` becomes the promoted one (``how``: sprt or hand); the one promoted before retires.

    With ``test``, only if the version is still under that test (a decision applied twice, by two
    nodes, changes nothing the second time: :class:`VersionError`).
    """
    v = find(versions, version)
    if v is None:
        raise VersionError(f"this bot has no version {version[:40]!r}")
    if test and (v.state != "testing" or v.test != test):
        raise VersionError(f"version {version} is not under test {test} (now {v.state})")
    if v.state == "promoted":
        raise VersionError(f"version {version} is already the promoted one")
    out = []
    for x in versions:
        if x.state == "promoted":
            x = dataclasses.replace(x, state="retired", changed=now)
        if x.version == version:
            x = dataclasses.replace(x, state="promoted", how=how, changed=now)
        elif x.state == "testing":  # tested against the version promoted before: moot, tested again
            x = dataclasses.replace(x, state="candidate", test="", against="", changed=now)
        out.append(x)
    return tuple(out)


def start_test(versions: Sequence[Version], version: str, test: str, against: str,
               now: int) -> tuple[Version, ...]:
    """``version``, a candidate, is under test ``test`` against the promoted ``against``."""
    v = find(versions, version)
    if v is None or v.state != "candidate":
        raise VersionError(f"version {version[:40]} is not a candidate waiting for its test")
    p = promoted(versions)
    if p is None or p.version != against:
        raise VersionError(f"version {against[:40]} is not the promoted one")
    return _replace(versions, dataclasses.replace(v, state="testing", test=test, against=against,
                                                 decision="", llr=0.0, pairs=0, elo=None, elo_low=None,
                                                 elo_high=None, set_aside=0, changed=now))


def decide(versions: Sequence[Version], version: str, test: str, decision: str, llr: float,
           pairs: int, elo: float | None, now: int, *, elo_low: float | None = None,
           elo_high: float | None = None, set_aside: int = 0) -> tuple[Version, ...]:
    """The SPRT ``test`` of ``version`` ended: H1 promotes it (by sprt), H0 rejects it, and no
    decision (its most pairs played, or a test cancelled: ``decision`` "") leaves it undecided."""
    v = find(versions, version)
    if v is None or v.state != "testing" or v.test != test:
        raise VersionError(f"version {version[:40]} is not under test {test}")
    evidence = dataclasses.replace(v, decision=decision, llr=llr, pairs=pairs, elo=elo, elo_low=elo_low,
                                   elo_high=elo_high, set_aside=set_aside)
    versions = _replace(versions, evidence)
    if decision == "H1":
        return promote(versions, version, "sprt", now, test=test)
    ended: State = "rejected" if decision == "H0" else "undecided"
    return _replace(versions, dataclasses.replace(evidence, state=ended, changed=now))


def back_to_candidate(versions: Sequence[Version], version: str, test: str,
                      now: int) -> tuple[Version, ...]:
    """The test of ``version`` cannot go on (its tournament is gone, its base was promoted by hand
    meanwhile): it waits for a new test."""
    v = find(versions, version)
    if v is None or v.state != "testing" or v.test != test:
        raise VersionError(f"version {version[:40]} is not under test {test}")
    return _replace(versions, dataclasses.replace(v, state="candidate", test="", against="", changed=now))


def add_games(versions: Sequence[Version], games: Mapping[str, int]) -> tuple[Version, ...]:
    return tuple(dataclasses.replace(v, games=v.games + games[v.version]) if games.get(v.version) else v
                 for v in versions)
