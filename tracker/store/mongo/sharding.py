"""The MongoDB store on a sharded cluster: the shard key of each collection, and the
functions that set a cluster up for it (docs/sharding.md says why each key).

Every collection that grows with the crawl or with the originals is sharded on a
hashed key: the first field of its unique index, which every write of the store
names, so each upsert, update and delete goes to one shard, and the hash spreads
the writes of a crawl (whose URLs share a host and a prefix) over all of them.
The collections that stay small (one document per work, site, crawl, user,
session, counter) are not sharded: they live on the database's primary shard.

    python -m tracker.store.mongo.sharding replica-sets --config cfg/mongo-config:27019 \\
        --shard shard-a/mongo-shard-a:27018 --shard shard-b/mongo-shard-b:27018
    python -m tracker.store.mongo.sharding shard mongodb://mongos:27017 --db fptrack \\
        --add-shard shard-a/mongo-shard-a:27018 --add-shard shard-b/mongo-shard-b:27018

Both are idempotent: run again, they change nothing that is already in place.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from ..records import StoreError
from . import MongoStore
from .connection import _short, redact

# collection -> shard key pattern. A hashed single field: equality on it targets one shard.
SHARD_KEYS: dict[str, dict[str, Any]] = {
    "chapters": {"key": "hashed"},
    "fingerprints": {"chapter": "hashed"},
    "pages": {"key": "hashed"},
    "matches": {"page": "hashed"},
    "work_images": {"key": "hashed"},
    "page_images": {"key": "hashed"},
    "image_matches": {"image": "hashed"},
    "evidence": {"page": "hashed"},
    "evidence.chunks": {"files_id": "hashed"},  # GridFS chunks: every write names its file
    "events": {"id": "hashed"},
    "deliveries": {"event": "hashed"},
    "rechecks": {"page": "hashed"},
    "discovery_queries": {"run": "hashed"},
    "discovered_urls": {"url": "hashed"},
    "seen_texts": {"key": "hashed"},
}
# Small collections, left on the primary shard (sharding them buys nothing). The running totals
# of matches hold a document per group, not per match (about 300,000 groups at a million matches).
UNSHARDED = frozenset({"evidence.files", "works", "sites", "crawl_runs", "users", "sessions", "counters", "subscriptions",
                        "discovery_runs", "orgs", "owners", "api_tokens", "signing_keys", "match_days", "match_sites",
                        "match_verdicts", "seen_filter"})

NOT_INITIATED = 94  # NotYetInitialized: a mongod started with --replSet whose set was never initiated
NO_REPLICATION = 76  # NoReplicationEnabled: a mongod started without --replSet
IndexSpecs = Mapping[str, Sequence[tuple[Sequence[tuple[str, Any]], bool]]]


class NotMongos(StoreError):
    """The server is not the router of a sharded cluster."""


def shard_key_fields(collection: str) -> tuple[str, ...]:
    """The fields of a collection's shard key; () when it is not sharded."""
    return tuple(SHARD_KEYS.get(collection, {}))


def plan_problems(indexes: IndexSpecs) -> list[str]:
    """What in a store's indexes ({collection: [(keys, unique), ...]}) the plan cannot shard:
    a collection with no decision, or a unique index not prefixed by the shard key (each
    shard could only check uniqueness among its own documents)."""
    problems = []
    for collection, specs in indexes.items():
        if collection not in SHARD_KEYS and collection not in UNSHARDED:
            problems.append(f"{collection}: no shard key chosen (add it to SHARD_KEYS or UNSHARDED)")
            continue
        fields = shard_key_fields(collection)
        for keys, unique in specs:
            names = tuple(f for f, _ in keys)
            if unique and fields and names[:len(fields)] != fields and names[:1] != ("_id",):
                problems.append(f"{collection}: unique index {names} does not start with the shard key {fields}")
    return problems


def parse_replica_set(spec: str) -> tuple[str, list[str]]:
    """'shard-a/h1:27018,h2:27018' -> ('shard-a', ['h1:27018', 'h2:27018'])."""
    name, sep, hosts = spec.partition("/")
    members = [h for h in hosts.split(",") if h]
    if not sep or not name or not members:
        raise ValueError(f"{spec!r} is not NAME/HOST:PORT[,HOST:PORT...] (e.g. shard-a/mongo-shard-a:27018)")
    return name, members


def check_mongos(client: Any, where: str) -> None:
    """Raise NotMongos unless `client` talks to a mongos."""
    hello = client.admin.command("hello")
    if hello.get("msg") != "isdbgrid":
        kind = f"a member of replica set {hello['setName']!r}" if hello.get("setName") else "a single server"
        raise NotMongos(f"{where} is not a mongos but {kind}: shard through the cluster's router "
                        "(e.g. mongodb://mongos:27017); a single server or a replica set needs no sharding")


def initiate_replica_set(spec: str, *, configsvr: bool = False, timeout: float = 60.0,
                         connect: Callable[..., Any] = MongoClient) -> str:
    """Initiate the replica set `spec` (NAME/HOST:PORT,...) unless it is, and wait for its
    primary; returns what was done."""
    name, members = parse_replica_set(spec)
    client = connect(f"mongodb://{members[0]}/?directConnection=true", serverSelectionTimeoutMS=int(timeout * 1000))
    try:
        try:
            status = client.admin.command("replSetGetStatus")
            if status.get("set") != name:
                raise StoreError(f"{members[0]} belongs to replica set {status.get('set')!r}, not {name!r}: "
                                 f"start it with --replSet {name} on a fresh volume, or name {status.get('set')!r}")
            done = f"replica set {name}: already initiated"
        except OperationFailure as e:
            if e.code == NO_REPLICATION:
                raise StoreError(f"{members[0]} was started without --replSet: start it with --replSet {name}") from e
            if e.code != NOT_INITIATED:
                raise
            config: dict[str, Any] = {"_id": name, "members": [{"_id": i, "host": h} for i, h in enumerate(members)]}
            if configsvr:
                config["configsvr"] = True
            client.admin.command("replSetInitiate", config)
            done = f"replica set {name}: initiated with {', '.join(members)}"
        deadline = time.monotonic() + timeout
        while not client.admin.command("hello").get("isWritablePrimary"):
            if time.monotonic() > deadline:
                raise StoreError(f"replica set {name} elected no primary within {timeout:.0f} s: "
                                 f"check that {', '.join(members)} reach each other")
            time.sleep(0.5)
        return done
    finally:
        client.close()


def add_shards(client: Any, specs: Iterable[str]) -> list[str]:
    """Add each shard replica set (NAME/HOST:PORT,...) the cluster does not have yet."""
    have = {s["_id"] for s in client.admin.command("listShards").get("shards", [])}
    done = []
    for spec in specs:
        name, members = parse_replica_set(spec)
        if name in have:
            done.append(f"shard {name}: already added")
            continue
        client.admin.command("addShard", f"{name}/{','.join(members)}", name=name)
        done.append(f"shard {name}: added")
    return done


def shard_store(client: Any, db: str = "fptrack", *, shards: Iterable[str] = (),
                where: str = "the server") -> list[str]:
    """Shard the store's database in the cluster behind `client` (a mongos): add `shards`,
    create the store's indexes and each shard key's hashed index, and shard every collection
    of SHARD_KEYS that is not sharded yet. Returns one line per thing done or found."""
    problems = plan_problems(MongoStore.INDEXES)
    if problems:
        raise StoreError("the shard keys do not fit the store's indexes: " + "; ".join(problems))
    check_mongos(client, where)
    done = add_shards(client, shards)
    if not client.admin.command("listShards").get("shards"):
        raise StoreError(f"the cluster at {where} has no shard: add one (--add-shard NAME/HOST:PORT)")
    client.admin.command("enableSharding", db)
    # The store's own indexes before any sharding: shardCollection checks its unique ones against the key.
    MongoStore(where, db=db, client=client)
    sharded = client["config"]["collections"]
    for collection, key in SHARD_KEYS.items():
        namespace = f"{db}.{collection}"
        current = sharded.find_one({"_id": namespace})
        if current is not None and not current.get("unsplittable") and not current.get("dropped"):
            if dict(current["key"]) != key:
                raise StoreError(f"{namespace} is sharded on {dict(current['key'])}, not on {key}: "
                                 "change it with reshardCollection, or keep it and edit SHARD_KEYS")
            done.append(f"{namespace}: already sharded on {key}")
            continue
        # A collection holding documents needs the shard key's index before shardCollection.
        client[db][collection].create_index(list(key.items()), name="_".join(f"{f}_{v}" for f, v in key.items()))
        client.admin.command("shardCollection", namespace, key=key)
        done.append(f"{namespace}: sharded on {key}")
    return done


def _replica_set_arg(spec: str) -> str:
    try:
        parse_replica_set(spec)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return spec


def make_parser() -> argparse.ArgumentParser:
    """The command line of `python -m tracker.store.mongo.sharding`."""
    parser = argparse.ArgumentParser(
        prog="python -m tracker.store.mongo.sharding",
        description="Set up a sharded MongoDB cluster for fptrack (idempotent).",
        epilog="Example: python -m tracker.store.mongo.sharding shard mongodb://mongos:27017 "
               "--add-shard shard-a/mongo-shard-a:27018")
    commands = parser.add_subparsers(dest="command", required=True)
    rs = commands.add_parser("replica-sets", help="initiate the config server and shard replica sets",
                             description="Initiate each replica set that is not yet, and wait for its primary.")
    rs.add_argument("--config", metavar="NAME/HOST:PORT", type=_replica_set_arg, help="the config server replica set")
    rs.add_argument("--shard", metavar="NAME/HOST:PORT", type=_replica_set_arg, action="append", default=[],
                    help="a shard replica set (repeat for each)")
    rs.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each (default 60)")
    sh = commands.add_parser("shard", help="add shards and shard the store's collections through a mongos",
                             description="Add the shards, create the store's indexes and shard its collections.")
    sh.add_argument("url", help="the mongos, e.g. mongodb://mongos:27017")
    sh.add_argument("--db", default="fptrack", help="the store's database (FPT_MONGO_DB; default fptrack)")
    sh.add_argument("--add-shard", metavar="NAME/HOST:PORT", type=_replica_set_arg, action="append", default=[],
                    help="a shard replica set to add (repeat for each)")
    sh.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the mongos (default 30)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command == "replica-sets" and not args.config and not args.shard:
        parser.error("name at least one replica set (--config or --shard)")
    try:
        if args.command == "replica-sets":
            lines = [initiate_replica_set(s, configsvr=(s == args.config), timeout=args.timeout)
                     for s in ([args.config] if args.config else []) + args.shard]
        else:
            client = MongoClient(args.url, serverSelectionTimeoutMS=int(args.timeout * 1000), tz_aware=True)
            try:
                lines = shard_store(client, args.db, shards=args.add_shard, where=redact(args.url))
            finally:
                client.close()
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except PyMongoError as e:
        reason = re.split(r" \(configured timeouts|, Timeout: ", _short(e))[0]  # not the topology dump
        print(f"error: MongoDB failed: {reason}; check that every server of the cluster is running and reachable",
              file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
