"""Randomized isolation: no reader ever sees an item the rules keep from it, through any
interface — the library's workspace view, the HTTP API (every JSON route), MCP over
stdio and MCP over streamable HTTP (tools, resources, prompts, change notifications).

Items are written into several namespaces x scopes x sessions (with originals, threads
that cross namespaces, random links, clusters and saved probe pairs per session), then
read at random. The rule (README, "Agent memory"): a reader of namespace N with session
S sees global items, and N's items that are not session-scoped or belong to S; a reader
without a session sees no session-scoped item at all. Attempts to change, link or read
the original of an item out of sight must all be refused as not found.

Used by tests/interfaces/test_isolation.py (CI-sized) and, through
tests/reliability/harness.py, by bench/reliability.py (≥ 100,000 checks).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

import trove
from helpers.mcp_http import McpClient, ToolFailed
from trove.errors import NotFound, TroveError
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp.events import KNOWLEDGE_URI, item_uri
from trove.probe import probe, save_pairs

NAMESPACES = ("north", "south", "east")
SESSIONS = ("s1", "s2")
READER_SESSIONS = (None, "s1", "s2", "s3")
WORDS = ["apple", "river", "stone", "cloud", "maple", "ember", "harbor", "violet"]
MODES = ("keyword", "semantic", "hybrid")
THREADS = 3
_ID = re.compile(r"\[([0-9a-f]{20})\]")


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


class Reader:
    """One caller's reads through one interface. ``get``/``links``/``cluster`` answer None
    when refused as not found; ``refused`` tries every change of an item out of sight and
    says, for each, whether it was refused as not found."""

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        raise NotImplementedError

    def get(self, doc_id: str) -> str | None:
        raise NotImplementedError

    def get_many(self, ids: list[str]) -> list[str]:
        raise NotImplementedError

    def list(self) -> list[str]:
        raise NotImplementedError

    def links(self, doc_id: str) -> list[str] | None:
        raise NotImplementedError

    def stats(self) -> dict[str, Any]:
        raise NotImplementedError

    def more_stats(self) -> list[dict[str, Any]]:
        """Other answers with the workspace's counts (MCP's resources)."""
        return []

    def clusters(self) -> list[list[str]]:
        raise NotImplementedError

    def cluster(self, cluster_id: str) -> list[str] | None:
        raise NotImplementedError

    def probe_pairs(self) -> int:
        raise NotImplementedError

    def original(self, doc_id: str) -> bool:
        raise NotImplementedError

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        raise NotImplementedError

    def elsewhere(self, rng: random.Random, world: World, tally: Tally, visible: Any) -> None:
        """Reads only this interface has (MCP's resources and prompts)."""


class LibraryReader(Reader):
    def __init__(self, kb: trove.Store, namespace: str, session: str | None) -> None:
        self.ws = kb.workspace(namespace, session=session)

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        return [h.doc_id for h in self.ws.search(query, mode=mode, expand=expand, limit=50)]

    def get(self, doc_id: str) -> str | None:
        doc = self.ws.get(doc_id)
        return None if doc is None else doc.id

    def get_many(self, ids: list[str]) -> list[str]:
        return [d.id for d in self.ws.get_many(ids) if d is not None]

    def list(self) -> list[str]:
        return [d.id for d in self.ws.list(limit=1000).items]

    def links(self, doc_id: str) -> list[str] | None:
        try:
            edges = self.ws.neighbors(doc_id)
        except NotFound:
            return None
        return [e.dst if e.src == doc_id else e.src for e in edges]

    def stats(self) -> dict[str, Any]:
        return self.ws.stats().to_dict()

    def clusters(self) -> list[list[str]]:
        return [list(c.members) for c in self.ws.clusters()]

    def cluster(self, cluster_id: str) -> list[str] | None:
        try:
            return list(self.ws.cluster(cluster_id).members)
        except NotFound:
            return None

    def probe_pairs(self) -> int:
        return probe(self.ws).pairs

    def original(self, doc_id: str) -> bool:
        try:
            self.ws.original_info(doc_id)
        except NotFound:
            return False
        return True

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        attempts: list[Callable[[], Any]] = [
            lambda: self.ws.update(doc_id, title="taken"),
            lambda: self.ws.delete(doc_id),
            lambda: self.ws.restore(doc_id),
            lambda: self.ws.link(mine, doc_id),
            lambda: self.ws.unlink(doc_id, mine),
        ]
        return [_raises_not_found(attempt) for attempt in attempts]


def _raises_not_found(attempt: Callable[[], Any]) -> bool:
    try:
        attempt()
    except NotFound:
        return True
    except TroveError:
        return False
    return False


class HttpReader(Reader):
    """The JSON API, every route that reads or changes an item (``/v1/events`` is checked
    with the notifications, :func:`hear`)."""

    def __init__(self, client: httpx.Client) -> None:
        self.http = client

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        body = {"query": query, "mode": mode, "expand": expand, "limit": 50, "min_score": 0}
        response = self.http.post("/v1/search", json=body)
        return [h["doc_id"] for h in response.json()["hits"]]

    def get(self, doc_id: str) -> str | None:
        response = self.http.get(f"/v1/items/{doc_id}")
        return str(response.json()["id"]) if response.status_code == 200 else None

    def get_many(self, ids: list[str]) -> list[str]:
        found = self.http.post("/v1/items/get", json={"ids": ids}).json()["items"]
        return [d["id"] for d in found if d is not None]

    def list(self) -> list[str]:
        listed = self.http.get("/v1/items", params={"limit": 1000}).json()["items"]
        return [d["id"] for d in listed]

    def links(self, doc_id: str) -> list[str] | None:
        response = self.http.get(f"/v1/items/{doc_id}/links")
        if response.status_code == 404:
            return None
        edges = response.json()["edges"]
        return [e["dst"] if e["src"] == doc_id else e["src"] for e in edges]

    def stats(self) -> dict[str, Any]:
        return dict(self.http.get("/v1/stats").json())

    def clusters(self) -> list[list[str]]:
        listed = self.http.get("/v1/clusters").json()["clusters"]
        return [c["members"] for c in listed]

    def cluster(self, cluster_id: str) -> list[str] | None:
        response = self.http.get(f"/v1/clusters/{cluster_id}")
        return None if response.status_code == 404 else list(response.json()["members"])

    def probe_pairs(self) -> int:
        return int(self.http.post("/v1/probe", json={}).json()["pairs"])

    def original(self, doc_id: str) -> bool:
        return self.http.get(f"/v1/items/{doc_id}/original").status_code == 200

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        h = self.http
        answers = [
            h.patch(f"/v1/items/{doc_id}", json={"title": "taken"}),
            h.delete(f"/v1/items/{doc_id}"),
            h.post(f"/v1/items/{doc_id}/restore"),
            h.post("/v1/links", json={"src": mine, "dst": doc_id}),
            h.delete("/v1/links", params={"src": doc_id, "dst": mine}),
        ]
        return [a.status_code == 404 for a in answers]


class McpReader(Reader):
    """The MCP tools; :meth:`elsewhere` reads the resources and prompts."""

    def __init__(self, call: McpClient) -> None:
        self.call = call

    def _or_none(self, tool: str, **arguments: Any) -> Any:
        try:
            return self.call(tool, **arguments)
        except ToolFailed as failed:
            assert str(failed).startswith("not_found"), failed
            return None

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        found = self.call(
            "knowledge_search", query=query, mode=mode, expand=min(expand, 2), min_score=0
        )
        return [r["id"] for r in found["results"]]

    def get(self, doc_id: str) -> str | None:
        result = self._or_none("knowledge_get", id=doc_id)
        return None if result is None else str(result["id"])

    def get_many(self, ids: list[str]) -> list[str]:
        return [d["id"] for d in self.call("knowledge_get_many", ids=ids)["items"]]

    def list(self) -> list[str]:
        return [d["id"] for d in self.call("knowledge_list", limit=100)["items"]]

    def links(self, doc_id: str) -> list[str] | None:
        found = self._or_none("knowledge_neighbors", id=doc_id)
        if found is None:
            return None
        return [x["dst"] if x["src"] == doc_id else x["src"] for x in found["links"]]

    def stats(self) -> dict[str, Any]:
        return dict(self.call("knowledge_stats"))

    def more_stats(self) -> list[dict[str, Any]]:
        return [self.call.read("trove://stats"), self.call.read(KNOWLEDGE_URI)]

    def clusters(self) -> list[list[str]]:
        return [c["members"] for c in self.call("knowledge_cluster", action="list")["clusters"]]

    def cluster(self, cluster_id: str) -> list[str] | None:
        found = self._or_none("knowledge_cluster", action="get", cluster_id=cluster_id)
        return None if found is None else list(found["members"])

    def probe_pairs(self) -> int:
        return int(self.call("knowledge_probe")["pairs"])

    def original(self, doc_id: str) -> bool:
        return self.get(doc_id) is not None  # MCP has no originals tool: read the item

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        attempts = [
            ("knowledge_update", {"id": doc_id, "title": "taken"}),
            ("knowledge_delete", {"id": doc_id}),
            ("knowledge_restore", {"id": doc_id}),
            ("knowledge_link", {"src": mine, "dst": doc_id}),
            ("knowledge_unlink", {"src": doc_id, "dst": mine}),
        ]
        refused = []
        for tool, arguments in attempts:
            try:
                self.call(tool, **arguments)
                refused.append(False)
            except ToolFailed as failed:
                refused.append(str(failed).startswith("not_found"))
        return refused

    def elsewhere(self, rng: random.Random, world: World, tally: Tally, visible: Any) -> None:
        where = "mcp resource/prompt"
        item = rng.choice(world.items)
        for uri in (f"trove://documents/{item.id}", item_uri(item.id)):
            found = self.call.read(uri)
            tally.expect((found is not None) == visible(item.id), f"{where} {uri}")
        recent = self.call.read("trove://recent")["items"]
        tally.only([d["id"] for d in recent], visible, f"{where} recent")
        query = " ".join(rng.sample(WORDS, 2))
        text = self.call.prompt("what_do_we_know", topic=query) or ""
        tally.only(_ID.findall(text), visible, f"{where} what_do_we_know {query!r}")
        thread = f"thread-{rng.randrange(THREADS)}"
        text = self.call.prompt("summarise_thread", thread=thread)
        cited = _ID.findall(text or "")
        tally.only(cited, visible, f"{where} summarise_thread {thread}")
        any_seen = any(i.thread == thread and visible(i.id) for i in world.items)
        tally.expect((text is not None) == any_seen, f"{where} summarise_thread {thread} found")
        hidden = [i for i in world.items if not visible(i.id)]
        if hidden:
            other = rng.choice(hidden).id
            text = self.call.prompt("summarise_thread", thread=other)
            tally.expect(text is None, f"{where} summarise_thread of {other}")


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


def server_config() -> ServerConfig:
    tokens = [
        {"token": token(ns, s), "namespace": ns, **({"session": s} if s else {})}
        for ns in NAMESPACES
        for s in READER_SESSIONS
    ]
    return ServerConfig.from_dict({"tokens": tokens})
