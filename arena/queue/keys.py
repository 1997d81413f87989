"""Every Redis key the queue uses, built here and nowhere else, under one prefix.

With the default prefix ``belote-arena`` the keys are::

    belote-arena:jobs:seq               the number of the latest job enqueued (a job's id: its place)
    belote-arena:job:<id>               hash: ``job`` (its JSON), ``match``, ``tid``, ``bots`` (the bot
                                        at each seat, space-separated), ``deliveries``, and while a node
                                        holds it ``owner`` and ``delivery``
    belote-arena:jobs:ready             sorted set of the jobs waiting, scored by their id
    belote-arena:jobs:ready:<bot>       sorted set of the jobs waiting that name the bot, the same way
    belote-arena:jobs:waiting           hash: bot -> how many waiting jobs name it
    belote-arena:jobs:leased            sorted set of the jobs held, scored by when their lease runs
                                        out (ms, Redis's clock)
    belote-arena:jobs:match             hash: match id -> its job's id
    belote-arena:jobs:of:<tournament>   set of the ids of the tournament's jobs
    belote-arena:jobs:dead              stream of jobs that failed max_deliveries times
    belote-arena:jobs                   (an older version's queue: a stream, moved to the keys above)
    belote-arena:pending:<tournament>   jobs enqueued and not yet acked, per tournament
    belote-arena:result:<match>         one match's result JSON (written once)
    belote-arena:results:<tournament>   set of the tournament's match ids with a result
    belote-arena:summaries:<tournament> list of the tournament's result summaries (JSON), in the order
                                        written (what it advances from; written with the result)
    belote-arena:botmatches:<bot>       list of the bot's newest result summaries (JSON), newest first,
                                        trimmed to BOT_MATCHES_KEPT (written with the result)
    belote-arena:bhist:<bot>            list of the bot's newest history entries (JSON), newest first,
                                        trimmed to HISTORY_KEPT (arena.tournament.botstats; written
                                        with the result)
    belote-arena:bstats:<bot>           hash: counter -> the bot's aggregate of it (botstats), forever,
                                        and ``vs <opponent> <counter>`` -> its head-to-head's
    belote-arena:bpend:<group>          list of a duplicate group's tables' counters (``pair/<id>``,
                                        ``quartet/<id>``), until its last table adds them all
    belote-arena:btmarks                hash: pool -> its games at its last Bradley-Terry history point
    belote-arena:bthist:<pool>          hash: bot -> ``"games bot_games rating low high;..."``, its
                                        Bradley-Terry history in the pool (BT_HISTORY_KEPT points)
    belote-arena:pools                  set of the rating pools with a game counted
    belote-arena:elo:<pool>             hash: ``rating:<bot>`` and ``games:<bot>``, the pool's online Elo
    belote-arena:pairs:<pool>           hash: JSON ``["a","b"]`` (a < b) -> ``"wins draws losses"`` of a
    belote-arena:history:<pool>         hash: bot -> ``"games rating;games rating;..."``, a point every
                                        HISTORY_EVERY games of the bot in the pool, the last HISTORY_MAX
    belote-arena:vgames:<pool>:<player> hash: opponent player -> ``"wins draws losses"`` of a versioned
                                        player (``bot@version``) in the pool, from its side
                                        (arena.ratings.versions)
    belote-arena:vorder:<pool>          hash: bot -> its versions in the pool, space-separated, in the
                                        order they first played there (MAX_POOL_VERSIONS at most)
    belote-arena:mixed:queue:<pool>     list of the pool's mixed-partnership games written and not yet
                                        rated (``MixedGame.to_text()``), oldest first
    belote-arena:mixed:<pool>           hash: bot -> ``MixedState.to_text()`` (openskill), and
                                        ``:applied``, the games rated; every rating step writes it
    belote-arena:leg:<pair>             a mirror duplicate pair's first leg written (``Leg.to_text()``),
                                        until its second leg counts the pair's game and deletes it
    belote-arena:quartet:<quartet>      hash: table 0..3 -> ``Part.to_text()``, a field duplicate quartet's
                                        tables written, until its fourth counts its games and deletes it
    belote-arena:tournament:<id>        hash: ``spec`` (JSON) and ``state``; once it ended, ``ended_at`` and
                                        ``ended_reason``, and once its secret was revealed, ``revealed_at``
                                        and ``revealed_reason``
    belote-arena:tournaments            list of tournament ids, in creation order
    belote-arena:schedule:<id>          hash: ``spec`` (a schedule's JSON) and ``last`` (its last
                                        occurrence made, unix seconds)
    belote-arena:schedules              set of the schedules' ids
    belote-arena:ladders                hash: pool -> its ladder's setting (JSON)
    belote-arena:ladder:bots:<pool>     set of the bots opted in to the pool's ladder
    belote-arena:ladder:removed:<pool>  set of the bots an admin took out of it (their Hello's
                                        ladder flag does not put them back)
    belote-arena:ladder:picks:<pool>    list of the matchmaking's latest picks, newest first (JSON
                                        each: the pair and why), LADDER_PICKS_KEPT at most
    belote-arena:ladder:conduct         hash: bot -> its recent ladder forfeits and pauses (JSON;
                                        only bots with a forfeit not yet forgiven: arena.node.pauses)
    belote-arena:once:<key>             enqueue-once marker
    belote-arena:node:<id>              a live node's address (expires with its heartbeat)
    belote-arena:nodes                  set of node ids that sent a heartbeat
    belote-arena:bots                   hash: bot name -> registry entry JSON (token hash only)
    belote-arena:invites                set of the SHA-256 of unused invite codes
    belote-arena:nodebots:<id>          set of the bots connected to a live node (expires with it)
    belote-arena:presence               hash: bot name -> when last seen connected (or first missed)
    belote-arena:epoch                  a random mark set once: if it vanishes, Redis lost the data
    belote-arena:notices                stream of the nodes' notices (fields ``seq``, ``kind``, ``data``),
                                        trimmed to about NOTICES_KEPT entries
    belote-arena:notices:seq            the number of the latest notice (each notice's ``seq`` is one more)

plus, in an older version's data, the consumer group ``belote-arena:referees`` on its
jobs stream (a group name, not a key). The queue's scripts build the job keys from the
prefix themselves, the same way (:mod:`arena.queue.redis_scripts`). Several arenas can share
one Redis database with different prefixes; ``pattern()`` matches all of one
arena's keys (for SCAN), and nothing of another arena whose prefix merely starts
the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PREFIX = "belote-arena"

#: hash fields of a pool's Elo hash: ``rating:<bot>`` and ``games:<bot>``
RATING_FIELD = "rating:"
GAMES_FIELD = "games:"
#: the field of a pool's mixed rating hash that counts the games rated (no bot name holds ':')
MIXED_APPLIED = ":applied"
#: the prefix of a bot's head-to-head counters among its ``bstats`` hash's fields (its own never start so)
H2H_FIELD = "vs "


@dataclass(frozen=True)
class Keys:
    """The key names of one arena (one prefix)."""

    prefix: str = DEFAULT_PREFIX

    def __post_init__(self) -> None:
        if not self.prefix or any(c in self.prefix for c in "*?[]\\ "):
            raise ValueError(f"bad Redis key prefix {self.prefix!r}: non-empty, no spaces or glob characters")

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    # jobs
    @property
    def jobs(self) -> str:
        """An older version's queue (a stream), moved into the keys below when a broker opens on it."""
        return self._key("jobs")

    @property
    def group(self) -> str:
        """The consumer group of an older version's jobs stream."""
        return self._key("referees")

    @property
    def jobs_seq(self) -> str:
        return self._key("jobs", "seq")

    def job(self, job_id: str) -> str:
        return self._key("job", job_id)

    @property
    def jobs_ready(self) -> str:
        return self._key("jobs", "ready")

    def jobs_ready_for(self, bot: str) -> str:
        return self._key("jobs", "ready", bot)

    @property
    def jobs_waiting(self) -> str:
        return self._key("jobs", "waiting")

    @property
    def jobs_leased(self) -> str:
        return self._key("jobs", "leased")

    @property
    def jobs_by_match(self) -> str:
        return self._key("jobs", "match")

    def jobs_of(self, tournament_id: str) -> str:
        return self._key("jobs", "of", tournament_id)

    @property
    def dead_letters(self) -> str:
        return self._key("jobs", "dead")

    def pending(self, tournament_id: str) -> str:
        return self._key("pending", tournament_id)

    def enqueue_marker(self, key: str) -> str:
        return self._key("once", key)

    # results and ratings
    def result(self, match_id: str) -> str:
        return self._key("result", match_id)

    def results_index(self, tournament_id: str) -> str:
        return self._key("results", tournament_id)

    def summaries(self, tournament_id: str) -> str:
        return self._key("summaries", tournament_id)

    def bot_matches(self, bot: str) -> str:
        return self._key("botmatches", bot)

    def bot_history(self, bot: str) -> str:
        return self._key("bhist", bot)

    def bot_stats(self, bot: str) -> str:
        return self._key("bstats", bot)

    def bot_pending(self, group: str) -> str:
        return self._key("bpend", group)

    @property
    def bt_marks(self) -> str:
        return self._key("btmarks")

    def bt_history(self, pool: str) -> str:
        return self._key("bthist", pool)

    @property
    def pools(self) -> str:
        return self._key("pools")

    def elo(self, pool: str) -> str:
        return self._key("elo", pool)

    def pairs(self, pool: str) -> str:
        return self._key("pairs", pool)

    def history(self, pool: str) -> str:
        return self._key("history", pool)

    def version_games(self, pool: str, player: str) -> str:
        return self._key("vgames", pool, player)

    def version_order(self, pool: str) -> str:
        return self._key("vorder", pool)

    def leg(self, pair_id: str) -> str:
        return self._key("leg", pair_id)

    def quartet(self, quartet_id: str) -> str:
        return self._key("quartet", quartet_id)

    def mixed_queue(self, pool: str) -> str:
        return self._key("mixed", "queue", pool)

    def mixed(self, pool: str) -> str:
        return self._key("mixed", pool)

    # tournaments
    def tournament(self, tournament_id: str) -> str:
        return self._key("tournament", tournament_id)

    @property
    def tournaments(self) -> str:
        return self._key("tournaments")

    # scheduled tournaments
    def schedule(self, schedule_id: str) -> str:
        return self._key("schedule", schedule_id)

    @property
    def schedules(self) -> str:
        return self._key("schedules")

    # the ladders
    @property
    def ladders(self) -> str:
        return self._key("ladders")

    def ladder_bots(self, pool: str) -> str:
        return self._key("ladder", "bots", pool)

    def ladder_picks(self, pool: str) -> str:
        return self._key("ladder", "picks", pool)

    def ladder_removed(self, pool: str) -> str:
        return self._key("ladder", "removed", pool)

    @property
    def ladder_conduct(self) -> str:
        return self._key("ladder", "conduct")

    # the cluster
    def node(self, node_id: str) -> str:
        return self._key("node", node_id)

    @property
    def nodes(self) -> str:
        return self._key("nodes")

    @property
    def bots(self) -> str:
        return self._key("bots")

    @property
    def invites(self) -> str:
        return self._key("invites")

    def node_bots(self, node_id: str) -> str:
        return self._key("nodebots", node_id)

    @property
    def bot_presence(self) -> str:
        return self._key("presence")

    @property
    def epoch(self) -> str:
        return self._key("epoch")

    # notices between the nodes
    @property
    def notices(self) -> str:
        return self._key("notices")

    @property
    def notice_seq(self) -> str:
        return self._key("notices", "seq")

    def pattern(self) -> str:
        """A SCAN MATCH pattern for every key of this arena (the prefix holds no glob characters)."""
        return self._key("*")
