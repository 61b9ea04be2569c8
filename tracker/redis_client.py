"""One way to reach Redis for every part of fptrack, and one sentence per failure.

`connect(url)` answers a client for FPT_REDIS_URL: a plain `redis.Redis` for a single
instance, or a `redis.cluster.RedisCluster` when the server at `url` is a node of a
Redis Cluster (it says so in ``INFO cluster``), with no other setting. Callers that
need to know ask `is_cluster(client)`.

`explain(error, url)` turns whatever redis-py raised into one line that names the
cause and the fix (wrong URL, password, server down, cluster down, a slot no node
serves, out of memory, a replica, a refused command); `RedisUnavailable` carries
that line, for the CLI, the workers' logs and the admin's status alike.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import redis
from redis.cluster import RedisCluster


class RedisUnavailable(RuntimeError):
    """Redis cannot be reached, or refused a command; the message says why and how to fix it."""


def is_cluster(client) -> bool:
    return isinstance(client, RedisCluster)


def client_url(client) -> str:
    """The address a client talks to, for messages (no password)."""
    if is_cluster(client):
        nodes = client.get_nodes()
        first = nodes[0] if nodes else None
        return f"redis://{first.host}:{first.port} (cluster of {len(nodes)} nodes)" if first else "redis cluster"
    kw = client.connection_pool.connection_kwargs
    if kw.get("path"):
        return f"unix://{kw['path']}?db={kw.get('db', 0)}"
    return f"redis://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


def safe_url(url: str) -> str:
    """`url` without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable URL>"
    if parts.password is None:
        return url
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{host}{port}").geturl()


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as e:
        raise RedisUnavailable(f"FPT_REDIS_URL {safe_url(url)!r} is not a Redis URL ({e}); "
                               "write it as redis://HOST:PORT/DB") from e
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise RedisUnavailable(f"FPT_REDIS_URL {safe_url(url)!r} is not a Redis URL (scheme {parts.scheme!r}); "
                               "write it as redis://HOST:PORT/DB, rediss:// for TLS or unix:///path/to/socket")


def connect(url: str, timeout: float = 2.0):
    """A checked client for `url`: a RedisCluster when the server is a cluster node, else a
    Redis. Raises RedisUnavailable with the cause and the fix when it cannot be used."""
    _check_url(url)
    kw = {"socket_connect_timeout": timeout, "socket_timeout": max(timeout, 10.0)}
    try:
        single = redis.Redis.from_url(url, **kw)
        info = single.info("cluster")
    except (redis.RedisError, OSError, ValueError) as e:
        raise RedisUnavailable(explain(e, url)) from e
    if not info.get("cluster_enabled"):
        return single
    db = single.connection_pool.connection_kwargs.get("db", 0)
    single.close()
    if db:
        raise RedisUnavailable(f"{safe_url(url)} is a node of a Redis Cluster, which has only database 0; "
                               f"drop /{db} from FPT_REDIS_URL (FPT_REDIS_PREFIX keeps deployments apart)")
    try:
        cluster = RedisCluster.from_url(url, **kw)
        cluster.ping(target_nodes=RedisCluster.ALL_NODES)
    except (redis.RedisError, redis.exceptions.RedisClusterException, OSError, ValueError) as e:
        raise RedisUnavailable(explain(e, url, cluster=True)) from e
    return cluster


_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^(NOAUTH|WRONGPASS)|invalid password|invalid username-password|Authentication required",
                re.I),
     "{url} refused the password{detail}; put the right one in FPT_REDIS_URL "
     "(redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@HOST:PORT with an ACL user)"),
    (re.compile(r"^OOM\b|maxmemory", re.I),
     "{url} is out of memory (its maxmemory is reached){detail}; raise maxmemory (with the "
     "noeviction policy), add cluster nodes, or remove what fills it"),
    (re.compile(r"^CLUSTERDOWN.*(slot|not served)", re.I),
     "a hash slot of the Redis Cluster at {url} is served by no node{detail}; run "
     "redis-cli --cluster fix HOST:PORT, or start the node that served it"),
    (re.compile(r"^CLUSTERDOWN", re.I),
     "the Redis Cluster at {url} is down{detail}; start the failed master again (or give masters "
     "replicas so that one takes over), then check redis-cli --cluster check HOST:PORT"),
    (re.compile(r"^CROSSSLOT", re.I),
     "the Redis Cluster at {url} refused a command over keys in several slots{detail}; this is a "
     "bug in fptrack: please report it with this line"),
    (re.compile(r"^READONLY", re.I),
     "{url} is a read-only replica{detail}; point FPT_REDIS_URL at its master"),
    (re.compile(r"^LOADING", re.I),
     "{url} is still loading its data set into memory{detail}; wait until it has, and retry"),
    (re.compile(r"^MISCONF", re.I),
     "{url} cannot write its snapshot to disk and refuses writes{detail}; free disk space or fix "
     "its dir and permissions (see its log)"),
    (re.compile(r"^NOPERM", re.I),
     "{url} does not let this user run a command fptrack needs{detail}; grant the user +@all on "
     "the FPT_REDIS_PREFIX keys (ACL SETUSER), or use another user"),
    (re.compile(r"unknown command|ERR unknown|command not allowed|disabled", re.I),
     "{url} refused a command fptrack needs{detail}; it must be Redis 6.2 or later with APPEND, "
     "COPY, CLIENT REPLY and SCAN allowed (a managed Redis may rename or disable them)"),
]


def explain(e: BaseException, url: str, cluster: bool = False) -> str:
    """One line: what went wrong with Redis at `url`, and what fixes it. `cluster`: the
    client was talking to a Redis Cluster, so a node that cannot be reached is one of its
    masters, not necessarily the one in the URL."""
    shown = safe_url(url)
    if isinstance(e, RedisUnavailable):
        return str(e)
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    detail = f" ({text})"
    if isinstance(e, redis.AuthenticationError):
        return _RULES[0][1].format(url=shown, detail=detail)
    if type(e).__name__ == "SlotNotCoveredError" or (
            isinstance(e, redis.exceptions.RedisClusterException) and "slot" in text.lower()):
        return _RULES[2][1].format(url=shown, detail=detail)
    if isinstance(e, redis.exceptions.RedisClusterException):
        return (f"the Redis Cluster at {shown} cannot be used{detail}; check that its masters run and "
                "redis-cli --cluster check HOST:PORT says every slot is covered")
    if isinstance(e, redis.ResponseError) or type(e).__name__ in ("ClusterDownError", "ClusterError"):
        for pattern, line in _RULES:
            if pattern.search(text):
                return line.format(url=shown, detail=detail)
        return (f"{shown} refused a command{detail}; check its log, its memory limit and that nothing else "
                "writes keys under FPT_REDIS_PREFIX")
    if isinstance(e, redis.TimeoutError) or isinstance(e, TimeoutError):
        return (f"{shown} did not answer in time{detail}; check that the host is up and not overloaded, "
                "or that a firewall does not drop the connection")
    if isinstance(e, (redis.ConnectionError, OSError)):
        if any(w in text for w in ("Name or service not known", "nodename nor servname", "getaddrinfo",
                                   "Temporary failure in name resolution")):
            return f"the host in FPT_REDIS_URL {shown} is unknown{detail}; fix the host name"
        if type(e).__name__ in ("ClusterDownError",) or "cluster" in text.lower():
            return _RULES[3][1].format(url=shown, detail=detail)
        if cluster:
            node = re.search(r"connecting to ([\w.:\[\]-]+?)\.? ", text)
            where = f" ({node.group(1)})" if node else ""
            return (f"a master of the Redis Cluster at {shown}{where} cannot be reached{detail}; start it again "
                    "(or give masters replicas so that one takes over), then check redis-cli --cluster check "
                    "HOST:PORT")
        return (f"cannot reach Redis at {shown}{detail}; start it, fix FPT_REDIS_URL, or unset FPT_REDIS_URL "
                "to use the embedded index")
    if isinstance(e, ValueError):
        return f"FPT_REDIS_URL {shown!r} cannot be used ({text}); write it as redis://HOST:PORT/DB"
    return f"Redis at {shown} failed{detail}"
