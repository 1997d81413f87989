"""Every file under deploy/ parses; promtool checks the Prometheus files and runs the alerts' unit
tests; the compose file is one Docker Compose accepts and whose references hold (issue 10, part 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.deployfiles import DEPLOY, PROMETHEUS, alert_rules, load_yaml, load_yaml_all

YAML = sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])
JSON = sorted(DEPLOY.rglob("*.json"))
#: the alerts the issue asks for
ALERTS = {"BeloteNodeDown", "BeloteNoLiveNode", "BeloteHighStrikeRate", "BeloteHighForfeitRate",
          "BeloteQueueBacklogGrowing", "BeloteDeadLetters", "BeloteDecisionP99NearDeadline"}


def test_there_are_files_to_check() -> None:
    names = {p.relative_to(DEPLOY).as_posix() for p in [*YAML, *JSON]}
    assert {"compose.yaml", "prometheus/prometheus.yml", "prometheus/alerts.yml",
            "prometheus/alerts_test.yml", "grafana/dashboards/arena.json", "k8s/base/node.yaml",
            "k8s/base/redis.yaml", "k8s/external/nodes.yaml", "k8s/external/ingress.yaml"} <= names
    assert (DEPLOY / "Dockerfile").is_file()


@pytest.mark.parametrize("path", YAML, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_yaml_parses(path: Path) -> None:
    assert load_yaml_all(path), f"{path} is empty"


@pytest.mark.parametrize("path", JSON, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_json_parses(path: Path) -> None:
    assert json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ promtool
def promtool(*args: str) -> str:
    exe = shutil.which("promtool")
    if exe is None:
        pytest.skip("promtool is not installed (Debian's prometheus package has it; .ci/run installs it)")
    done = subprocess.run([exe, *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_promtool_check_config() -> None:
    promtool("check", "config", "prometheus.yml")


def test_promtool_check_rules() -> None:
    promtool("check", "rules", "alerts.yml")


def test_promtool_test_rules() -> None:
    assert "SUCCESS" in promtool("test", "rules", "alerts_test.yml")


def test_the_issues_alerts_are_there() -> None:
    assert {r["alert"] for r in alert_rules()} == ALERTS


def test_each_alert_has_a_unit_test_that_it_fires_and_one_that_it_does_not() -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    for test in load_yaml(PROMETHEUS / "alerts_test.yml")["tests"]:
        for case in test.get("alert_rule_test", []):
            (fires if case.get("exp_alerts") else quiet).add(case["alertname"])
    assert fires == ALERTS, f"never shown firing: {ALERTS - fires}"
    assert quiet == ALERTS, f"never shown quiet: {ALERTS - quiet}"


def test_prometheus_loads_the_alerts_and_scrapes_both_nodes() -> None:
    config = load_yaml(PROMETHEUS / "prometheus.yml")
    assert "alerts.yml" in config["rule_files"]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    arena = jobs["belote-arena"]  # the alerts select job="belote-arena"
    assert arena.get("metrics_path", "/metrics") == "/metrics"
    targets = {t for sc in arena["static_configs"] for t in sc["targets"]}
    assert targets == {"node-1:8080", "node-2:8080"}


# ------------------------------------------------------------------ compose
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = load_yaml(DEPLOY / "compose.yaml")
    return doc


def test_compose_references_hold() -> None:
    """What `docker compose config` would not see: the files mounted exist, every service a service
    depends on is there, every named volume is declared, Redis persists, and the nodes are the ones
    Prometheus scrapes, with the HTTP port and a shared admin credential file."""
    doc = compose()
    services: dict[str, Any] = doc["services"]
    volumes = set(doc["volumes"])
    for name, svc in services.items():
        for dep in svc.get("depends_on", {}):
            assert dep in services, f"{name} depends on an unknown service {dep}"
        for mount in svc.get("volumes", []):
            source = mount.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name} mounts {source}, which does not exist"
            else:
                assert source in volumes, f"{name} mounts an undeclared volume {source}"
        build = svc.get("build")
        if build:
            assert (DEPLOY / build["context"] / build["dockerfile"]).is_file()
    for name in ("redis-primary", "redis-replica"):
        redis = services[name]
        command = redis["command"]
        assert "--appendonly" in command and command[command.index("--appendonly") + 1] == "yes"
        assert command[command.index("--replica-announce-ip") + 1] == name  # found by name, not address
        assert any(m.endswith(":/data") and m.split(":")[0] in volumes for m in redis["volumes"])
        assert "ports" not in redis, "Redis is reached on the stack's network only"
    replica = services["redis-replica"]["command"]
    at = replica.index("--replicaof")
    assert replica[at + 1:at + 3] == ["redis-primary", "6379"]
    sentinels = sorted(s for s in services if s.startswith("sentinel-"))
    assert len(sentinels) == 3 and all("ports" not in services[s] for s in sentinels)
    conf = sentinel_conf()
    host, port, quorum = conf["monitor"][1:]
    assert (host, port) == ("redis-primary", "6379") and int(quorum) == len(sentinels) // 2 + 1
    assert conf["resolve-hostnames"] == conf["announce-hostnames"] == ["yes"]
    for node in ("node-1", "node-2"):
        cmd = services[node]["command"]
        assert "--redis" not in cmd
        assert cmd[cmd.index("--redis-sentinel") + 1].split(",") == [f"{s}:26379" for s in sentinels]
        assert cmd[cmd.index("--redis-master") + 1] == conf["monitor"][0]
        assert int(cmd[cmd.index("--redis-wait-replicas") + 1]) == 1  # the stack has one replica
        assert set(sentinels) | {"redis-replica"} <= set(services[node]["depends_on"])
        assert cmd[cmd.index("--http") + 1] == "0.0.0.0:8080"
        assert cmd[cmd.index("--admin-token-file") + 1] == "/secrets/admin.token"
        drain = float(cmd[cmd.index("--drain") + 1])
        grace = services[node]["stop_grace_period"]
        assert grace.endswith("s") and float(grace[:-1]) > drain, "Docker would kill a draining node"
    for svc in services.values():
        for port in svc.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{port}: published on loopback only"
    assert {"prometheus", "grafana", "setup", "ladder"} <= set(services)
    # the bots ask to play the ladder, which the ladder job starts once (nothing loops to keep it busy)
    bots = [n for n, svc in services.items() if "belote_bot.bots." in " ".join(svc.get("entrypoint", []))]
    assert len(bots) == 4 and all("--ladder" in services[n]["entrypoint"] for n in bots)
    job = services["ladder"]["entrypoint"]
    assert job[1:3] == ["/opt/compose/stack.py", "ladder"] and job[job.index("--pool") + 1] == "coinche"
    assert "restart" not in services["ladder"], "a one-shot job"
    assert services["ladder"]["depends_on"]["setup"]["condition"] == "service_completed_successfully"


def sentinel_conf() -> dict[str, list[str]]:
    """The compose stack's sentinel configuration: each ``sentinel`` line's words after its name."""
    out: dict[str, list[str]] = {}
    for line in (DEPLOY / "redis" / "sentinel.conf").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if len(words) > 2 and words[0] == "sentinel":
            out[words[1]] = words[2:]
    return out


def test_the_sentinels_fail_over_soon_and_not_on_a_hiccup() -> None:
    conf = sentinel_conf()
    master = conf["monitor"][0]
    down_after = conf["down-after-milliseconds"]
    assert down_after[0] == master and 1000 <= int(down_after[1]) <= 30000
    assert conf["failover-timeout"][0] == master and int(conf["failover-timeout"][1]) >= int(down_after[1])


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        plugin = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=60, check=False)
        if plugin.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config() -> None:
    cmd = _compose_command()
    if cmd is None:
        pytest.skip("docker compose config: neither the docker client's compose plugin nor docker-compose "
                    "is installed here")
    done = subprocess.run([*cmd, "-f", str(DEPLOY / "compose.yaml"), "config", "--quiet"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
