"""A real node with its web server, bots and a finished tournament (tests/web/site.py): its /metrics
offers every metric name the dashboards and alerts use, its gRPC health answers the image's
healthcheck, and the compose stack's jobs register bots and start the ladder on it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.deployfiles import DEPLOY, SYNTHETIC, exposed_names, used_metric_names
from tests.web.site import ADMIN, Site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = Site(tmp_path_factory.mktemp("deploy-site"))
    try:
        yield s
    finally:
        s.close()


def test_a_live_node_exposes_every_metric_the_dashboards_and_alerts_use(site: Site) -> None:
    try:
        with urllib.request.urlopen(site.url + "/metrics", timeout=30) as reply:
            text = reply.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        pytest.fail(f"the node serves no /metrics on its HTTP port ({e.code}): the metrics of issue 10 "
                    "part 1 are not in this build")
    exposed = exposed_names(text) | SYNTHETIC
    missing = {name: sorted(where) for name, where in used_metric_names().items() if name not in exposed}
    assert not missing, f"used by the deploy files, not in a live node's scrape: {missing}"


def env() -> dict[str, str]:
    """The environment of a subprocess: this interpreter's scripts (belote-arena) first on the PATH."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_the_images_healthcheck_passes_on_a_serving_node_and_fails_on_none(site: Site) -> None:
    assert site.running is not None
    script = str(DEPLOY / "healthcheck.py")
    ok = subprocess.run([sys.executable, script, site.running.address], capture_output=True, text=True,
                        timeout=30, check=False)
    assert ok.returncode == 0, ok.stderr
    host = site.running.address.rsplit(":", 1)[0]
    down = subprocess.run([sys.executable, script, f"{host}:1"], capture_output=True, text=True, timeout=30,
                          check=False)
    assert down.returncode == 1 and "unhealthy" in down.stderr


def test_the_compose_jobs_make_the_admin_credential_register_bots_and_start_the_ladder(
        site: Site, tmp_path: Path) -> None:
    assert site.running is not None
    stack = str(DEPLOY / "compose" / "stack.py")
    secrets = tmp_path / "secrets"
    secrets.mkdir()

    def job(*argv: str) -> str:
        done = subprocess.run([sys.executable, stack, *argv], capture_output=True, text=True, timeout=120,
                              check=False, env={**env(), "BELOTE_SECRETS": str(secrets)})
        assert done.returncode == 0, done.stderr
        return done.stdout

    job("secrets")
    made = (secrets / "admin.token").read_text()
    assert "kept" in job("secrets") and (secrets / "admin.token").read_text() == made  # idempotent
    assert stat.S_IMODE((secrets / "admin.token").stat().st_mode) == 0o600
    # the node has its own admin credential: the job uses whatever the file holds
    (secrets / "admin.token").write_text(ADMIN + "\n")

    address = site.running.address
    assert "registered as" in job("bots", "--address", address, "deploy-new")
    token = (secrets / "deploy-new.token").read_text().strip()
    assert token and stat.S_IMODE((secrets / "deploy-new.token").stat().st_mode) == 0o600
    assert "registered already" in job("bots", "--address", address, "deploy-new")
    listed = subprocess.run(["belote-arena", "bot", "list", "--address", address, "--json"],
                            capture_output=True, text=True, timeout=60, check=False,
                            env={**env(), "BELOTE_ADMIN_TOKEN": ADMIN})
    assert "deploy-new" in {b["name"] for b in json.loads(listed.stdout)}

    def ladder(*argv: str) -> str:
        done = subprocess.run(["belote-arena", "ladder", *argv, "--address", address], capture_output=True,
                              text=True, timeout=60, check=False, env={**env(), "BELOTE_ADMIN_TOKEN": ADMIN})
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        assert job("ladder", "--address", address, "--pool", "classic", "--deals", "2").strip()
        shown = json.loads(ladder("status", "--pool", "classic", "--json"))
        assert shown["on"] is True and shown["deals"] == 2, shown
        job("ladder", "--address", address, "--pool", "classic", "--deals", "2")  # again: as it was
        assert json.loads(ladder("status", "--pool", "classic", "--json"))["on"] is True
    finally:
        ladder("stop", "--pool", "classic")
