"""deploy/k8s/external, the arena open to bots and browsers outside the cluster (issue 26 item 4),
checked as kustomize builds it: each node advertises a name a bot outside dials, its own load
balancer's, on the port that balancer listens on, and serves TLS there from a Secret nobody checked
in; the Ingress serves the pages with TLS from a Service that exists; scripts/k8s_external.py writes
those names and the node count, and its output is what is checked in.

The overlay is built in Python as kustomize does (deployfiles.kustomize); where kubectl is
installed, ``kubectl kustomize`` builds it too and the two must agree."""

from __future__ import annotations

import fnmatch
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.deployfiles import EXTERNAL, K8S, ROOT, kubectl_kustomize, kustomize, load_yaml_all
from tests.deploy.test_k8s import (
    NODE,
    flag,
    named,
    node,
    node_container,
    of_kind,
    pod_args,
    selects,
    undefined_variables,
)

SCRIPT = ROOT / "scripts" / "k8s_external.py"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("k8s_external", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


k8s_external = _script()  # a script, not a package

DOMAIN = "arena.example.org"
REPLICAS = 2
NAMESPACE = "arena"


def built(folder: Path = EXTERNAL) -> list[dict[str, Any]]:
    return kustomize(folder)


def pod_labels(docs: list[dict[str, Any]], index: int) -> dict[str, str]:
    """The labels of the node pod ``index``: its template's, and the StatefulSet controller's."""
    pod = f"{NODE}-{index}"
    return {**node(docs)["spec"]["template"]["metadata"]["labels"], "statefulset.kubernetes.io/pod-name": pod,
            "apps.kubernetes.io/pod-index": str(index), "controller-revision-hash": f"{NODE}-6d8f7c9b5"}


def check_open_to_the_world(docs: list[dict[str, Any]], domain: str, replicas: int) -> None:
    """What makes the overlay's arena reachable from outside, for ``domain`` and ``replicas`` nodes."""
    assert node(docs)["spec"]["replicas"] == replicas
    assert undefined_variables(docs) == []
    public = [s for s in of_kind("Service", docs) if s["spec"].get("type") == "LoadBalancer"]
    assert len(public) == replicas, "one load balancer per node"
    pods = [pod_labels(docs, i) for i in range(replicas)]
    grpc_port = next(p["containerPort"] for p in node_container(docs)["ports"] if p["name"] == "grpc")
    for i in range(replicas):
        pod = f"{NODE}-{i}"
        args = pod_args(docs, pod, NAMESPACE)
        host, _, port = flag(args, "--advertise").rpartition(":")
        assert host == f"{pod}.{domain}", "the node advertises its own public name"
        assert flag(args, "--listen").endswith(f":{grpc_port}")
        (svc,) = [s for s in public if selects(s["spec"]["selector"], pods[i])]
        assert [j for j, labels in enumerate(pods) if selects(svc["spec"]["selector"], labels)] == [i], (
            f"{svc['metadata']['name']} selects exactly one node pod")
        assert svc["metadata"]["annotations"]["external-dns.alpha.kubernetes.io/hostname"] == host
        assert svc["spec"]["externalTrafficPolicy"] == "Local", "the node sees each bot's own address"
        (listener,) = svc["spec"]["ports"]
        assert listener["port"] == int(port) and listener["targetPort"] == "grpc"
    # no Service for a pod the StatefulSet does not make
    assert not [s for s in public if not any(selects(s["spec"]["selector"], labels) for labels in pods)]


def check_tls(docs: list[dict[str, Any]], domain: str, certificate: dict[str, Any]) -> None:
    """The nodes' gRPC and the Ingress serve the certificate of one Secret, which names every host
    clients dial, and which the overlay references but does not hold."""
    c = node_container(docs)
    args = pod_args(docs, f"{NODE}-0", NAMESPACE)
    volumes = {v["name"]: v for v in node(docs)["spec"]["template"]["spec"]["volumes"]}
    secrets = set()
    for option in ("--tls-cert", "--tls-key"):
        path = flag(args, option)
        (mount,) = [m for m in c["volumeMounts"] if path.startswith(m["mountPath"] + "/")]
        secret = volumes[mount["name"]]["secret"]
        assert path.rsplit("/", 1)[1] in ("tls.crt", "tls.key"), "a kubernetes.io/tls Secret's keys"
        assert mount.get("readOnly") is True
        secrets.add(secret["secretName"])
    (ingress,) = of_kind("Ingress", docs)
    (tls,) = ingress["spec"]["tls"]
    assert secrets == {tls["secretName"]} == {certificate["spec"]["secretName"]}
    hosts = [*tls["hosts"], *(flag(pod_args(docs, f"{NODE}-{i}", NAMESPACE), "--advertise").rsplit(":", 1)[0]
                               for i in range(node(docs)["spec"]["replicas"]))]
    names = certificate["spec"]["dnsNames"]
    for host in hosts:
        assert any(fnmatch.fnmatch(host, n) and host.count(".") == n.count(".") for n in names), host
    assert not of_kind("Secret", docs), "no certificate or key is checked in"


def check_pages(docs: list[dict[str, Any]], domain: str) -> None:
    (ingress,) = of_kind("Ingress", docs)
    (rule,) = ingress["spec"]["rules"]
    assert rule["host"] == domain and ingress["spec"]["tls"][0]["hosts"] == [domain]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    service = named("Service", backend["name"], docs)
    (port,) = [p for p in service["spec"]["ports"] if p.get("name") == backend["port"]["name"]]
    http = flag(pod_args(docs, f"{NODE}-0", NAMESPACE), "--http").rsplit(":", 1)[1]
    container_port = next(p for p in node_container(docs)["ports"] if p["name"] == port["targetPort"])
    assert container_port["containerPort"] == int(http), "the Ingress reaches the node's --http"
    assert selects(service["spec"]["selector"], node(docs)["spec"]["template"]["metadata"]["labels"])
    args = pod_args(docs, f"{NODE}-0", NAMESPACE)
    assert flag(args, "--http-origin") == f"https://{domain}", "sign-ins from the pages' origin"
    assert "--http-tls-cert" not in " ".join(args), "TLS ends at the Ingress"


def test_the_overlay_builds_as_kubectl_kustomize_builds_it() -> None:
    theirs = kubectl_kustomize(EXTERNAL)
    if theirs is None:
        pytest.skip("kubectl is not installed: the overlay was built in Python only")
    assert {(d["kind"], d["metadata"]["name"]): d for d in built()} == {
        (d["kind"], d["metadata"]["name"]): d for d in theirs}


def test_each_node_advertises_the_name_of_its_own_load_balancer() -> None:
    check_open_to_the_world(built(), DOMAIN, REPLICAS)


def test_the_nodes_and_the_ingress_serve_tls_from_a_secret_not_checked_in() -> None:
    (certificate,) = load_yaml_all(EXTERNAL / "certificate.yaml")
    check_tls(built(), DOMAIN, certificate)
    for path in EXTERNAL.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "PRIVATE KEY" not in text and "BEGIN CERTIFICATE" not in text, path.name


def test_the_ingress_serves_the_pages_with_tls() -> None:
    check_pages(built(), DOMAIN)


def test_the_nodes_are_probed_on_their_http_port() -> None:
    """Kubernetes' grpc probe speaks plaintext: a node serving TLS is probed at /healthz, which says
    what its gRPC health check says (NOT_SERVING while it drains)."""
    docs = built()
    c = node_container(docs)
    http = flag(pod_args(docs, f"{NODE}-0", NAMESPACE), "--http").rsplit(":", 1)[1]
    assert "--tls-cert" in " ".join(c["args"])
    for probe in ("readinessProbe", "livenessProbe"):
        assert "grpc" not in c[probe], probe
        assert c[probe]["httpGet"]["path"] == "/healthz", probe
        (port,) = [p for p in c["ports"] if p["name"] == c[probe]["httpGet"]["port"]]
        assert port["containerPort"] == int(http), probe


def test_the_overlay_keeps_the_base_as_it_is_elsewhere() -> None:
    """The overlay adds and changes only what opening the arena needs: the rest of the node (the
    drain, the grace period, the admin Secret, the other flags) and every other resource are the
    base's."""
    base, docs = kustomize(K8S), built()
    base_args, args = node_container(base)["args"], node_container(docs)["args"]
    assert args[:len(base_args)] == base_args, "flags only appended (the advertised address by env)"
    assert all(a.startswith(("--tls-", "--http-")) for a in args[len(base_args):])
    for key in ("terminationGracePeriodSeconds", "securityContext"):
        assert node(docs)["spec"]["template"]["spec"][key] == node(base)["spec"]["template"]["spec"][key]
    assert node(docs)["spec"]["updateStrategy"] == node(base)["spec"]["updateStrategy"]
    kept = {(d["kind"], d["metadata"]["name"]): d for d in base}
    changed = {k for k, d in ((k, d) for d in docs for k in [(d["kind"], d["metadata"]["name"])])
               if k in kept and kept[k] != d}
    assert changed == {("StatefulSet", NODE), ("ConfigMap", "belote-arena")}
    assert set(kept) <= {(d["kind"], d["metadata"]["name"]) for d in docs}
    config = named("ConfigMap", "belote-arena", docs)["data"]
    assert {k: v for k, v in config.items() if k != "BELOTE_DOMAIN"} == named("ConfigMap", "belote-arena",
                                                                              base)["data"]


def test_the_checked_in_overlay_is_what_the_script_writes() -> None:
    """scripts/k8s_external.py --domain arena.example.org --replicas 2 wrote these files."""
    for name, text in k8s_external.render(DOMAIN, REPLICAS).items():
        assert (EXTERNAL / name).read_text(encoding="utf-8") == text, f"{name}: run the script again"


@pytest.fixture
def copy_of_the_overlays(tmp_path: Path) -> Path:
    """deploy/k8s/base and deploy/k8s/external, side by side in a folder of the test's own."""
    shutil.copytree(K8S, tmp_path / "base")
    shutil.copytree(EXTERNAL, tmp_path / "external")
    return tmp_path / "external"


def test_the_script_scales_the_nodes_and_names_them_under_another_domain(copy_of_the_overlays: Path) -> None:
    """Three nodes under play.example.net: one load balancer each, each node advertising its own."""
    out = copy_of_the_overlays
    done = subprocess.run([sys.executable, str(SCRIPT), "--domain", "Play.Example.NET.", "--replicas", "3",
                           "--out", str(out)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote ") == len(k8s_external.render(DOMAIN, REPLICAS))
    docs = built(out)
    check_open_to_the_world(docs, "play.example.net", 3)
    (certificate,) = load_yaml_all(out / "certificate.yaml")
    check_tls(docs, "play.example.net", certificate)
    check_pages(docs, "play.example.net")
    theirs = kubectl_kustomize(out)
    if theirs is not None:
        assert {(d["kind"], d["metadata"]["name"]) for d in theirs} == {
            (d["kind"], d["metadata"]["name"]) for d in docs}


@pytest.mark.parametrize("args, why", [
    (["--domain", "arena", "--replicas", "2"], "--domain must be a DNS name"),
    (["--domain", "arena.example.org/x", "--replicas", "2"], "--domain must be a DNS name"),
    (["--domain", "arena.example.org", "--replicas", "1"], "--replicas must be from 2 to 100"),
])
def test_the_script_refuses_a_bad_domain_or_a_lone_node(copy_of_the_overlays: Path, args: list[str],
                                                        why: str) -> None:
    before = {p.name: p.read_text(encoding="utf-8") for p in copy_of_the_overlays.iterdir()}
    done = subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(copy_of_the_overlays)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and why in done.stderr
    assert {p.name: p.read_text(encoding="utf-8") for p in copy_of_the_overlays.iterdir()} == before


def test_the_kustomize_simulation_merges_lists_as_kustomize_does() -> None:
    """The Python build above, on what the overlay relies on: env merged by name, the patch's entries
    first (so that the overlay's env lists its entries in the order their $(VAR)s need), a null
    deleting a probe's handler, args appended by a JSON patch."""
    from tests.deploy.deployfiles import json_patch, strategic_merge

    base = {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "$(A)"}],
            "probe": {"grpc": {"port": 1}, "periodSeconds": 5}, "args": ["--x"]}
    patch = {"env": [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
             "probe": {"grpc": None, "httpGet": {"path": "/healthz"}}, "args": ["--y"]}
    assert strategic_merge(base, patch) == {
        "env": [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}, {"name": "A", "value": "1"}],
        "probe": {"periodSeconds": 5, "httpGet": {"path": "/healthz"}}, "args": ["--y"]}
    assert json_patch(base, [{"op": "add", "path": "/args/-", "value": "--z"}])["args"] == ["--x", "--z"]


def howto_commands() -> list[str]:
    """The shell block of the how-to "Kubernetes open to the world" (docs/how-to/kubernetes-external.md),
    one command a line."""
    section = (ROOT / "docs" / "how-to" / "kubernetes-external.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line.split("   #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_how_to_names_what_the_overlay_has() -> None:
    """Its commands run the script with flags it takes, apply files that exist, list the nodes' Services
    by a label they have, and create the Secret the nodes read, under the names the overlay uses."""
    commands = howto_commands()
    docs = built()
    for command in commands:
        words = shlex.split(command)
        if words[:2] == ["python3", "scripts/k8s_external.py"]:
            flags = dict(zip(words[2::2], words[3::2], strict=True))
            assert set(flags) == {"--domain", "--replicas"} and int(flags["--replicas"]) == REPLICAS
            assert flags["--domain"] == DOMAIN
        elif words[:2] == ["kubectl", "apply"]:
            path = ROOT / words[3]
            assert path.is_file() if words[2] == "-f" else (path / "kustomization.yaml").is_file(), command
        elif words[:3] == ["kubectl", "get", "service"]:
            key, _, value = words[words.index("-l") + 1].partition("=")
            listed = [s["metadata"]["name"] for s in of_kind("Service", docs)
                      if s["metadata"]["labels"].get(key) == value]
            assert listed == [f"{NODE}-{i}" for i in range(REPLICAS)], command
        elif words[:4] == ["kubectl", "create", "secret", "generic"]:
            volumes = node(docs)["spec"]["template"]["spec"]["volumes"]
            assert words[4] in {v["secret"]["secretName"] for v in volumes if "secret" in v}
    dialed = {flag(shlex.split(c), "--address") for c in commands if "--address" in c}
    assert dialed == {f"{NODE}-0.{DOMAIN}:443"}, "a node's own advertised name"
    assert flag(pod_args(docs, f"{NODE}-0", NAMESPACE), "--advertise") in dialed
