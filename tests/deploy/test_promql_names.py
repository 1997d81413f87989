"""The metric names the dashboards and alerts use are the nodes' (issue 10, part 4).

A renamed metric breaks the build: here against the list the nodes are specified to expose, and
in test_live_node.py against a scrape of a real node.
"""

from __future__ import annotations

import pytest

from tests.deploy.deployfiles import (
    HISTOGRAMS,
    NODE_METRICS,
    SYNTHETIC,
    dashboard_exprs,
    promql_metric_names,
    series_names,
    used_metric_names,
)


@pytest.mark.parametrize(("expr", "names"), [
    ('sum by (instance) (rate(belote_arena_decisions_total{job="x", bot=~"a.*"}[$__rate_interval]))',
     {"belote_arena_decisions_total"}),
    ("histogram_quantile(0.99, sum by (instance, le) (rate(belote_arena_decision_seconds_bucket[5m]))) > 0.8",
     {"belote_arena_decision_seconds_bucket"}),
    ("a / clamp_min(b, 1e-9) > 0.05 and on (bot) c offset 5m", {"a", "b", "c"}),
    ("(count(up == 1) or vector(0)) == 0 or max(x:recorded) < 1", {"up", "x:recorded"}),
    ("deriv(max(q)[20m:1m]) > 0 unless ignoring(le) group_left(pool) r", {"q", "r"}),
    ('topk(10, max without (instance) (belote_arena_rating{pool="by"}))', {"belote_arena_rating"}),
])
def test_the_name_extraction_finds_metrics_and_nothing_else(expr: str, names: set[str]) -> None:
    assert promql_metric_names(expr) == names


def test_every_dashboard_panel_has_a_query() -> None:
    exprs = dashboard_exprs()
    assert len(exprs) >= 10
    assert all(exprs.values()), [panel for panel, e in exprs.items() if not e]


def test_the_dashboards_and_alerts_use_only_the_metrics_a_node_exposes() -> None:
    allowed = series_names(NODE_METRICS, HISTOGRAMS) | SYNTHETIC
    used = used_metric_names()
    unknown = {name: sorted(where) for name, where in used.items() if name not in allowed}
    assert not unknown, f"metric names no node exposes: {unknown}"


def test_the_dashboards_and_alerts_cover_the_issue() -> None:
    """The panels and alerts the issue asks for name the metrics that show each of them."""
    used = used_metric_names()
    for name in ("belote_arena_decisions_total", "belote_arena_decision_seconds_bucket",
                 "belote_arena_strikes_total", "belote_arena_forfeits_total",
                 "belote_arena_matches_finished_total", "belote_arena_queue_jobs_waiting",
                 "belote_arena_queue_jobs_reclaimed_total", "belote_arena_queue_dead_letters_total",
                 "belote_arena_rating", "belote_arena_connected_bots", "belote_arena_live_nodes", "up"):
        assert name in used, f"no panel or alert uses {name}"
    board = " ".join(e for exprs in dashboard_exprs().values() for e in exprs)
    assert "topk(10," in board and "histogram_quantile(0.99" in board and "histogram_quantile(0.5" in board
