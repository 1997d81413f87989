"""Counting the Redis commands a broker sends: what a queue operation costs in round trips."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def redis_commands(broker: Any) -> Iterator[list[str]]:
    """The names of the Redis commands ``broker`` sends inside the block, in order."""
    commands: list[str] = []
    execute: Any = broker._redis.execute_command

    def counted(*args: Any, **options: Any) -> Any:
        commands.append(str(args[0]))
        return execute(*args, **options)

    broker._redis.execute_command = counted
    try:
        yield commands
    finally:
        broker._redis.execute_command = execute
