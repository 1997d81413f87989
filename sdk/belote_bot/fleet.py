"""Play a bot on a referee, or on every node of a cluster: :func:`run`, :func:`run_async`.

:class:`Fleet` keeps one :class:`~belote_bot.client.Client` per node: the
first address, then every peer it names. With ``verbose`` (the default) each
stream logs one line when it is welcomed and one per match end; a script that
calls :func:`run` without configuring :mod:`logging` still sees them on stderr
(:func:`run_async`, which runs inside someone else's program, leaves logging
to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator

import grpc

from belote_bot.bot import Bot
from belote_bot.client import DEFAULT_ADDRESS, Client, StopEvent
from belote_bot.tls import credentials_for

__all__ = ["Fleet", "run", "run_async"]

log = logging.getLogger("belote_bot")

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_stderr_lock = threading.Lock()
#: the handler run() added, how many run() calls use it, and the logger level it replaced
_stderr: tuple[logging.Handler, int, int] | None = None


@contextlib.contextmanager
def _default_logging(verbose: bool) -> Iterator[None]:
    """While a bot plays: if nothing configured logging (no handler on the ``belote_bot`` logger
    or the root), send the SDK's INFO lines to stderr, so a plain script shows them."""
    global _stderr
    with _stderr_lock:
        if _stderr is None:
            if not verbose or log.handlers or logging.getLogger().handlers:
                joined = False
            else:
                stream_handler = logging.StreamHandler(sys.stderr)
                stream_handler.setFormatter(logging.Formatter(_LOG_FORMAT))
                log.addHandler(stream_handler)
                _stderr = (stream_handler, 1, log.level)
                if log.getEffectiveLevel() > logging.INFO:
                    log.setLevel(logging.INFO)
                joined = True
        else:
            _stderr = (_stderr[0], _stderr[1] + 1, _stderr[2])
            joined = True
    try:
        yield
    finally:
        if joined:
            with _stderr_lock:
                assert _stderr is not None
                handler, users, level = _stderr
                if users > 1:
                    _stderr = (handler, users - 1, level)
                else:
                    log.removeHandler(handler)
                    log.setLevel(level)
                    _stderr = None


class Fleet:
    """One :class:`Client` per referee node: the first address, then every peer it names.

    Any node can then seat the bot. Each node gets ``concurrency`` seats. Every
    node is dialed with the same ``credentials``: the peers of a node on TLS
    are checked against the same CA.
    """

    def __init__(
        self, bot: Bot, token: str | None, concurrency: int, *, name: str | None = None,
        credentials: grpc.ChannelCredentials | None = None, verbose: bool = True, ladder: bool = False,
    ) -> None:
        self.bot = bot
        self.ladder = ladder
        self.token = token
        self.concurrency = concurrency
        self.name = name
        self.credentials = credentials
        self.verbose = verbose
        self.clients: dict[str, Client] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stop: StopEvent | None = None

    def _add(self, address: str) -> None:
        if address in self.clients:
            return
        client = Client(self.bot, address, self.token, self.concurrency, name=self.name,
                        credentials=self.credentials, verbose=self.verbose, ladder=self.ladder)
        client.on_peers = self._on_peers
        self.clients[address] = client
        self._tasks[address] = asyncio.ensure_future(client.run(self._stop))
        if len(self.clients) > 1:
            log.debug("also connecting to node %s", address)

    def _on_peers(self, addresses: tuple[str, ...]) -> None:
        for address in addresses:
            self._add(address)

    async def run(self, address: str, stop: StopEvent | None = None) -> None:
        self._stop = stop
        self._add(address)
        try:
            first = self._tasks[address]
            await first  # AuthenticationError on the first node propagates
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        finally:
            for task in self._tasks.values():
                if not task.done():
                    task.cancel()
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)


async def run_async(
    bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4, *,
    name: str | None = None, stop: StopEvent | None = None,
    tls_ca: str | os.PathLike[str] | None = None, tls: bool = False,
    credentials: grpc.ChannelCredentials | None = None, all_nodes: bool = True, verbose: bool = True,
    ladder: bool = False,
) -> None:
    """Play ``bot`` on the referee at ``address`` until ``stop`` is set or the task is cancelled.

    ``token`` defaults to the ``BELOTE_TOKEN`` environment variable;
    ``concurrency`` is how many seats this process plays at once on each node;
    ``name`` overrides ``bot.name``. ``tls_ca`` (a PEM file of CA
    certificates) connects over TLS and checks the node's certificate against
    it; ``tls=True`` alone checks it against the system's roots (a certificate
    from a public CA); ``credentials`` is any other ``grpc.ChannelCredentials``
    (not with ``tls_ca``/``tls``). Without any of them the channel is
    plaintext. A CA file that cannot be read raises
    :class:`~belote_bot.errors.TlsConfigError` at once; a certificate the CA does
    not verify is a failed connection, logged in one line and retried.
    With ``all_nodes`` (the default) the bot also connects to every other node
    the first one names, so any node of a cluster can seat it. ``verbose``
    logs one line per connection and one per match end (INFO); without it,
    only warnings (strikes, lost streams) and errors.
    ``ladder=True`` asks, in the Hello, to play the ladder: a node with a queue
    opts the bot in to every pool whose ladder is on while it is connected
    (unless an admin took it out of one: the admin's word wins); a node
    without a queue ignores it. ``bot.version``, when it is a label (1 to 32
    letters, digits, ``_``, ``.`` or ``-``), is the bot's own version: the
    arena keeps each, lets each hold its own stream with the same token, and
    tests a new one against the promoted one. It leaves the logging
    set-up to the program that runs it (:func:`run` adds a stderr handler when
    there is none). Raises :class:`~belote_bot.AuthenticationError` when the
    referee refuses the token.
    """
    credentials = credentials_for(credentials, tls_ca, tls)
    if not all_nodes:
        client = Client(bot, address, token, concurrency, name=name, credentials=credentials,
                        verbose=verbose, ladder=ladder)
        await client.run(stop)
        return
    fleet = Fleet(bot, token, concurrency, name=name, credentials=credentials, verbose=verbose,
                  ladder=ladder)
    await fleet.run(address, stop)


def run(
    bot: Bot, address: str = DEFAULT_ADDRESS, token: str | None = None, concurrency: int = 4, *,
    name: str | None = None, stop: StopEvent | None = None,
    tls_ca: str | os.PathLike[str] | None = None, tls: bool = False,
    credentials: grpc.ChannelCredentials | None = None, verbose: bool = True, ladder: bool = False,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> None:
    """Play ``bot`` on the referee at ``address`` until Ctrl-C or ``stop`` (see :func:`run_async`).

    ``run(bot, "arena.example.org:50051", token, tls_ca="ca.pem")`` plays over
    TLS, checking the node's certificate against ``ca.pem``; ``tls=True``
    against the system's roots. Blocks. Ctrl-C stops cleanly (no traceback).
    If nothing configured :mod:`logging`, the SDK's lines go to stderr while it
    runs. The event loop is asyncio's default one; pass
    ``loop_factory=uvloop.new_event_loop`` for uvloop's (the SDK itself never
    imports it). ``ladder=True`` asks to play the ladder (see :func:`run_async`).
    """
    with _default_logging(verbose):
        credentials = credentials_for(credentials, tls_ca, tls)  # a bad CA file raises before the loop
        coro = run_async(bot, address, token, concurrency, name=name, stop=stop, credentials=credentials,
                         verbose=verbose, ladder=ladder)
        try:
            with asyncio.Runner(loop_factory=loop_factory) as runner:
                runner.run(coro)
        except KeyboardInterrupt:
            log.log(logging.INFO if verbose else logging.DEBUG, "stopped (interrupted)")
