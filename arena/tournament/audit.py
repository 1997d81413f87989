"""A tournament's audit (:mod:`arena.tournament.detection`) from the store, within a bound on its cost.

The oracle's searches cost about 60 ms of CPU a deal here (``bench/detection.py``), so one
audit analyses at most ``max_deals`` deals (1,000 by default, 20,000 at most): whole groups of
tables sharing their deals, chosen by a hash of their seed, so that the sample is spread over the
tournament and the same at every audit. It reads only the results it analyses, and a node keeps
the analyses of recent audits (:class:`AnalysisCache`), so an audit asked again during a
tournament pays only for the new matches. A node runs it from a worker thread, one at a time,
and its searches in a child process (:func:`analyse_apart`).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.records import MatchRecord
from arena.tournament.detection import DEFAULT_MARGIN_MS, AuditReport, TableAnalysis, analyse_record, audit
from arena.tournament.jobs import MatchResult
from arena.tournament.summary import ResultSummary

__all__ = [
    "DEFAULT_MAX_DEALS",
    "MAX_DEALS",
    "Analyser",
    "AnalysisCache",
    "TournamentAudit",
    "analyse_apart",
    "analyse_here",
    "audit_tournament",
    "select_tables",
]

#: the most deals one audit analyses by default, and at most
DEFAULT_MAX_DEALS = 1000
MAX_DEALS = 20_000


class Table(Protocol):
    """What choosing the matches to audit reads of a result: a :class:`ResultSummary` is one."""

    @property
    def match_id(self) -> str: ...

    @property
    def seed(self) -> str: ...

    @property
    def deals_played(self) -> int: ...


def select_tables(tables: Sequence[Table], max_deals: int) -> tuple[list[str], int]:
    """The match ids an audit of at most ``max_deals`` deals reads, and the deals there are in all.

    Matches are grouped by seed (the tables of a deck share it: the two legs of a mirror pair);
    whole groups are taken, in an order fixed by a hash of the seed (spread over the tournament,
    the same at every audit), while their deals fit. Matches without a deal are left out.
    """
    groups: dict[str, list[Table]] = defaultdict(list)
    total = 0
    for t in tables:
        if t.deals_played > 0:
            groups[str(t.seed)].append(t)
            total += t.deals_played
    chosen: list[str] = []
    used = 0
    for seed in sorted(groups, key=lambda k: hashlib.sha256(k.encode()).digest()):
        size = sum(t.deals_played for t in groups[seed])
        if used + size <= max_deals:
            chosen += [t.match_id for t in groups[seed]]
            used += size
    return chosen, total


class ResultStore(Protocol):
    """What an audit reads of the arena's store (a :class:`~arena.queue.Broker` is one)."""

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]: ...

    def get_result(self, match_id: str) -> MatchResult | None: ...


class AnalysisCache:
    """The analyses of recent audits, by match id, at most ``max_deals`` deals of them (a record's
    analysis never changes, so a tournament audited again pays only for its new matches)."""

    def __init__(self, max_deals: int = 5000) -> None:
        self.max_deals = max_deals
        self._kept: OrderedDict[str, TableAnalysis] = OrderedDict()
        self._deals = 0
        self._lock = threading.Lock()

    def get(self, match_id: str) -> TableAnalysis | None:
        with self._lock:
            found = self._kept.get(match_id)
            if found is not None:
                self._kept.move_to_end(match_id)
            return found

    def put(self, analysis: TableAnalysis) -> None:
        with self._lock:
            old = self._kept.pop(analysis.match_id, None)
            self._deals -= old.deals if old is not None else 0
            self._kept[analysis.match_id] = analysis
            self._deals += analysis.deals
            while self._deals > self.max_deals and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                self._deals -= dropped.deals


@dataclass(frozen=True, slots=True)
class TournamentAudit:
    """:func:`audit_tournament`'s answer: the report, and what it cost."""

    report: AuditReport
    deals_total: int
    seconds: float


#: analyses records: :func:`analyse_here` or :func:`analyse_apart`
Analyser = Callable[[Sequence[MatchRecord]], list[TableAnalysis]]


def analyse_here(records: Sequence[MatchRecord]) -> list[TableAnalysis]:
    """The records' analyses, in this thread."""
    return [analyse_record(r) for r in records]


class AuditFailed(Exception):
    """The analyses of an audit could not be made (their child process failed or ran too long)."""


def analyse_apart(records: Sequence[MatchRecord], *, seconds_a_deal: float = 2.0) -> list[TableAnalysis]:
    """The records' analyses, in a child process (``python -m arena.tournament.audit``: a fresh
    interpreter, none of the node's threads, whatever started the node). The searches are pure
    Python: in a thread of a node they would hold the interpreter lock its event loop needs, and
    made the honest decisions of its matches three to seven times slower at the median here (1.1
    times from a child process, which takes only a share of the CPU). Raises :class:`AuditFailed`
    when the child fails or takes more than ``seconds_a_deal`` a deal (and a minute)."""
    if not records:
        return []
    timeout = 60 + seconds_a_deal * sum(len(r.deals) + 1 for r in records)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run([sys.executable, "-m", "arena.tournament.audit"], check=False, env=env,
                              input="\n".join(r.to_json() for r in records).encode(), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AuditFailed(f"the analyses took more than {timeout:.0f} s") from None
    except OSError as e:
        raise AuditFailed(f"the analyses could not start: {e}") from None
    if done.returncode != 0:
        why = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise AuditFailed(f"the analyses failed (exit {done.returncode}): {why[:200]}")
    analyses: list[TableAnalysis] = pickle.loads(done.stdout)  # our own child's answer
    return analyses


def _analyse_stdin() -> int:
    """The child of :func:`analyse_apart`: records on standard input, one JSON a line; their
    analyses, pickled, on standard output."""
    records = [MatchRecord.from_json(line) for line in sys.stdin.buffer.read().splitlines() if line]
    sys.stdout.buffer.write(pickle.dumps(analyse_here(records)))
    return 0


def audit_tournament(store: ResultStore, tournament_id: str, *, max_deals: int = DEFAULT_MAX_DEALS,
                     margin_ms: int = DEFAULT_MARGIN_MS, cache: AnalysisCache | None = None,
                     analyse: Analyser = analyse_here) -> TournamentAudit:
    """Audit the finished matches of a tournament, at most ``max_deals`` deals of them
    (:func:`select_tables`); reads only the results it analyses, and analyses only those the
    ``cache`` does not hold."""
    started = time.perf_counter()
    chosen, total = select_tables(store.summaries(tournament_id), max_deals)
    known = {m: a for m in chosen if cache is not None and (a := cache.get(m)) is not None}
    missing = [r.record for r in (store.get_result(m) for m in chosen if m not in known) if r is not None]
    for analysis in analyse(missing):
        known[analysis.match_id] = analysis
        if cache is not None:
            cache.put(analysis)
    tables = [known[m] for m in chosen if m in known]
    return TournamentAudit(audit(tables, margin_ms=margin_ms), total, time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(_analyse_stdin())
