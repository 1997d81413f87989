"""The alerts on a node's `up` fire on the labels each shipped scrape layout gives a node, and only
on a node's.

Three layouts ship: the compose stack's prometheus.yml (a static job), the Prometheus Operator's
ServiceMonitor (deploy/k8s/base/servicemonitor.yaml), and without the Operator the pods' prometheus.io
annotations, which a kubernetes-pods job scrapes (deploy/prometheus/kubernetes.yml). Debian's
promtool has no Kubernetes discovery, so that job's relabelling is applied here, in Python, to the
node's pod as the StatefulSet makes it; the labels it gives (and the compose stack's, and the
Operator's) then go through promtool's unit tests: a node down fires BeloteNodeDown and
BeloteNoLiveNode with them, a node up fires neither.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.deployfiles import PROMETHEUS, dashboard_exprs, load_yaml
from tests.deploy.test_files import promtool
from tests.deploy.test_k8s import node, node_container, of_kind, redis, selects

#: the node's pod as the cluster shows it: its StatefulSet's template, and what the cluster adds
POD_IP = "10.1.2.3"
POD_NAME = "belote-arena-node-0"
NAMESPACE = "arena"
#: the labels the StatefulSet controller adds to its pods (the revision, the pod's name and index)
CONTROLLER_LABELS = {"controller-revision-hash": "belote-arena-node-6d8f7c9b5",
                     "statefulset.kubernetes.io/pod-name": POD_NAME, "apps.kubernetes.io/pod-index": "0"}


def _expand(template: str, m: re.Match[str]) -> str:
    """Prometheus's (Go's) $1, ${1} and $name in a replacement or target label."""
    def group(g: re.Match[str]) -> str:
        name = g.group(1) or g.group(2)
        return m.group(int(name) if name.isdigit() else name) or ""

    return re.sub(r"\$(?:\{(\w+)\}|(\w+))", group, template)


def relabel(labels: dict[str, str], configs: list[dict[str, Any]]) -> dict[str, str] | None:
    """Prometheus's target relabelling (the actions kubernetes.yml uses); None: the target is dropped."""
    labels = dict(labels)
    for c in configs:
        action = c.get("action", "replace")
        regex = re.compile(f"^(?:{c.get('regex', '(.*)')})$")
        value = c.get("separator", ";").join(labels.get(name, "") for name in c.get("source_labels", []))
        replacement = str(c.get("replacement", "$1"))
        if (action == "keep" and not regex.match(value)) or (action == "drop" and regex.match(value)):
            return None
        if action == "replace":
            m = regex.match(value)
            if m is not None:
                target, result = _expand(c["target_label"], m), _expand(replacement, m)
                if result:
                    labels[target] = result
                else:
                    labels.pop(target, None)
        elif action == "labelmap":
            for name, v in list(labels.items()):
                if (m := regex.match(name)) is not None:
                    labels[_expand(replacement, m)] = v
        elif action not in ("keep", "drop"):
            raise AssertionError(f"relabel action {action} is not simulated here")
    labels.setdefault("instance", labels["__address__"])
    return {k: v for k, v in labels.items() if not k.startswith("__")}


def _meta_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def pod_targets(template: dict[str, Any], job: dict[str, Any], labels: dict[str, str]) -> set[frozenset[
        tuple[str, str]]]:
    """The targets the pod role discovers for a pod of ``template`` (one a declared port), relabelled
    by ``job``: the distinct label sets (Prometheus scrapes one target per label set)."""
    meta = {"__meta_kubernetes_namespace": NAMESPACE, "__meta_kubernetes_pod_name": POD_NAME,
            "__meta_kubernetes_pod_ip": POD_IP, "__meta_kubernetes_pod_phase": "Running",
            "job": job["job_name"], "__scheme__": job.get("scheme", "http"),
            "__metrics_path__": job.get("metrics_path", "/metrics")}
    for k, v in labels.items():
        meta[f"__meta_kubernetes_pod_label_{_meta_name(k)}"] = v
        meta[f"__meta_kubernetes_pod_labelpresent_{_meta_name(k)}"] = "true"
    for k, v in template["metadata"].get("annotations", {}).items():
        meta[f"__meta_kubernetes_pod_annotation_{_meta_name(k)}"] = v
        meta[f"__meta_kubernetes_pod_annotationpresent_{_meta_name(k)}"] = "true"
    targets = set()
    for c in template["spec"]["containers"]:
        for p in c.get("ports", []):
            found = relabel({**meta, "__address__": f"{POD_IP}:{p['containerPort']}",
                             "__meta_kubernetes_pod_container_name": c["name"],
                             "__meta_kubernetes_pod_container_port_name": p.get("name", ""),
                             "__meta_kubernetes_pod_container_port_number": str(p["containerPort"])},
                            job["relabel_configs"])
            if found is not None:
                targets.add(frozenset(found.items()))
    return targets


def kubernetes_pods_job() -> dict[str, Any]:
    config = load_yaml(PROMETHEUS / "kubernetes.yml")
    assert "alerts.yml" in config["rule_files"]
    job: dict[str, Any]
    (job,) = config["scrape_configs"]
    assert job["job_name"] == "kubernetes-pods" and job["kubernetes_sd_configs"] == [{"role": "pod"}]
    return job


def test_the_kubernetes_pods_job_scrapes_each_node_pod_once_on_its_http_port() -> None:
    (target,) = node_pod_targets()
    http = next(p["containerPort"] for p in node_container()["ports"] if p["name"] == "http")
    assert dict(target)["instance"] == f"{POD_IP}:{http}"


def test_the_kubernetes_pods_job_leaves_pods_without_the_annotation() -> None:
    template = redis()["spec"]["template"]
    assert pod_targets(template, kubernetes_pods_job(), template["metadata"]["labels"]) == set()


def compose_labels() -> list[dict[str, str]]:
    config = load_yaml(PROMETHEUS / "prometheus.yml")
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] != "prometheus"]
    return [{**sc.get("labels", {}), "job": job["job_name"], "instance": target}
            for sc in job["static_configs"] for target in sc["targets"]]


def operator_labels() -> dict[str, str]:
    """What the Prometheus Operator gives a ServiceMonitor's target: job the Service's name, and the
    namespace, service, pod, container and endpoint (port name)."""
    (monitor,) = of_kind("ServiceMonitor")
    (endpoint,) = monitor["spec"]["endpoints"]
    (service,) = [s for s in of_kind("Service")
                  if selects(monitor["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])
                  and any(p.get("name") == endpoint["port"] for p in s["spec"]["ports"])]
    (port,) = [p for p in service["spec"]["ports"] if p.get("name") == endpoint["port"]]
    container = node_container()
    target = next(p["containerPort"] for p in container["ports"] if p["name"] == port["targetPort"])
    assert "jobLabel" not in monitor["spec"]  # the job is then the Service's name
    name = service["metadata"]["name"]
    return {"job": name, "namespace": NAMESPACE, "service": name, "endpoint": endpoint["port"],
            "pod": POD_NAME, "container": container["name"], "instance": f"{POD_IP}:{target}"}


def node_pod_targets() -> set[frozenset[tuple[str, str]]]:
    """The kubernetes-pods job's targets for a node's pod, as its StatefulSet makes it."""
    template = node()["spec"]["template"]
    labels = {**template["metadata"]["labels"], **CONTROLLER_LABELS}
    return pod_targets(template, kubernetes_pods_job(), labels)


def layouts() -> dict[str, dict[str, str]]:
    (pods,) = node_pod_targets()
    return {"compose": compose_labels()[0], "operator": operator_labels(), "kubernetes-pods": dict(pods)}


#: a target that is not a node: a pod of the kubernetes-pods job that is not one (or, elsewhere, another job)
OTHER = {"job": "kubernetes-pods", "app_kubernetes_io_name": "some-exporter", "namespace": NAMESPACE,
         "pod": "some-exporter-0", "instance": "10.1.2.9:9100"}


def panel_expr(title: str) -> str:
    (expr,) = dashboard_exprs()[f"arena.json: {title}"]
    return expr


def series(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


@pytest.mark.parametrize("layout", ["compose", "operator", "kubernetes-pods"])
def test_a_node_down_or_up_alerts_and_shows_as_it_should_in_each_layout(layout: str, tmp_path: Path) -> None:
    labels = layouts()[layout]
    instance = labels["instance"]
    pod = f" (pod {labels['pod']})" if "pod" in labels else ""
    node_down = {"summary": f"Referee node {instance}{pod} is down",
                 "description": f"Prometheus cannot scrape {instance}: its matches are reclaimed by other "
                                "nodes after their lease."}
    no_live_node = [{"exp_labels": {"severity": "critical"}, "exp_annotations": {
        "summary": "No live referee node",
        "description": "No node is up, or the nodes see no live node in the queue: tournaments are "
                       "stalled."}}]
    tests = [
        {"name": f"{layout}: the only node stops answering",
         "interval": "1m",
         "input_series": [{"series": series("up", labels), "values": "1 0 0 0 0 0"}],
         "alert_rule_test": [
             {"eval_time": "5m", "alertname": "BeloteNodeDown",
              "exp_alerts": [{"exp_labels": {**labels, "severity": "critical"},
                              "exp_annotations": node_down}]},
             {"eval_time": "5m", "alertname": "BeloteNoLiveNode", "exp_alerts": no_live_node}]},
        {"name": f"{layout}: the node answers and sees itself; the dashboard counts it, and its memory",
         "interval": "1m",
         "input_series": [{"series": series("up", labels), "values": "1x6"},
                          {"series": series("belote_arena_live_nodes", labels), "values": "1x6"},
                          {"series": series("process_resident_memory_bytes", labels), "values": "1e8x6"},
                          # another target of the job (a pod of the kubernetes-pods job, Prometheus itself)
                          {"series": series("up", OTHER), "values": "1x6"},
                          {"series": series("process_resident_memory_bytes", OTHER), "values": "5e8x6"}],
         "alert_rule_test": [
             {"eval_time": "5m", "alertname": "BeloteNodeDown", "exp_alerts": []},
             {"eval_time": "5m", "alertname": "BeloteNoLiveNode", "exp_alerts": []}],
         "promql_expr_test": [
             {"expr": panel_expr("Nodes scraped up"), "eval_time": "5m",
              "exp_samples": [{"labels": "{}", "value": 1}]},
             {"expr": panel_expr("Node resident memory"), "eval_time": "5m",
              "exp_samples": [{"labels": series("process_resident_memory_bytes", labels), "value": 1e8}]}]},
    ]
    path = tmp_path / "layout_test.yml"
    path.write_text(yaml.safe_dump({"rule_files": [str(PROMETHEUS / "alerts.yml")],
                                    "evaluation_interval": "1m", "tests": tests}), encoding="utf-8")
    assert "SUCCESS" in promtool("test", "rules", str(path))


def test_alerts_test_yml_has_up_series_under_each_layouts_job() -> None:
    """The hand-written unit tests (alerts_test.yml) show BeloteNodeDown firing under each job name the
    layouts give, with the labels that tell a node from another pod of its job."""
    firing_jobs = set()
    for test in load_yaml(PROMETHEUS / "alerts_test.yml")["tests"]:
        for case in test.get("alert_rule_test", []):
            if case["alertname"] == "BeloteNodeDown":
                firing_jobs |= {a["exp_labels"]["job"] for a in case.get("exp_alerts", [])}
    assert {labels["job"] for labels in layouts().values()} <= firing_jobs


def test_the_relabel_simulation_follows_prometheus() -> None:
    """The simulation above, on the cases kubernetes.yml relies on (an IPv6 pod too)."""
    job = kubernetes_pods_job()
    base = {"job": "kubernetes-pods", "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
            "__meta_kubernetes_pod_annotation_prometheus_io_port": "8080",
            "__meta_kubernetes_pod_phase": "Running", "__meta_kubernetes_pod_label_app": "x"}
    v4 = relabel({**base, "__address__": "10.0.0.1:50051", "__meta_kubernetes_pod_ip": "10.0.0.1"},
                 job["relabel_configs"])
    v6 = relabel({**base, "__address__": "[fd00::1]:50051", "__meta_kubernetes_pod_ip": "fd00::1"},
                 job["relabel_configs"])
    assert v4 is not None and v4["instance"] == "10.0.0.1:8080" and v4["app"] == "x"
    assert v6 is not None and v6["instance"] == "[fd00::1]:8080"
    assert relabel({**base, "__address__": "10.0.0.1:1", "__meta_kubernetes_pod_phase": "Pending"},
                   job["relabel_configs"]) is None
    assert relabel({**base, "__address__": "10.0.0.1:1",
                    "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "false"},
                   job["relabel_configs"]) is None

