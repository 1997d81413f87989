"""The bots of the stall tests (``test_stalls``), run as processes beside a node that a test holds up:
a prompt one and one late on cue, each writing what it was asked and struck for to a log file::

    python -m tests.referee.stall_bots prompt --address HOST:PORT --log-file prompt.log
    python -m tests.referee.stall_bots late --every 4 --late 1.5 --address HOST:PORT --log-file late.log

(the token in ``$BELOTE_TOKEN``). Both play as the heuristic bot, on the stream's own loop (a
decision takes well under a millisecond); the late one answers every ``--every``-th request it gets
(the first one included) ``--late`` seconds late, each request its own task, so that the others are
answered at once. The log has one line per event, as it happens: ``asked RID BANK_MS ROUND_TRIP_US
AT_US``, ``delayed RID AT_US``, ``struck RID AT_US`` (AT_US: when, on the machine's monotonic clock,
which the node's ``time.perf_counter`` and the tests' share on Linux).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from belote_bot import Action, Bot, HeuristicBot, Observation, Strike


class LoggedBot(Bot):
    """The heuristic bot, writing each request and strike to ``log``."""

    def __init__(self, log: Path | None = None, seed: int | str | None = None) -> None:
        self.inner = HeuristicBot(seed)
        self.log = log

    def note(self, *words: object) -> None:
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(" ".join(map(str, (*words, int(time.monotonic() * 1e6)))) + "\n")

    def on_strike(self, strike: Strike) -> None:
        self.note("struck", strike.request_id)


class PromptBot(LoggedBot):
    act_inline = True

    def act(self, obs: Observation) -> Action:
        self.note("asked", obs.request_id, obs.time_bank_ms, obs.last_round_trip_us)
        answer: Action = self.inner.act(obs)
        return answer


class LateBot(LoggedBot):
    def __init__(self, log: Path | None = None, seed: int | str | None = None, every: int = 4,
                 late: float = 1.5) -> None:
        super().__init__(log, seed)
        self.every = every
        self.late = late
        self.asked = 0

    async def act(self, obs: Observation) -> Action:
        n, self.asked = self.asked, self.asked + 1
        self.note("asked", obs.request_id, obs.time_bank_ms, obs.last_round_trip_us)
        if n % self.every == 0:
            self.note("delayed", obs.request_id)
            await asyncio.sleep(self.late)
        answer: Action = self.inner.act(obs)
        return answer


@dataclass
class BotLog:
    """What a bot's log file says."""

    #: (request id, bank in ms, last round trip in us) of each request, in order
    asked: list[tuple[int, int, int]] = field(default_factory=list)
    delayed: list[int] = field(default_factory=list)
    struck: list[int] = field(default_factory=list)
    #: when (time.monotonic()) each request was asked, and each strike read, by request id
    asked_at: dict[int, float] = field(default_factory=dict)
    struck_at: dict[int, float] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> BotLog:
        log = cls()
        for line in (path.read_text() if path.exists() else "").splitlines():
            what, *numbers = line.split()
            values = [int(n) for n in numbers]
            if what == "asked":
                log.asked.append((values[0], values[1], values[2]))
                log.asked_at[values[0]] = values[3] / 1e6
            elif what == "delayed":
                log.delayed.append(values[0])
            else:
                log.struck.append(values[0])
                log.struck_at[values[0]] = values[1] / 1e6
        return log


def main(argv: Sequence[str] | None = None) -> int:
    from belote_bot.cli import bot_main

    args = list(sys.argv[1:] if argv is None else argv)
    kind = args.pop(0) if args and args[0] in ("prompt", "late") else "prompt"

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--log-file", required=True)
        parser.add_argument("--every", type=int, default=4)
        parser.add_argument("--late", type=float, default=1.5)

    def configure(bot: Bot, parsed: Any) -> None:
        assert isinstance(bot, LoggedBot)
        bot.log = Path(parsed.log_file)
        if isinstance(bot, LateBot):
            bot.every, bot.late = parsed.every, parsed.late

    make = PromptBot if kind == "prompt" else LateBot
    return bot_main(lambda seed: make(None, seed), f"python -m tests.referee.stall_bots {kind}",
                    "A heuristic bot that logs what it is asked (late on cue).", args,
                    options=options, configure=configure)


if __name__ == "__main__":
    sys.exit(main())
