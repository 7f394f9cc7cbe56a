"""Randomized isolation: no reader ever sees an item the rules keep from it, through any
interface — the library's workspace view, the HTTP API (every JSON route), MCP over
stdio and MCP over streamable HTTP (tools, resources, prompts, change notifications).

Items are written into several namespaces x scopes x sessions (with originals, threads
that cross namespaces, random links, clusters and saved probe pairs per session), then
read at random. The rule (README, "Agent memory"): a reader of namespace N with session
S sees global items, and N's items that are not session-scoped or belong to S; a reader
without a session sees no session-scoped item at all. Attempts to change, link, read or
attach the original of an item out of sight must all be refused as not found, and a
dry-run fold of near-duplicates names only items in sight.

The readers, one per interface, are in :mod:`helpers.readers`; :mod:`helpers.isolation_run`
runs them all against live servers. Used by tests/interfaces/test_isolation.py (CI-sized)
and, through tests/reliability/harness.py, by bench/reliability.py (≥ 100,000 checks).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trove
from helpers.mcp_http import McpClient
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp.events import KNOWLEDGE_URI, item_uri
from trove.probe import save_pairs

if TYPE_CHECKING:
    from helpers.readers import Reader

NAMESPACES = ("north", "south", "east")
SESSIONS = ("s1", "s2")
READER_SESSIONS = (None, "s1", "s2", "s3")
WORDS = ["apple", "river", "stone", "cloud", "maple", "ember", "harbor", "violet"]
MODES = ("keyword", "semantic", "hybrid")
THREADS = 3


@dataclass(frozen=True)
class Item:
    id: str
    namespace: str
    scope: str
    session: str | None
    source: str
    thread: str


@dataclass
class World:
    """What was written: items, clusters (id, namespace) and probe pairs kept per place."""

    items: list[Item]
    clusters: list[tuple[str, str]]
    pairs: dict[tuple[str, str | None], int]

    def by_id(self) -> dict[str, Item]:
        return {item.id: item for item in self.items}


def allowed(item: Item, namespace: str, session: str | None) -> bool:
    if item.scope == "global":
        return True
    if item.namespace != namespace:
        return False
    return item.scope != "session" or (session is not None and item.session == session)


def populate(kb: trove.Store, rng: random.Random) -> World:
    items = []
    for namespace in NAMESPACES:
        places = [("workspace", None), ("global", None)] + [("session", s) for s in SESSIONS]
        for scope, session in places:
            for n in range(3):
                text = " ".join(rng.choices(WORDS, k=6)) + f" {namespace} {scope} {session} {n}"
                source, thread = f"src-{namespace}-{scope}-{session}", f"thread-{n}"
                doc_id = kb.add(
                    text,
                    namespace=namespace,
                    scope=scope,
                    session=session,
                    source=source,
                    thread_id=thread,
                    original=text.encode(),
                    original_name="note.txt",
                    media_type="text/plain",
                )
                items.append(Item(doc_id, namespace, scope, session, source, thread))
    for _ in range(len(items) * 2):
        src, dst = rng.sample(items, 2)
        kb.link(src.id, dst.id, rng.choice(("relates_to", "supersedes")), rng.random())
    clusters, pairs = [], {}
    for namespace in NAMESPACES:
        for session in (None, *SESSIONS):
            mine = [
                i.id for i in items if i.namespace == namespace and allowed(i, namespace, session)
            ]
            made = kb.clusters.create(
                f"c-{session}", namespace=namespace, members=rng.sample(mine, 4)
            )
            clusters.append((made.id, namespace))
            count = len(pairs) + 1  # a count each place's pairs alone have
            pair = {"query": f"{namespace} {session}", "expected_doc": mine[0]}
            save_pairs(kb.workspace(namespace, session=session), [pair] * count)
            pairs[(namespace, session)] = count
    return World(items, clusters, pairs)


@dataclass
class Tally:
    """Checks made and leaks found (with the first few, to read)."""

    checks: int = 0
    leaks: int = 0
    examples: list[str] = field(default_factory=list)

    def expect(self, ok: bool, where: str) -> None:
        self.checks += 1
        if not ok:
            self.leaks += 1
            if len(self.examples) < 10:
                self.examples.append(where)

    def only(self, ids: Iterable[str], visible: Callable[[str], bool], where: str) -> None:
        for doc_id in ids:
            self.expect(visible(doc_id), f"{where}: saw {doc_id}")

    def add(self, other: Tally) -> None:
        self.checks += other.checks
        self.leaks += other.leaks
        self.examples += other.examples[: 10 - len(self.examples)]

    def to_dict(self) -> dict[str, Any]:
        return {"checks": self.checks, "leaks": self.leaks, "examples": self.examples}


def check(
    reader: Reader,
    world: World,
    namespace: str,
    session: str | None,
    seed: int,
    reads: int,
) -> Tally:
    """``reads`` random reads (and refused changes) through ``reader``, then its whole
    view (list, stats, clusters, probe pairs); each id seen is one check."""
    rng, tally = random.Random(seed), Tally()
    by_id = world.by_id()

    def visible(doc_id: str) -> bool:
        return doc_id in by_id and allowed(by_id[doc_id], namespace, session)

    where = f"{type(reader).__name__} {namespace}/{session} seed {seed}"
    mine = next(i.id for i in world.items if i.namespace == namespace and i.scope == "workspace")
    for _ in range(reads):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        mode, expand = rng.choice(MODES), rng.randint(0, 2)
        tally.only(reader.search(query, mode, expand), visible, f"{where} {query!r} {mode}")
        item = rng.choice(world.items)
        seen = visible(item.id)
        tally.expect((reader.get(item.id) == item.id) == seen, f"{where} get {item}")
        tally.expect(reader.original(item.id) == seen, f"{where} original {item}")
        tally.expect(reader.vectors(item.id) == seen, f"{where} vectors {item}")
        linked = reader.links(item.id)
        tally.expect((linked is not None) == seen, f"{where} links of {item}")
        tally.only(linked or [], visible, f"{where} links of {item}")
        some = [i.id for i in rng.sample(world.items, 5)]
        tally.only(reader.get_many(some), visible, f"{where} get_many")
        if not seen:
            for n, ok in enumerate(reader.refused(item.id, mine)):
                tally.expect(ok, f"{where} change #{n} of {item}")
        cluster_id, cluster_namespace = rng.choice(world.clusters)
        members = reader.cluster(cluster_id)
        tally.expect((members is not None) == (cluster_namespace == namespace), f"{where} cluster")
        tally.only(members or [], visible, f"{where} cluster {cluster_id}")
        reader.elsewhere(rng, world, tally, visible)
    tally.only(reader.list(), visible, f"{where} list")
    tally.only(reader.duplicates(), visible, f"{where} duplicates")
    for members in reader.clusters():
        tally.only(members, visible, f"{where} clusters")
    mine_all = [i for i in world.items if i.namespace == namespace and visible(i.id)]
    for stats in [reader.stats(), *reader.more_stats()]:
        tally.expect(stats["documents"] == len(mine_all), f"{where} stats {stats['documents']}")
        sources = {i.source for i in mine_all}
        tally.expect(set(stats["by_source"]) == sources, f"{where} by_source")
    own = world.pairs.get((namespace, session)) or world.pairs[(namespace, None)]
    tally.expect(reader.probe_pairs() == own, f"{where} probe pairs")
    return tally


def hear(
    kb: trove.Store,
    client: McpClient,
    world: World,
    namespace: str,
    session: str | None,
    rng: random.Random,
    *,
    changes: int = 6,
    wait_s: float = 20.0,
) -> Tally:
    """Subscribe to every item and the workspace, change items at random, and check that
    the notifications name only items the reader sees (and all the changed ones it sees)."""
    tally = Tally()
    where = f"notifications {namespace}/{session}"
    client.subscribe([KNOWLEDGE_URI] + [item_uri(i.id) for i in world.items])
    time.sleep(0.3)
    client.heard.clear()
    changed = rng.sample(world.items, changes)
    for item in changed:  # a new value each time: an update that changes nothing is silent
        kb.update(item.id, metadata={"touched": time.time_ns()})
    expected = {item_uri(i.id) for i in changed if allowed(i, namespace, session)}
    if expected:
        expected.add(KNOWLEDGE_URI)
    deadline = time.monotonic() + wait_s
    while not expected <= set(client.heard) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # anything it should not hear would have come by now
    by_uri = {item_uri(i.id): i for i in world.items}
    for uri in client.heard:
        item = by_uri.get(uri)
        ok = allowed(item, namespace, session) if item else bool(expected)
        tally.expect(ok, f"{where}: heard {uri}")
    tally.expect(expected <= set(client.heard), f"{where}: missed {expected - set(client.heard)}")
    return tally


def token(namespace: str, session: str | None) -> str:
    return f"tok-{namespace}-{session or 'none'}-0123456789"


def server_config(
    namespaces: Sequence[str] = NAMESPACES, sessions: Sequence[str | None] = READER_SESSIONS
) -> ServerConfig:
    """A token (:func:`token`) for each namespace and reader session (None: none)."""
    tokens = [
        {"token": token(ns, s), "namespace": ns, **({"session": s} if s else {})}
        for ns in namespaces
        for s in sessions
    ]
    return ServerConfig.from_dict({"tokens": tokens})
