"""The Kubernetes manifests, checked in Python: the fields each kind requires, gRPC probes, a grace
period above the drain, selectors that select, references (Secret, ConfigMap keys, ports) that
resolve, and the address each node advertises. (test_schemas.py validates them against Kubernetes'
own schemas; test_k8s_external.py checks the overlay that opens the arena to the world.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.deployfiles import EXTERNAL, K8S, load_yaml, load_yaml_all

REQUIRED = {
    "Deployment": ["spec.selector.matchLabels", "spec.template.metadata.labels",
                   "spec.template.spec.containers"],
    "StatefulSet": ["spec.selector.matchLabels", "spec.serviceName", "spec.template.metadata.labels",
                    "spec.template.spec.containers"],
    "Service": ["spec.selector", "spec.ports"],
    "PodDisruptionBudget": ["spec.selector.matchLabels"],
    "ConfigMap": ["data"],
    "NetworkPolicy": ["spec.podSelector"],
    "ServiceMonitor": ["spec.selector.matchLabels", "spec.endpoints"],
}
API = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "Service": "v1", "ConfigMap": "v1",
       "PodDisruptionBudget": "policy/v1", "NetworkPolicy": "networking.k8s.io/v1",
       "ServiceMonitor": "monitoring.coreos.com/v1"}


def manifests() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            docs.extend(load_yaml_all(path))
    return docs


def of_kind(kind: str, docs: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return [d for d in (manifests() if docs is None else docs) if d["kind"] == kind]


def named(kind: str, name: str, docs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    (doc,) = [d for d in of_kind(kind, docs) if d["metadata"]["name"] == name]
    return doc


def field(doc: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        assert isinstance(doc, dict) and key in doc, f"missing {dotted}"
        doc = doc[key]
    return doc


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_templates() -> list[dict[str, Any]]:
    return [d["spec"]["template"] for d in manifests() if d["kind"] in ("Deployment", "StatefulSet")]


def test_every_manifest_has_its_kinds_required_fields() -> None:
    docs = manifests()
    assert {d["kind"] for d in docs} >= {"StatefulSet", "Service", "PodDisruptionBudget", "ConfigMap"}
    for d in docs:
        assert d["apiVersion"] == API[d["kind"]], f"{d['kind']}: apiVersion {d['apiVersion']}"
        name = field(d, "metadata.name")
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name), name
        for f in REQUIRED[d["kind"]]:
            assert field(d, f), f"{d['kind']} {name}: empty {f}"
    for t in pod_templates():
        for c in t["spec"]["containers"]:
            assert c["name"] and c["image"]


def test_workload_selectors_match_their_pods() -> None:
    for d in [*of_kind("Deployment"), *of_kind("StatefulSet")]:
        assert selects(d["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"]["labels"])


NODE = "belote-arena-node"


def node(docs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return named("StatefulSet", NODE, docs)


def redis() -> dict[str, Any]:
    return named("StatefulSet", "belote-redis")


def node_container(docs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    container: dict[str, Any]
    (container,) = node(docs)["spec"]["template"]["spec"]["containers"]
    return container


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) in a container's args or env value: VAR's value when defined, else left as it
    is; $$ is one $."""
    return re.sub(r"\$\$|\$\((\w+)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def container_env(container: dict[str, Any], config: dict[str, str], pod: dict[str, str]) -> dict[str, str]:
    """The variables the kubelet gives ``container``: the ConfigMap's (envFrom), then each env entry in
    order, its $(VAR) read from those before it; ``pod`` the fieldRef paths' values."""
    env = dict(config)
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
        else:
            env[e["name"]] = pod[e["valueFrom"]["fieldRef"]["fieldPath"]]
    return env


def pod_args(docs: list[dict[str, Any]] | None, pod_name: str, namespace: str) -> list[str]:
    """The node's command line in the pod ``pod_name`` of ``namespace``, its $(VAR)s expanded."""
    c = node_container(docs)
    (config,) = of_kind("ConfigMap", docs)
    env = container_env(c, config["data"], {"metadata.name": pod_name, "metadata.namespace": namespace})
    return [expand(a, env) for a in c["args"]]


def undefined_variables(docs: list[dict[str, Any]] | None = None) -> list[str]:
    """Each $(VAR) in the node's args or env values that nothing before it defines (the kubelet would
    pass it on as it is)."""
    c = node_container(docs)
    (config,) = of_kind("ConfigMap", docs)
    defined = set(config["data"])
    missing = []
    for e in c.get("env", []):
        missing += [f"env {e['name']}: $({v})" for v in re.findall(r"\$\((\w+)\)", e.get("value", ""))
                    if v not in defined]
        defined.add(e["name"])
    missing += [f"{a}: $({v})" for a in c["args"] for v in re.findall(r"\$\((\w+)\)", a) if v not in defined]
    return missing


def flag(args: list[str], name: str) -> str:
    for i, a in enumerate(args):
        if a == name:
            return str(args[i + 1])
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    raise AssertionError(f"no {name} in {args}")


def test_the_nodes_probes_are_grpc_health_on_the_grpc_port() -> None:
    c = node_container()
    grpc_port = flag(c["args"], "--listen").rsplit(":", 1)[1]
    assert any(p["containerPort"] == int(grpc_port) for p in c["ports"])
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == int(grpc_port), probe
        assert set(c[probe]) & {"httpGet", "tcpSocket", "exec"} == set(), probe


def test_a_rolling_update_drains_matches_before_the_kill() -> None:
    """One node at a time is replaced (a StatefulSet's pod keeps its name, so the new one cannot start
    beside it): the others play on while it drains, and the next waits until the new one is ready."""
    d = node()
    c = node_container()
    drain = float(flag(c["args"], "--drain"))
    pre_stop = c["lifecycle"]["preStop"]
    pause = float(pre_stop["exec"]["command"][-1] if "exec" in pre_stop else pre_stop["sleep"]["seconds"])
    grace = d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > pause + drain, (
        f"terminationGracePeriodSeconds {grace} <= preStop {pause} + --drain {drain}")
    assert d["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    rolling = d["spec"]["updateStrategy"].get("rollingUpdate", {})
    assert rolling.get("maxUnavailable", 1) == 1 and rolling.get("partition", 0) == 0
    assert d["spec"]["replicas"] >= 2, "a node replaced leaves another to play"
    assert d["spec"]["podManagementPolicy"] == "Parallel", "the nodes are peers: no start order"


def test_the_pdb_selects_the_nodes_and_leaves_one() -> None:
    (pdb,) = of_kind("PodDisruptionBudget")
    node_labels = node()["spec"]["template"]["metadata"]["labels"]
    assert selects(pdb["spec"]["selector"]["matchLabels"], node_labels)
    assert 1 <= pdb["spec"]["minAvailable"] < node()["spec"]["replicas"]


def test_services_select_pods_and_name_their_ports() -> None:
    for svc in of_kind("Service"):
        pods = [t for t in pod_templates() if selects(svc["spec"]["selector"], t["metadata"]["labels"])]
        assert pods, f"Service {svc['metadata']['name']} selects no pod"
        port_names = {p.get("name") for t in pods for c in t["spec"]["containers"]
                      for p in c.get("ports", [])}
        for p in svc["spec"]["ports"]:
            target = p.get("targetPort", p["port"])
            assert isinstance(target, int) or target in port_names, f"{svc['metadata']['name']}: {target}"


def test_redis_persists_append_only_on_a_volume() -> None:
    sts = redis()
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    assert flag(c["args"], "--appendonly") == "yes"
    claims = {v["metadata"]["name"] for v in sts["spec"]["volumeClaimTemplates"]}
    assert any(m["name"] in claims and m["mountPath"] == "/data" for m in c["volumeMounts"])
    assert any(s["metadata"]["name"] == sts["spec"]["serviceName"] for s in of_kind("Service"))
    (policy,) = of_kind("NetworkPolicy")
    redis_labels = sts["spec"]["template"]["metadata"]["labels"]
    assert selects(policy["spec"]["podSelector"]["matchLabels"], redis_labels)
    (rule,) = policy["spec"]["ingress"]
    node_labels = node()["spec"]["template"]["metadata"]["labels"]
    assert selects(rule["from"][0]["podSelector"]["matchLabels"], node_labels)


def test_the_node_reads_config_and_the_admin_secret_by_reference() -> None:
    c = node_container()
    (config,) = of_kind("ConfigMap")
    assert {e["configMapRef"]["name"] for e in c["envFrom"]} == {config["metadata"]["name"]}
    assert undefined_variables() == []
    assert config["data"]["BELOTE_REDIS"].startswith("redis://")
    # one way to Redis: serve refuses $BELOTE_REDIS beside $BELOTE_REDIS_SENTINEL
    assert not {"BELOTE_REDIS_SENTINEL", "BELOTE_REDIS_MASTER"} & set(config["data"])
    volumes = {v["name"]: v for v in node()["spec"]["template"]["spec"]["volumes"]}
    token_file = flag(c["args"], "--admin-token-file")
    (mount,) = [m for m in c["volumeMounts"] if token_file.startswith(m["mountPath"] + "/")]
    assert "secret" in volumes[mount["name"]], "the admin credential comes from a Secret"
    assert not of_kind("Secret"), "no secret value is checked in"


def test_prometheus_finds_the_nodes_metrics() -> None:
    c = node_container()
    annotations = node()["spec"]["template"]["metadata"]["annotations"]
    http_port = flag(c["args"], "--http").rsplit(":", 1)[1]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == http_port and annotations["prometheus.io/path"] == "/metrics"
    (monitor,) = of_kind("ServiceMonitor")
    endpoint_ports = {e["port"] for e in monitor["spec"]["endpoints"]}
    services = [s for s in of_kind("Service") if selects(monitor["spec"]["selector"]["matchLabels"],
                                                          s["metadata"]["labels"])]
    assert any(p.get("name") in endpoint_ports and str(p["port"]) == http_port
               for s in services for p in s["spec"]["ports"])


@pytest.mark.parametrize("folder", [K8S.parent, K8S, EXTERNAL], ids=["k8s", "base", "external"])
def test_each_kustomization_lists_files_that_exist(folder: Path) -> None:
    """A resource is a file, or a folder with a kustomization of its own; a patch is a file."""
    kustomization = load_yaml(folder / "kustomization.yaml")
    for resource in kustomization["resources"]:
        path = folder / resource
        assert path.is_file() or (path / "kustomization.yaml").is_file(), resource
    for patch in kustomization.get("patches", []):
        assert (folder / patch["path"]).is_file(), patch


def test_each_node_advertises_its_stable_name_in_the_headless_service() -> None:
    """Bots dial every node at the address it advertises: the pod's name in the StatefulSet's headless
    Service, which stays the pod's through restarts, on the port the node listens on."""
    d = node()
    args = pod_args(None, "belote-arena-node-1", "arena")
    port = flag(args, "--listen").rsplit(":", 1)[1]
    assert flag(args, "--advertise") == f"belote-arena-node-1.{d['spec']['serviceName']}.arena.svc:{port}"
    headless = named("Service", d["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True, "the name resolves before readiness"
    assert selects(headless["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])
    assert [p["targetPort"] for p in headless["spec"]["ports"]] == ["grpc"]
    assert any(p["name"] == "grpc" and p["containerPort"] == int(port) for p in node_container()["ports"])


def test_a_variable_nothing_defines_is_found() -> None:
    """The check above can fail: a $(VAR) defined nowhere, or only after the env entry that reads it."""
    docs = manifests()
    c = node_container(docs)
    c["args"].append("--capacity=$(BELOTE_NO_SUCH)")
    c["env"].insert(0, {"name": "EARLY", "value": "$(POD_NAME)"})
    assert undefined_variables(docs) == ["env EARLY: $(POD_NAME)",
                                         "--capacity=$(BELOTE_NO_SUCH): $(BELOTE_NO_SUCH)"]
