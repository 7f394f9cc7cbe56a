"""One caller's reads through each interface, for the isolation check
(:mod:`helpers.isolation`): the library's workspace view, the HTTP API, and MCP (over
stdio or streamable HTTP: the same client, :mod:`helpers.mcp_http`)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import httpx

import trove
from helpers.isolation import THREADS, WORDS, Tally, World
from helpers.mcp_http import McpClient, ToolFailed
from trove.errors import NotFound, TroveError
from trove.interfaces.mcp.events import KNOWLEDGE_URI, item_uri
from trove.probe import probe

# A batch written with a link to an item out of sight: refused whole, so never stored.
NEVER_KEPT = "a batch item linked to what it may not see"
# A dry-run fold this loose groups many items: each id it names is one check.
LOOSE = {"threshold": 0.3, "text_threshold": None, "dry_run": True}
# An item id cited in a prompt's text: [id]
_ID = re.compile(r"\[([0-9a-f]{20})\]")


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

    def vectors(self, doc_id: str) -> bool:
        """Whether the item's stored vectors were read back."""
        raise NotImplementedError

    def duplicates(self) -> list[str]:
        """Every id in the near-duplicate groups a dry-run fold finds (loose bounds)."""
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

    def vectors(self, doc_id: str) -> bool:
        try:
            self.ws.chunk_vectors(doc_id)
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
            lambda: self.ws.write_many([{"text": NEVER_KEPT}], [{"src": "#0", "dst": doc_id}]),
            lambda: self.ws.attach_original(doc_id, NEVER_KEPT.encode()),
        ]
        return [_raises_not_found(attempt) for attempt in attempts]

    def duplicates(self) -> list[str]:
        groups = self.ws.canonicalize(**LOOSE)
        return [i for g in groups for i in (g.canonical, *g.duplicates)]


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

    def vectors(self, doc_id: str) -> bool:
        response = self.http.get(f"/v1/items/{doc_id}", params={"with_vectors": "true"})
        return response.status_code == 200 and "vectors" in response.json()

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        h, link = self.http, {"src": "#0", "dst": doc_id}
        answers = [
            h.patch(f"/v1/items/{doc_id}", json={"title": "taken"}),
            h.delete(f"/v1/items/{doc_id}"),
            h.post(f"/v1/items/{doc_id}/restore"),
            h.post("/v1/links", json={"src": mine, "dst": doc_id}),
            h.delete("/v1/links", params={"src": doc_id, "dst": mine}),
            h.post("/v1/items/batch", json={"items": [{"text": NEVER_KEPT}], "links": [link]}),
            h.put(f"/v1/items/{doc_id}/original", content=NEVER_KEPT.encode()),
        ]
        return [a.status_code == 404 for a in answers]

    def duplicates(self) -> list[str]:
        groups = self.http.post("/v1/canonicalize", json=LOOSE).json()["groups"]
        return [i for g in groups for i in (g["canonical"], *g["duplicates"])]


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
        return self._or_none("knowledge_original", id=doc_id) is not None

    def vectors(self, doc_id: str) -> bool:
        result = self._or_none("knowledge_get", id=doc_id, with_vectors=True)
        return result is not None and "vectors" in result

    def refused(self, doc_id: str, mine: str) -> list[bool]:
        attempts = [
            ("knowledge_update", {"id": doc_id, "title": "taken"}),
            ("knowledge_delete", {"id": doc_id}),
            ("knowledge_restore", {"id": doc_id}),
            ("knowledge_link", {"src": mine, "dst": doc_id}),
            ("knowledge_unlink", {"src": doc_id, "dst": mine}),
            (
                "knowledge_write_many",
                {"items": [{"text": NEVER_KEPT}], "links": [{"src": "#0", "dst": doc_id}]},
            ),
            ("knowledge_attach_original", {"id": doc_id, "data_base64": "bmV2ZXI="}),
        ]
        refused = []
        for tool, arguments in attempts:
            try:
                self.call(tool, **arguments)
                refused.append(False)
            except ToolFailed as failed:
                refused.append(str(failed).startswith("not_found"))
        return refused

    def duplicates(self) -> list[str]:
        groups = self.call("knowledge_canonicalize", **LOOSE)["groups"]
        return [i for g in groups for i in (g["canonical"], *g["duplicates"])]

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
