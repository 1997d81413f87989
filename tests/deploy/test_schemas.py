"""The Kubernetes manifests against Kubernetes' own schemas (kubernetes-validate, --strict: an
unknown field is an error), the compose file against the compose-spec schema (check-jsonschema's
vendored copy). Both validators are in the test extra and ship their schemas: nothing is fetched at
test time. kubernetes-validate has no schema for the kinds that are not Kubernetes' own (the
Kustomization, the Operator's ServiceMonitor, cert-manager's Certificate): test_k8s.py and
test_k8s_external.py check those. The external overlay's patches are not whole resources: what
kustomize builds from them is validated, with the overlay's own files."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.deployfiles import DEPLOY, EXTERNAL, K8S, kustomize, load_yaml, load_yaml_all

#: the kinds kubernetes-validate ships no schema for
NOT_KUBERNETES = {"Kustomization", "ServiceMonitor", "Certificate"}


def run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it): the schema check "
                    "was not run")
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120,
                          check=False)


def kubernetes_validate(*paths: Path) -> subprocess.CompletedProcess[str]:
    return run("kubernetes_validate", "--strict", *map(str, paths))


def compose_validate(path: Path) -> subprocess.CompletedProcess[str]:
    return run("check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path))


def whole_resources(folder: Path) -> list[Path]:
    """The folder's files that are resources, not patches (its kustomization's resources, and the
    files it leaves out for the kinds that need an operator's CRDs)."""
    patches = {p["path"] for p in load_yaml(folder / "kustomization.yaml").get("patches", [])}
    return sorted(p for p in folder.glob("*.yaml") if p.name not in patches)


def test_the_manifests_pass_kubernetes_strict_schemas(tmp_path: Path) -> None:
    """The base's files, the overlay's own, and the overlay as kustomize builds it (its patches
    applied to the base)."""
    overlay = tmp_path / "external-built.yaml"
    overlay.write_text(yaml.safe_dump_all(kustomize(EXTERNAL)), encoding="utf-8")
    paths = [*whole_resources(K8S), *whole_resources(EXTERNAL), overlay]
    done = kubernetes_validate(*paths)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    passed = set(re.findall(r"passed for resource (\S+)", out))
    resources = [d for p in paths for d in load_yaml_all(p)]
    expected = {f"{d['kind'].lower()}/{d['metadata']['name']}" for d in resources
                if d["kind"] not in NOT_KUBERNETES}
    assert passed == expected
    unchecked = set(re.findall(r"Couldn't find schema for kind (\S+)", out))
    assert unchecked == {d["kind"] for d in resources} & NOT_KUBERNETES


def test_strict_validation_rejects_a_misspelt_field(tmp_path: Path) -> None:
    """The check above can fail: a field Kubernetes does not know (which the API server would drop
    without a word) is an error."""
    bad = tmp_path / "node.yaml"
    text = (K8S / "node.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("terminationGracePeriodSeconds:", "terminationGracePeriod:"),
                   encoding="utf-8")
    done = kubernetes_validate(bad)
    assert done.returncode != 0
    assert "'terminationGracePeriod' was unexpected" in done.stdout + done.stderr


def test_the_compose_file_passes_the_compose_spec_schema() -> None:
    done = compose_validate(DEPLOY / "compose.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_spec_schema_rejects_a_misspelt_key(tmp_path: Path) -> None:
    bad = tmp_path / "compose.yaml"
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("stop_grace_period:", "stop_grace:"), encoding="utf-8")
    done = compose_validate(bad)
    assert done.returncode != 0
    assert "'stop_grace' was unexpected" in done.stdout + done.stderr
