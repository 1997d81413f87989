"""Where ``act`` runs, and how its result becomes an answer: :class:`Acts`, one per stream.

A plain ``act`` runs in a worker thread of the stream's pool, its answer
posted back to the event loop; with ``Bot.act_inline`` it runs on the loop;
an ``async def act`` (or a plain one that returns an awaitable) is awaited as
a task on the loop. What ``act`` returns is checked against the legal
actions; an exception or an illegal result is logged and answered with the
engine's ``NO_ACTION`` code, so the referee strikes at once instead of
waiting. When the stream ends, the answers of acts still running are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from belote.arena.v1 import bot_service_pb2 as bs

from arena.engine.actions import NO_ACTION
from belote_bot.bot import ActResult, Bot
from belote_bot.errors import IllegalAnswerError
from belote_bot.types import Action, Observation

__all__ = ["ActMode", "Acts", "act_mode", "legal_code"]

log = logging.getLogger("belote_bot")

#: where ``act`` runs: "thread" (a plain act, by default), "inline" (``Bot.act_inline``), "async"
ActMode = Literal["thread", "inline", "async"]

MODE_TEXT: dict[ActMode, str] = {
    "thread": "act in worker threads", "inline": "act inline on the event loop",
    "async": "async act on the event loop",
}


def act_mode(bot: Bot) -> ActMode:
    if inspect.iscoroutinefunction(bot.act):
        return "async"
    return "inline" if bot.act_inline else "thread"


class Acts:
    """The acts of one stream: each request's ``act`` run where ``mode`` says, its answer put in
    ``outbox`` (an :class:`~belote.arena.v1.bot_service_pb2.ActionReply`) while the stream is open.

    The thread pool is made on first use, with ``threads`` threads at most,
    each started only when no idle one is left.
    """

    def __init__(
        self, bot: Bot, mode: ActMode, outbox: asyncio.Queue[Any], threads: int, thread_name: str,
    ) -> None:
        self.bot = bot
        self.mode = mode
        self.outbox = outbox
        self.loop = asyncio.get_running_loop()
        self.tasks: set[asyncio.Task[None]] = set()
        #: acts submitted to the pool and not answered yet
        self.in_threads = 0
        self.open = True
        self._threads = threads
        self._thread_name = thread_name
        self._pool: ThreadPoolExecutor | None = None

    @property
    def pending(self) -> int:
        """Requests whose act has not answered yet."""
        return self.in_threads + len(self.tasks)

    def request(self, obs: Observation) -> None:
        """On the loop: act on one request."""
        if self.mode == "thread":
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=self._thread_name)
            try:
                self._pool.submit(self._act_in_thread, obs)
            except RuntimeError:  # the pool is shut down: the stream is gone
                return
            self.in_threads += 1
            return
        try:
            result = self.bot.act(obs)
        except Exception:
            _log_act_error(obs)
            self._answer(obs.request_id, NO_ACTION)
            return
        if isinstance(result, Awaitable):
            self._await(obs, result)
            return
        self._answer(obs.request_id, _code(obs, result))

    async def close(self) -> None:
        """The stream ended: drop what is still running; the pool's threads go as their acts return."""
        self.open = False
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # ----------------------------------------------------------- internals
    def _answer(self, request_id: int, code: int) -> None:
        if self.open:
            self.outbox.put_nowait(bs.ActionReply(request_id=request_id, action=code))

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        """From a worker thread: run ``callback(*args)`` on the loop."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the client has stopped
            self.loop.call_soon_threadsafe(callback, *args)

    def _act_in_thread(self, obs: Observation) -> None:
        """In a worker thread: act, then post the answer (or an awaitable result) to the loop."""
        try:
            result = self.bot.act(obs)
        except Exception:
            _log_act_error(obs)
            self._post(self._answered_in_thread, obs.request_id, NO_ACTION)
            return
        if isinstance(result, Awaitable):  # a plain act that returned an awaitable: awaited on the loop
            self._post(self._await_from_thread, obs, result)
            return
        self._post(self._answered_in_thread, obs.request_id, _code(obs, result))

    def _answered_in_thread(self, request_id: int, code: int) -> None:
        self.in_threads -= 1
        self._answer(request_id, code)

    def _await_from_thread(self, obs: Observation, pending: Awaitable[ActResult]) -> None:
        self.in_threads -= 1
        if not self.open:
            if inspect.iscoroutine(pending):
                pending.close()
            return
        self._await(obs, pending)

    def _await(self, obs: Observation, pending: Awaitable[ActResult]) -> None:
        task = asyncio.ensure_future(self._act_later(obs, pending))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _act_later(self, obs: Observation, pending: Awaitable[ActResult]) -> None:
        try:
            result = await pending
        except Exception:
            _log_act_error(obs)
            code = NO_ACTION
        else:
            code = _code(obs, result)
        self._answer(obs.request_id, code)


def _log_act_error(obs: Observation) -> None:
    log.exception("act failed for match %s, seat %d, request %d; answered as illegal",
                  obs.match_id, obs.seat, obs.request_id)


def _code(obs: Observation, result: object) -> int:
    """The code of what ``act`` returned, or ``NO_ACTION`` (logged) if it is not legal."""
    try:
        return legal_code(obs, result)
    except Exception:
        log.exception("act gave no legal action for match %s, seat %d, request %d; answered as illegal",
                      obs.match_id, obs.seat, obs.request_id)
        return NO_ACTION


def legal_code(obs: Observation, result: object) -> int:
    """The wire code of ``result`` (an Action, its text or its code) if it is legal for ``obs``.

    Raises :class:`IllegalAnswerError` (or the parse error of a malformed text).
    """
    if isinstance(result, Action):
        code = result.code
    elif isinstance(result, str):
        code = Action.parse(result).code
    elif isinstance(result, int) and not isinstance(result, bool):
        code = int(result)
    else:
        raise IllegalAnswerError(
            f"act returned {result!r}; expected an Action, its text (such as 'JH') or its code"
        )
    if code not in obs.legal_codes:
        legal = ", ".join(map(str, obs.legal_actions)) or "none"
        raise IllegalAnswerError(f"act returned {_text(code)!r}, illegal for seat {obs.seat}; legal: {legal}")
    return code


def _text(code: int) -> str:
    try:
        return str(Action.of(code))
    except ValueError:
        return f"code {code}"
