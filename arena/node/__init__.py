"""A node as deployed: the referee (:mod:`arena.referee`) with its queue worker and heartbeat.

Every node of a cluster is the same process (``belote-arena serve``,
:func:`arena.node.run.serve_forever`). Its worker claims matches from the
queue (:mod:`arena.queue`) that the referee can seat, plays them, writes
their results once and advances their tournaments (:mod:`arena.tournament`).
This is the one package that imports both the referee and the queue.
"""

#: match slots a node has by default (``serve --capacity``). A node's slots wait on its bots: each match
#: waits a bot round trip per decision, and the node works some 0.2 ms of CPU per decision (bench/scale.py,
#: bench/cluster.py), so a slot with bots of a 10 ms round trip keeps about 1-2% of a core busy: 4 slots
#: (the default before) left a node at a few percent of a core, its slots, not its CPU, bounding it. 16
#: keep such a node at about a sixth of a core (15% measured: 12 matches/s of 12.5 ms each), leave
#: headroom for bots that answer faster (a node bound by its CPU only makes each decision wait its turn:
#: 16 x 0.2 ms, nothing beside the 1 s deadline), and cost Redis little (one core feeds some 2,000 such
#: matches a second, whichever nodes play them). docs/how-to/capacity.md says how to choose it from the
#: bots' round trip.
DEFAULT_CAPACITY = 16
