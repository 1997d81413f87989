"""What the deploy tests share: the files under deploy/, the metric names, PromQL's metric names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROMETHEUS = DEPLOY / "prometheus"
DASHBOARDS = DEPLOY / "grafana" / "dashboards"
#: the Kubernetes manifests: the arena inside the cluster (base), and the overlay that opens it (external)
K8S = DEPLOY / "k8s" / "base"
EXTERNAL = DEPLOY / "k8s" / "external"

#: the metric families a node exposes (issue 10, part 1): what the dashboards and alerts may use
NODE_METRICS = frozenset({
    "belote_arena_decisions_total", "belote_arena_decision_seconds", "belote_arena_strikes_total",
    "belote_arena_forfeits_total", "belote_arena_connected_bots", "belote_arena_bot_streams",
    "belote_arena_matches_running", "belote_arena_matches_finished_total", "belote_arena_deals_played_total",
    "belote_arena_queue_jobs_waiting", "belote_arena_queue_jobs_claimed_total",
    "belote_arena_queue_jobs_released_total", "belote_arena_queue_claim_calls_total",
    "belote_arena_queue_leases_expired_total",
    "belote_arena_queue_jobs_reclaimed_total", "belote_arena_queue_dead_letters_total",
    "belote_arena_results_written_total", "belote_arena_results_duplicate_total",
    "belote_arena_ladder_matches_total", "belote_arena_version_tests_total",
    "belote_arena_version_tests_running",
    "belote_arena_node_capacity", "belote_arena_node_free_slots", "belote_arena_live_nodes",
    "belote_arena_rating",
    "grpc_server_started_total", "grpc_server_handled_total", "grpc_server_handling_seconds",
    # prometheus_client's process and Python collectors
    "process_virtual_memory_bytes", "process_resident_memory_bytes", "process_start_time_seconds",
    "process_cpu_seconds_total", "process_open_fds", "process_max_fds",
    "python_gc_objects_collected_total", "python_gc_objects_uncollectable_total",
    "python_gc_collections_total", "python_info",
})
HISTOGRAMS = frozenset({"belote_arena_decision_seconds", "grpc_server_handling_seconds"})
#: series Prometheus makes itself for every target, not scraped from it
SYNTHETIC = frozenset({"up"})


def series_names(families: frozenset[str], histograms: frozenset[str]) -> frozenset[str]:
    """The series names a query may use: each family, and a histogram's _bucket, _sum and _count."""
    return families | {h + s for h in histograms for s in ("_bucket", "_sum", "_count")}


_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
                       "unless", "offset", "inf", "nan"})


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not functions, keywords, labels or durations)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)  # string literals
    s = re.sub(r"\{[^}]*\}", " ", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)  # range and subquery durations (and $__rate_interval)
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)  # label lists
    names = set()
    for m in re.finditer(r"(?<![\w:.$])([A-Za-z_:][\w:]*)(\s*\()?", s):
        if m.group(2) is None and m.group(1).lower() not in _KEYWORDS:
            names.add(m.group(1))
    return names


def load_yaml_all(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def dashboard_exprs() -> dict[str, list[str]]:
    """Each dashboard panel's PromQL expressions, keyed by "file: panel title"."""
    out: dict[str, list[str]] = {}
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        for panel in _panels(board.get("panels", [])):
            exprs = [t["expr"] for t in panel.get("targets", []) if t.get("expr")]
            out[f"{path.name}: {panel.get('title', panel.get('id'))}"] = exprs
    return out


def _panels(panels: list[Any]) -> list[dict[str, Any]]:
    """Panels, with those inside collapsed rows."""
    out: list[dict[str, Any]] = []
    for p in panels:
        if p.get("type") == "row":
            out.extend(_panels(p.get("panels", [])))
        else:
            out.append(p)
    return out


def alert_rules() -> list[dict[str, Any]]:
    doc = load_yaml(PROMETHEUS / "alerts.yml")
    return [r for g in doc["groups"] for r in g["rules"]]


def used_metric_names() -> dict[str, set[str]]:
    """Every metric name a dashboard panel or an alert uses, with where ("alert X", "arena.json: T")."""
    where: dict[str, set[str]] = {}
    for panel, exprs in dashboard_exprs().items():
        for e in exprs:
            for name in promql_metric_names(e):
                where.setdefault(name, set()).add(panel)
    for rule in alert_rules():
        for name in promql_metric_names(rule["expr"]):
            where.setdefault(name, set()).add(f"alert {rule.get('alert', rule.get('record'))}")
    return where


def exposed_names(text: str) -> frozenset[str]:
    """The series names a scrape (Prometheus text or OpenMetrics) offers, labelled families with no
    sample yet included (from their ``# TYPE`` line)."""
    names: set[str] = set()
    histograms: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            names.add(name)
            if kind.strip() in ("histogram", "summary"):
                histograms.add(name)
            elif kind.strip() == "counter" and not name.endswith("_total"):  # OpenMetrics
                names.add(name + "_total")
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return series_names(frozenset(names), frozenset(histograms))


# ------------------------------------------------------------------ kustomize, as far as deploy/k8s uses it
#: the lists a strategic merge patch merges item by item, by this key (the others it replaces)
MERGE_KEYS = {"containers": "name", "initContainers": "name", "env": "name", "volumes": "name",
              "volumeMounts": "mountPath", "ports": "containerPort"}


def strategic_merge(base: Any, patch: Any, key: str = "") -> Any:
    """Kubernetes' strategic merge of ``patch`` onto ``base``: maps merged, a null deletes its key, the
    lists of MERGE_KEYS merged by their key, the patch's items first, in its order (each merged onto
    the base's item of its key, if any), then the base's other items; other lists replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = strategic_merge(out[k], v, k) if k in out else v
        return out
    if isinstance(base, list) and isinstance(patch, list) and key in MERGE_KEYS:
        by = MERGE_KEYS[key]
        patched = {item.get(by) for item in patch}
        first = [strategic_merge(next((b for b in base if b.get(by) == item.get(by)), {}), item)
                 for item in patch]
        return first + [b for b in base if b.get(by) not in patched]
    return patch


def json_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """RFC 6902's add, replace and remove (a path's last step ``-``: the end of its list)."""
    import copy

    doc = copy.deepcopy(doc)
    for op in ops:
        steps = [s.replace("~1", "/").replace("~0", "~") for s in op["path"].split("/")[1:]]
        parent = doc
        for s in steps[:-1]:
            parent = parent[int(s)] if isinstance(parent, list) else parent[s]
        last = steps[-1]
        if isinstance(parent, list):
            at = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(at, op["value"])
            elif op["op"] == "replace":
                parent[at] = op["value"]
            elif op["op"] == "remove":
                del parent[at]
            else:
                raise AssertionError(f"JSON patch op {op['op']} is not simulated here")
        elif op["op"] in ("add", "replace"):
            parent[last] = op["value"]
        elif op["op"] == "remove":
            del parent[last]
        else:
            raise AssertionError(f"JSON patch op {op['op']} is not simulated here")
    return doc


def kustomize(folder: Path) -> list[dict[str, Any]]:
    """What ``kubectl kustomize FOLDER`` makes of deploy/k8s's kustomizations (resources, files or
    folders; patches, strategic merge by kind and name, or JSON 6902 on a target), in Python: CI's
    image has no kubectl (test_k8s_external.py compares the two where it has)."""
    k = load_yaml(folder / "kustomization.yaml")
    unknown = set(k) - {"apiVersion", "kind", "resources", "patches"}
    assert not unknown, f"{folder}: {unknown} is not simulated here"
    docs: list[dict[str, Any]] = []
    for resource in k["resources"]:
        path = folder / resource
        docs += kustomize(path) if path.is_dir() else load_yaml_all(path)
    for patch in k.get("patches", []):
        body = load_yaml_all(folder / patch["path"])
        target = patch.get("target")
        if target is not None:
            (ops,) = body
            kind, name = target.get("kind"), target.get("name")
            hits = [i for i, d in enumerate(docs)
                    if kind in (None, d["kind"]) and name in (None, d["metadata"]["name"])]
            assert hits, f"{patch['path']}: its target {target} is in no resource"
            for i in hits:
                docs[i] = json_patch(docs[i], ops)
            continue
        for p in body:
            at = [i for i, d in enumerate(docs)
                  if (d["kind"], d["metadata"]["name"]) == (p["kind"], p["metadata"]["name"])]
            assert len(at) == 1, f"{patch['path']}: {p['kind']} {p['metadata']['name']} is in no resource"
            docs[at[0]] = strategic_merge(docs[at[0]], p)
    return docs


def kubectl_kustomize(folder: Path) -> list[dict[str, Any]] | None:
    """``kubectl kustomize FOLDER``'s resources; None where kubectl is not installed."""
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    done = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d is not None]
