"""Analysis of recorded deals: pure (standard library and the engine only), seeded, no clock."""
