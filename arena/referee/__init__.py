"""The referee: gRPC sessions with bots, the match runner, spectators."""
