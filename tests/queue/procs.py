"""Functions run in child processes (spawned, so they must be importable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.queue.broker import Broker
from arena.queue.embedded import EmbeddedBroker
from arena.tournament import MatchResult

REDIS_URL = "redis://127.0.0.1:6379/0"


def open_store(spec: tuple[str, str, str]) -> Broker:
    kind, path, prefix = spec
    if kind == "embedded":
        return EmbeddedBroker(Path(path))
    from arena.queue.redis_broker import RedisBroker

    return RedisBroker(REDIS_URL, prefix=prefix)


def write_once(spec: tuple[str, str, str], result: MatchResult, start: Any, out: Any) -> None:
    """Wait for the others, write ``result``, report whether this process wrote it."""
    broker = open_store(spec)
    try:
        start.wait(30)
        out.put(broker.write_result(result))
    finally:
        broker.close()


def write_all(spec: tuple[str, str, str], results: list[MatchResult], start: Any, out: Any) -> None:
    """Wait for the others, write ``results`` in order, report how many this process wrote."""
    broker = open_store(spec)
    try:
        start.wait(30)
        out.put(sum(broker.write_result(r) for r in results))
    finally:
        broker.close()


def apply_mixed(spec: tuple[str, str, str], pool: str, start: Any, out: Any) -> None:
    """Wait for the others, rate the pool's queued mixed games, report how many this process rated."""
    broker = open_store(spec)
    try:
        start.wait(30)
        out.put(broker.apply_mixed(pool))
    finally:
        broker.close()


def run_schedules(spec: tuple[str, str, str], now: float, start: Any, out: Any) -> None:
    """Wait for the others, make the schedules' occurrences due at ``now``, report the ids made here."""
    from arena.tournament.schedule import Schedules

    broker = open_store(spec)
    try:
        start.wait(30)
        out.put(Schedules(broker).run_due(now)[0])
    finally:
        broker.close()
