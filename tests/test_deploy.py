"""The deployment files (Dockerfile, .dockerignore, docker-compose.yml, .env.example)
checked against the code they run: every `fptrack` command line parses with the real
CLI, the web healthcheck asks for a real page, every variable is documented, every
volume declared. Docker itself is not needed."""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from urllib.parse import urlsplit

import click
import pytest

from .conftest import ROOT, need

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the environment
    yaml = None

SERVICES = {"mongo", "redis", "worker", "beat", "web", "crawler"}
APP_SERVICES = {"worker", "beat", "web", "crawler"}
BACKING = ("mongo", "redis")
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}, ${NAME:+alt}
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}")
BARE_VAR = re.compile(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)")


# --- loading ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compose() -> dict:
    need(yaml is not None, "PyYAML is not installed (pip install pyyaml); it reads docker-compose.yml")
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict) and isinstance(data.get("services"), dict)
    return data


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def env_example() -> dict[str, str]:
    """The assignments of .env.example (comments and blank lines skipped)."""
    out = {}
    for n, line in enumerate((ROOT / ".env.example").read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), \
            f".env.example line {n} is not NAME=value: {line!r}"
        out[name] = value
    return out


def interpolate(text: str) -> str:
    """What docker compose makes of `text` with .env copied from .env.example (empty
    required values get a placeholder, so a command line can still be parsed)."""
    env = env_example()

    def one(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = env.get(name)
        if op in (":-", "-") and not value:
            return arg
        return value or "placeholder"

    return VAR.sub(one, text)


def strings(node) -> list[str]:
    """Every string in a loaded YAML tree, keys included."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*strings(k), *strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return []


def argv(value) -> list[str]:
    if value is None:
        return []
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


def command_lines(name: str, svc: dict) -> list[list[str]]:
    """The command lines a service runs: entrypoint + command, and its healthcheck."""
    lines = []
    run = argv(svc.get("entrypoint")) + argv(svc.get("command"))
    if run:
        lines.append(run)
    test = argv((svc.get("healthcheck") or {}).get("test"))
    if test and test[0] == "CMD-SHELL":
        lines.append(shlex.split(" ".join(test[1:])))
    elif test and test[0] == "CMD":
        lines.append(test[1:])
    return lines


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out, pending = [], ""
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        if full:
            word, _, rest = full.partition(" ")
            out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def env_pairs(args: str) -> dict[str, str]:
    """An ENV instruction's KEY=value pairs (or its legacy `ENV KEY value` form)."""
    tokens = shlex.split(args)
    if tokens and "=" not in tokens[0]:
        return {tokens[0]: " ".join(tokens[1:])}
    return dict(t.split("=", 1) for t in tokens)


def is_named_volume(source: str) -> bool:
    return not source.startswith((".", "/", "~", "$"))


def volume_mounts(svc: dict) -> list[tuple[str, str]]:
    """(source, target) of a service's volumes, in short or long syntax."""
    out = []
    for v in svc.get("volumes") or []:
        if isinstance(v, str):
            parts = v.split(":")
            out.append((parts[0], parts[1]) if len(parts) > 1 else ("", parts[0]))
        else:
            out.append((v.get("source", ""), v["target"]))
    return out


# --- the CLI ------------------------------------------------------------------------------

def celery_command(name: str) -> click.Command:
    from celery.bin.beat import beat
    from celery.bin.worker import worker

    known = {"worker": worker, "beat": beat}
    assert name in known, f"`fptrack {name}` passes its arguments on, but this test does not know to what"
    return known[name]


def parse_fptrack(args: list[str]) -> list[str]:
    """Parse an `fptrack ...` command line with the real click commands (subcommands
    resolved through the lazy group, option names and values checked). Returns the
    command path. Arguments that fptrack hands on to Celery are parsed by Celery's own
    command. Raises click.UsageError (or AssertionError) when the line is wrong."""
    from fptrack.cli import main

    assert args and args[0] == "fptrack", args
    rest = [interpolate(a) for a in args[1:]]
    cmd: click.Command = main
    path = ["fptrack"]
    while isinstance(cmd, click.Group):
        ctx = click.Context(cmd, info_name=" ".join(path))
        assert rest, f"`{' '.join(args)}`: no subcommand after {' '.join(path)}"
        if rest[0].startswith("-"):  # only the group's own options: --help, --version
            try:
                cmd.make_context(" ".join(path), rest)
            except click.exceptions.Exit as e:
                assert e.exit_code == 0
                return path
            raise AssertionError(f"`{' '.join(args)}`: no subcommand after {' '.join(path)}")
        name = rest.pop(0)
        assert name in cmd.list_commands(ctx), f"`{' '.join(path)}` has no subcommand {name!r}"
        cmd = cmd.get_command(ctx, name)
        assert cmd is not None, f"`{' '.join(path)} {name}` did not load"
        path.append(name)
    passthrough = any(isinstance(p, click.Argument) and isinstance(p.type, click.types.UnprocessedParamType)
                      for p in cmd.params)
    try:
        if passthrough:
            from celery import Celery
            from celery.bin.base import CLIContext

            target = celery_command(path[-1])
            target.make_context(path[-1], rest, obj=CLIContext(app=Celery("check"), no_color=True, workdir=None,
                                                                quiet=True))
        else:
            cmd.make_context(" ".join(path), rest)
    except click.exceptions.Exit as e:  # --help, --version
        assert e.exit_code == 0
    return path


def test_the_command_line_check_catches_mistakes():
    parse_fptrack(["fptrack", "crawl", "--all-sites"])
    parse_fptrack(["fptrack", "worker", "--concurrency", "2"])
    parse_fptrack(["fptrack", "user", "add", "alice", "--role", "admin"])
    with pytest.raises(AssertionError):
        parse_fptrack(["fptrack", "crawler"])
    with pytest.raises(click.UsageError):
        parse_fptrack(["fptrack", "crawl", "--all-site"])
    with pytest.raises(click.UsageError):
        parse_fptrack(["fptrack", "web", "--port", "eighty"])
    with pytest.raises(click.UsageError):
        parse_fptrack(["fptrack", "worker", "--concurency", "2"])
    with pytest.raises(AssertionError):
        parse_fptrack(["fptrack", "user", "ad", "alice"])
    with pytest.raises(AssertionError):
        parse_fptrack(["fptrack", "sites"])
    with pytest.raises((AssertionError, click.UsageError)):
        parse_fptrack(["fptrack", "--all-sites"])
    assert parse_fptrack(["fptrack", "--help"]) == ["fptrack"]


# --- docker-compose.yml -------------------------------------------------------------------

def test_the_six_services_exist(services):
    assert SERVICES <= set(services), f"missing services: {sorted(SERVICES - set(services))}"


def test_every_app_service_runs_the_image_built_here(services):
    runs_fptrack = {name for name, svc in services.items()
                    if any(line and line[0] == "fptrack" for line in command_lines(name, svc))}
    assert runs_fptrack >= APP_SERVICES
    images = set()
    for name in sorted(runs_fptrack | APP_SERVICES):
        svc = services[name]
        build = svc.get("build")
        assert build is not None, f"{name} runs fptrack but does not build the image"
        context = build if isinstance(build, str) else build.get("context", ".")
        dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        assert (ROOT / context).resolve() == ROOT, f"{name} builds from {context}, not from this repository"
        assert (ROOT / context / dockerfile).resolve() == ROOT / "Dockerfile"
        assert svc.get("image"), f"{name} should name the built image, so all services share one"
        images.add(svc["image"])
    assert len(images) == 1, f"the app services use different images: {sorted(images)}"
    image = images.pop()
    assert image.split(":")[0] == "fptrack", f"the built image is tagged {image!r}, which could clash with a pulled one"
    for name in BACKING:
        assert "build" not in services[name]
    assert services["mongo"]["image"].startswith("mongo:7")
    assert services["redis"]["image"].startswith("redis:7-alpine")


def test_every_fptrack_command_line_parses_with_the_real_cli(services):
    seen = {}
    for name, svc in services.items():
        for line in command_lines(name, svc):
            if line and line[0] == "fptrack":
                seen[name] = parse_fptrack(line)
    assert seen["worker"] == ["fptrack", "worker"]
    assert seen["beat"] == ["fptrack", "beat"]
    assert seen["web"] == ["fptrack", "web"]
    assert seen["crawler"] == ["fptrack", "crawl"]


def test_the_dockerfile_default_command_parses():
    cmds = [args for word, args in dockerfile_instructions() if word in ("CMD", "ENTRYPOINT")]
    for args in cmds:
        line = json.loads(args) if args.startswith("[") else shlex.split(args)
        if line and line[0] == "fptrack":
            parse_fptrack(line)


def test_commands_and_their_arguments(services):
    web = argv(services["web"]["command"])
    assert web[web.index("--host") + 1] == "0.0.0.0", "the admin must listen on every address of its container"
    crawler = services["crawler"]
    assert argv(crawler["command"])[:3] == ["fptrack", "crawl", "--all-sites"]
    assert crawler.get("profiles") == ["crawl"], "the crawler runs on demand (docker compose run --rm crawler)"
    assert str(crawler.get("restart", "no")) in ("no", "False"), "a finished crawl must not be restarted"
    for name in SERVICES - {"crawler"}:
        assert "profiles" not in services[name], f"{name} must start with `docker compose up`"
        assert services[name].get("restart") in ("unless-stopped", "always"), f"{name} needs a restart policy"


def test_workers_can_be_scaled_and_beat_is_single(services):
    worker = services["worker"]
    assert "container_name" not in worker and "ports" not in worker, \
        "docker compose up --scale worker=N needs workers without a fixed name or host port"
    beat = services["beat"]
    assert (beat.get("deploy") or {}).get("replicas", 1) == 1, "two beats would send every daily task twice"


def test_variables_are_documented_in_env_example(compose):
    documented = env_example()
    used = set()
    for s in strings(compose):
        used.update(m.group(1) for m in VAR.finditer(s))
        bare = BARE_VAR.findall(s.replace("$$", ""))
        assert not bare, f"use ${{NAME}} (or $$ for a literal $), not ${bare[0]}: {s!r}"
    assert used, "the compose file reads no variables at all?"
    missing = used - set(documented)
    assert not missing, f"used in docker-compose.yml but not in .env.example: {sorted(missing)}"
    stale = set(documented) - used
    assert not stale, f"in .env.example but never read by docker-compose.yml: {sorted(stale)}"


def test_the_secret_key_comes_from_env(compose, services):
    for name in APP_SERVICES:
        env = services[name]["environment"]
        assert isinstance(env, dict)
        assert re.fullmatch(r"\$\{FPT_SECRET_KEY(:\?[^}]*)?\}", env["FPT_SECRET_KEY"]), \
            "FPT_SECRET_KEY must come from .env, with no default written in the compose file"
        assert env["FPT_MONGO_URL"] == "mongodb://mongo:27017"
        assert env["FPT_REDIS_URL"] == "redis://redis:6379/0"
        assert env["FPT_BROKER_URL"] == "redis://redis:6379/1"
    assert env_example()["FPT_SECRET_KEY"] == "", ".env.example must not ship a usable secret key"


def test_every_fpt_variable_is_a_real_setting(services):
    """A misspelt FPT_ name would be silently ignored by the containers."""
    from dataclasses import fields

    from tracker.settings import Settings

    known = {f"FPT_{f.name.upper()}" for f in fields(Settings)} | {"FPT_SECRET_KEY", "FPT_CONFIG"}
    for name in sorted(APP_SERVICES | set(SHARDED_APPS)):
        for var in services[name]["environment"]:
            assert var in known or var.startswith("FPT_WEB_"), f"{name}: {var} is not an fptrack setting"
    from web import DEFAULTS

    web_env = services["web"]["environment"]
    for var in web_env:
        if var.startswith("FPT_WEB_"):
            assert var[len("FPT_WEB_"):] in DEFAULTS, f"{var} sets no known Flask setting of the admin"


def test_app_services_wait_for_healthy_mongo_and_redis(services):
    for name, svc in services.items():
        deps = svc.get("depends_on")
        if deps is None:
            continue
        if isinstance(deps, list):
            assert not set(deps) & set(BACKING), f"{name}: depends_on {deps} does not wait for a healthy service"
            continue
        for dep in BACKING:
            if dep in deps:
                assert deps[dep].get("condition") == "service_healthy", f"{name} starts before {dep} is healthy"
    for name in APP_SERVICES:
        assert set(BACKING) <= set(services[name].get("depends_on") or {}), f"{name} must wait for mongo and redis"


def test_mongo_and_redis_have_healthchecks(services):
    mongo = " ".join(argv(services["mongo"]["healthcheck"]["test"]))
    assert "mongosh" in mongo and "db.adminCommand('ping')" in mongo
    redis = argv(services["redis"]["healthcheck"]["test"])
    assert redis[-2:] == ["redis-cli", "ping"]
    assert "--appendonly" in argv(services["redis"]["command"])


def test_named_volumes_are_declared_and_fpt_home_is_one(compose, services):
    declared = set(compose.get("volumes") or {})
    used = set()
    for name, svc in services.items():
        for source, _target in volume_mounts(svc):
            if source and is_named_volume(source):
                assert source in declared, f"{name} uses volume {source!r}, which is not declared"
                used.add(source)
    assert declared == used, f"declared but unused volumes: {sorted(declared - used)}"
    assert any(t == "/data/db" and is_named_volume(s) for s, t in volume_mounts(services["mongo"]))
    assert any(t == "/data" and is_named_volume(s) for s, t in volume_mounts(services["redis"]))
    for name in APP_SERVICES:
        home = services[name]["environment"]["FPT_HOME"]
        assert any(t == home and is_named_volume(s) for s, t in volume_mounts(services[name])), \
            f"{name}: FPT_HOME={home} is not on a named volume, so its files would be lost"
    homes = {s for name in APP_SERVICES for s, t in volume_mounts(services[name])
             if t == services[name]["environment"]["FPT_HOME"]}
    assert len(homes) == 1, "every app service must share one FPT_HOME volume (beat schedule, secret key file)"


def test_the_web_healthcheck_asks_for_a_real_page(services, tmp_path):
    from tracker.settings import Settings
    from web import create_app

    web = services["web"]
    test = argv(web["healthcheck"]["test"])
    assert test[0] == "CMD" and test[1] == "python", "the slim image has no curl: check with python's urllib"
    code = " ".join(test[2:])
    assert "urllib.request" in code
    urls = re.findall(r"https?://[^'\"\s)]+", code)
    assert len(urls) == 1, code
    url = urlsplit(urls[0])
    command = argv(web["command"])
    port = int(command[command.index("--port") + 1])
    assert url.hostname in ("127.0.0.1", "localhost") and url.port == port
    published = [str(p) for p in web.get("ports", [])]
    assert published and all(p.rsplit(":", 1)[-1] == str(port) for p in published), \
        f"the published port {published} is not the one the admin listens on ({port})"

    app = create_app({"SETTINGS": Settings.load({"FPT_HOME": str(tmp_path)}), "SECRET_KEY": "test"})
    adapter = app.url_map.bind("localhost")
    endpoint, _ = adapter.match(url.path, method="GET")  # raises NotFound for an unknown path
    assert endpoint == "auth.healthz"  # answers only when the store does too
    # urlopen fails on 4xx/5xx: the page must answer 200 to a client that is not signed in.
    response = app.test_client().get(url.path)
    assert response.status_code == 200, response.status_code


# --- docker-compose.yml, profile "sharded" ------------------------------------------------

SHARDED_APPS = {"worker-sharded": "worker", "beat-sharded": "beat", "web-sharded": "web", "crawler-sharded": "crawler"}
CLUSTER = {"mongo-config", "mongo-shard-a", "mongo-shard-b", "mongos"}
SETUP = {"mongo-replica-sets", "mongo-sharding"}
SHARDED = set(SHARDED_APPS) | CLUSTER | SETUP


def sharding_args(svc: dict):
    """A set-up service's command line, parsed by the real parser of tracker.store.mongo.sharding."""
    from tracker.store.mongo.sharding import make_parser

    line = [interpolate(a) for a in argv(svc["command"])]
    assert line[:3] == ["python", "-m", "tracker.store.mongo.sharding"], line
    return make_parser().parse_args(line[3:])


def option(line: list[str], name: str) -> str:
    assert name in line, f"{name} missing from {line}"
    return line[line.index(name) + 1]


def test_the_sharded_profile_is_apart_from_the_default_stack(services):
    assert SHARDED <= set(services), f"missing services: {sorted(SHARDED - set(services))}"
    for name in SHARDED:
        assert services[name].get("profiles") == ["sharded"], f"{name} must start only with the sharded profile"
    for name in SERVICES:
        assert "sharded" not in (services[name].get("profiles") or []), name
        deps = set(services[name].get("depends_on") or {})
        assert not deps & SHARDED, f"{name} of the default stack waits for a sharded service"


def test_sharded_app_services_are_the_default_ones_against_mongos(services):
    for name, default in SHARDED_APPS.items():
        svc, base = services[name], services[default]
        assert argv(svc["command"]) == argv(base["command"]), name
        env = dict(svc["environment"])
        assert env.pop("FPT_MONGO_URL") == "mongodb://mongos:27017"
        expected = {k: v for k, v in base["environment"].items() if k != "FPT_MONGO_URL"}
        assert env == expected, f"{name} differs from {default} in more than the MongoDB address"
        assert svc["image"] == base["image"] and svc["build"] == base["build"]
        assert volume_mounts(svc) == volume_mounts(base)
        deps = svc["depends_on"]
        assert "mongo" not in deps, f"{name} must not start the single mongo"
        assert deps["mongo-sharding"]["condition"] == "service_completed_successfully", \
            f"{name} must wait until the collections are sharded"
        assert deps["redis"]["condition"] == "service_healthy"
        expected_restart = str(base.get("restart", "no"))
        assert str(svc.get("restart", "no")) == expected_restart, name
    assert "container_name" not in services["worker-sharded"] and "ports" not in services["worker-sharded"]
    assert services["web-sharded"]["ports"] == services["web"]["ports"]
    assert services["web-sharded"]["healthcheck"]["test"] == services["web"]["healthcheck"]["test"]


def test_the_cluster_is_wired_as_the_set_up_service_says(services):
    """Replica set names, hosts and ports agree between each mongod, the set-up commands
    (parsed by the real command), the mongos and the URL the apps use."""
    from tracker.store.mongo.sharding import parse_replica_set

    def member(spec: str, role: str) -> None:
        name, hosts = parse_replica_set(spec)
        assert len(hosts) == 1
        host, port = hosts[0].split(":")
        assert host in services, f"{spec}: no service {host}"
        line = argv(services[host]["command"])
        assert line[0] == "mongod" and role in line, f"{host} must run mongod {role}"
        assert option(line, "--replSet") == name and option(line, "--port") == port
        assert "--bind_ip_all" in line, f"{host} must listen beyond its own container"
        health = argv(services[host]["healthcheck"]["test"])
        assert "mongosh" in health and option(health, "--port") == port

    rs = sharding_args(services["mongo-replica-sets"])
    assert rs.command == "replica-sets"
    member(rs.config, "--configsvr")
    assert len(rs.shard) == 2
    for spec in rs.shard:
        member(spec, "--shardsvr")

    mongos = argv(services["mongos"]["command"])
    assert mongos[0] == "mongos" and option(mongos, "--configdb") == rs.config and "--bind_ip_all" in mongos

    shard = sharding_args(services["mongo-sharding"])
    assert shard.command == "shard"
    assert shard.add_shard == rs.shard, "the shards added are the replica sets initiated"
    url = urlsplit(shard.url)
    assert url.hostname == "mongos" and url.port == int(option(mongos, "--port"))
    for name in SHARDED_APPS:
        assert services[name]["environment"]["FPT_MONGO_URL"] == shard.url
        assert interpolate(services[name]["environment"]["FPT_MONGO_DB"]) == shard.db, \
            "the collections sharded are in the database the apps use"


def test_the_cluster_starts_in_order(services):
    def waits(name: str) -> dict[str, str]:
        return {dep: spec["condition"] for dep, spec in services[name]["depends_on"].items()}

    assert waits("mongo-replica-sets") == {"mongo-config": "service_healthy", "mongo-shard-a": "service_healthy",
                                           "mongo-shard-b": "service_healthy"}
    assert waits("mongos") == {"mongo-replica-sets": "service_completed_successfully"}
    assert waits("mongo-sharding") == {"mongos": "service_healthy"}
    for name in SETUP:
        assert str(services[name].get("restart", "no")) in ("no", "False"), f"{name} runs once"
        assert services[name]["image"] == services["worker"]["image"], f"{name} runs the module of the fptrack image"
        assert services[name]["build"] == services["worker"]["build"]
    for name in CLUSTER:
        assert services[name]["image"].startswith("mongo:7") and "build" not in services[name]
        assert services[name].get("restart") == "unless-stopped"
        assert services[name].get("healthcheck"), f"{name} needs a healthcheck: others wait for it"


def test_every_cluster_member_keeps_its_data_on_a_named_volume(services):
    for name in ("mongo-config", "mongo-shard-a", "mongo-shard-b"):
        line = argv(services[name]["command"])
        path = option(line, "--dbpath")
        mounts = [s for s, t in volume_mounts(services[name]) if t == path and is_named_volume(s)]
        assert mounts, f"{name} keeps its data in {path}, which is not on a named volume"
    sources = [s for name in ("mongo-config", "mongo-shard-a", "mongo-shard-b")
               for s, _ in volume_mounts(services[name])]
    assert len(set(sources)) == len(sources), "two members share a volume"


# --- Dockerfile and .dockerignore ---------------------------------------------------------

def test_dockerfile_base_install_and_user():
    instructions = dockerfile_instructions()
    froms = [args for word, args in instructions if word == "FROM"]
    assert froms and froms[-1].split()[0].startswith("python:3.11"), froms
    assert froms[0].split()[0] == "python:3.11-slim"

    runs = [args for word, args in instructions if word == "RUN"]
    pip_installs = [cmd.strip() for r in runs for cmd in re.split(r"&&|;", r) if "pip install" in cmd]
    assert pip_installs, "no pip install in the Dockerfile"
    for cmd in pip_installs:
        assert "--no-cache-dir" in cmd, f"pip keeps its cache in the image: {cmd}"
        assert not re.search(r"\.\[|\[(test|bench|dev)", cmd), f"extras installed: {cmd}"
    from_repo = [cmd for cmd in pip_installs if "." in shlex.split(cmd)]
    assert from_repo, "the project is not installed with `pip install .`"

    copies = [i for i, (word, args) in enumerate(instructions) if word == "COPY" and args.split()[:1] == ["."]]
    install_at = next(i for i, (word, args) in enumerate(instructions)
                      if word == "RUN" and any(c in args for c in from_repo))
    assert copies and copies[0] < install_at, "the repository must be copied before `pip install .`"

    users = [args.split(":")[0] for word, args in instructions if word == "USER"]
    assert users, "no USER: the containers would run as root"
    assert users[-1] not in ("root", "0"), users
    last_user = max(i for i, (word, _) in enumerate(instructions) if word == "USER")
    assert install_at < last_user, "switch user after installing, not before"
    created = " ".join(runs)
    assert re.search(rf"\b(useradd|adduser)\b[^&;]*\b{re.escape(users[-1])}\b", created), \
        f"the user {users[-1]!r} is never created"

    env = {}
    for word, args in instructions:
        if word == "ENV":
            env.update(env_pairs(args))
    assert env.get("FPT_HOME") == "/data"


def test_dockerfile_fpt_home_matches_the_compose_volume(services):
    env = {}
    for word, args in dockerfile_instructions():
        if word == "ENV":
            env.update(env_pairs(args))
    for name in APP_SERVICES:
        assert services[name]["environment"]["FPT_HOME"] == env["FPT_HOME"]


def docker_ignored(path: str, patterns: list[str]) -> bool:
    """Whether Docker leaves `path` out of the build context: the last pattern that
    matches the path or one of its parent folders decides; `!` re-includes."""

    def regex(pattern: str) -> re.Pattern:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            elif pattern[i] == "[":
                j = pattern.index("]", i)
                out, i = out + pattern[i:j + 1], j + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return re.compile(out)

    parts = path.split("/")
    candidates = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    ignored = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw[1:] if negate else raw
        pattern = pattern.strip("/")
        if any(regex(pattern).fullmatch(c) for c in candidates):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_what_the_build_needs_and_nothing_else():
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    needed = ["pyproject.toml", "README.md"]
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = {setup["package-dir"].get(p, p) for p in setup["packages"] if "." not in p}
    assert "samples" in folders  # the package fptrack_samples
    for package in sorted(folders):
        for f in (ROOT / package).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                needed.append(f.relative_to(ROOT).as_posix())
    assert len(needed) > 50
    kept_out = [p for p in needed if docker_ignored(p, patterns)]
    assert not kept_out, f".dockerignore leaves out files the build needs: {kept_out[:5]}"
    for p in (".venv/bin/python", ".git/HEAD", "tests/conftest.py", ".env", "bench/x.py",
              "web/__pycache__/cli.cpython-311.pyc", "fptrack.egg-info/PKG-INFO"):
        assert docker_ignored(p, patterns), f"{p} would be sent to the Docker build"


def test_the_ignore_matcher_follows_docker_rules():
    assert docker_ignored("a/b.txt", ["a"])
    assert not docker_ignored("a/b.txt", ["*", "!a"])
    assert docker_ignored("a/x/__pycache__/m.pyc", ["*", "!a", "**/__pycache__"])
    assert not docker_ignored("ab", ["a"])
