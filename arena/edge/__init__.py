"""What a node's doors, gRPC and HTTP alike, hold against strangers: bad bytes and the bounds on what
one message, stream, call or address may cost (``guard``), the reads an address may make a second
(``rates``), one rate-limited log line per problem (``quietlog``), the TLS pair checked before a port
is bound (``tls``), and the gRPC server's metrics (``rpc_metrics``).

None of it knows a match, a bot or a record: the referee (:mod:`arena.referee`) and the web server
(:mod:`arena.web`) build on it, never the other way round.
"""
