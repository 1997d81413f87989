"""A node as deployed: the referee (:mod:`arena.referee`) with its queue worker and heartbeat.

Every node of a cluster is the same process (``belote-arena serve``,
:func:`arena.node.run.serve_forever`). Its worker claims matches from the
queue (:mod:`arena.queue`) that the referee can seat, plays them, writes
their results once and advances their tournaments (:mod:`arena.tournament`).
This is the one package that imports both the referee and the queue.
"""
