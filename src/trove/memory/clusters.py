"""Clusters: named groups of memories with a rolling summary and a decision log.

``kb.clusters`` is a :class:`Clusters`: ``create``, ``get``, ``list``, ``update``
(summary, key entities), ``append_decision``, ``add``/``remove`` members, ``delete``.
Members are documents of the cluster's namespace; deleting (or purging) a document takes
it out of its clusters, and a cluster outlives its members. ``search(..., cluster=ID)``
searches a cluster's members. The rolling summary is itself stored as a searchable
document (``doc_type="cluster_summary"``, ``source="trove.cluster"``, ``source_id`` and
``metadata["cluster_id"]`` the cluster's id), so a search finds the cluster by it.
The decision log is append-only: each entry has a time, text, author and author tier.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from trove.errors import InvalidInput, NotFound
from trove.parts import Transacting
from trove.timeutil import now, to_iso

SUMMARY_SOURCE = "trove.cluster"
SUMMARY_TYPE = "cluster_summary"


@dataclass(frozen=True)
class Cluster:
    """A named group of memories."""

    id: str
    name: str
    namespace: str = "default"
    rolling_summary: str = ""
    key_entities: tuple[str, ...] = ()
    decision_log: tuple[dict[str, Any], ...] = ()
    members: tuple[str, ...] = ()
    created_at: str | None = None
    updated_at: str | None = None
    summary_doc_id: str | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("key_entities", "decision_log", "members"):
            data[name] = list(data[name])
        return data


class ClusterStore(Transacting, Protocol):
    """What clusters use of a store: its backend and transaction, and its writes for the
    rolling summary (a document like any other)."""

    @property
    def author_tier(self) -> str: ...
    def purge(self, ids: Iterable[str] | None = None) -> int: ...
    def add(
        self,
        text: str,
        *,
        source: str = "",
        source_id: str | None = None,
        doc_type: str = "",
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
        namespace: str = "default",
        entities: Iterable[str] = (),
    ) -> str: ...


class Clusters:
    """The clusters of one store."""

    def __init__(self, store: ClusterStore) -> None:
        self.store = store
        self.backend = store.backend

    def create(
        self,
        name: str,
        *,
        namespace: str = "default",
        summary: str = "",
        key_entities: Iterable[str] = (),
        members: Iterable[str] = (),
    ) -> Cluster:
        """A new cluster; its id is derived from (namespace, name), which must be new."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("a cluster needs a name")
        cluster_id = _cluster_id(namespace, name)
        if self.backend.get_cluster(cluster_id) is not None:
            raise InvalidInput(f"namespace {namespace!r} already has a cluster named {name!r}")
        stamp = to_iso(now())
        cluster = Cluster(cluster_id, name, namespace, created_at=stamp, updated_at=stamp)
        with self.store.transaction():
            self._save(cluster)
            if members:
                self.add(cluster_id, members)
            if summary or key_entities:
                self.update(cluster_id, summary=summary, key_entities=key_entities)
        return self.get(cluster_id)

    def get(self, cluster_id: str) -> Cluster:
        row = self.backend.get_cluster(cluster_id)
        if row is None:
            raise NotFound(f"no cluster with id {cluster_id!r}")
        return self._load(cluster_id, row[1])

    def list(self, namespace: str = "default") -> list[Cluster]:
        return [self._load(cid, data) for cid, data in self.backend.list_clusters(namespace)]

    def update(
        self,
        cluster_id: str,
        *,
        summary: str | None = None,
        key_entities: Iterable[str] | None = None,
    ) -> Cluster:
        """Replace the rolling summary and/or the key entities."""
        cluster = self.get(cluster_id)
        if summary is not None and not isinstance(summary, str):
            raise InvalidInput("summary must be a string")
        entities = cluster.key_entities if key_entities is None else _strings(key_entities)
        text = cluster.rolling_summary if summary is None else summary
        with self.store.transaction():
            doc_id = self._write_summary(cluster, text, entities)
            self._save(
                replace(
                    cluster,
                    rolling_summary=text,
                    key_entities=entities,
                    summary_doc_id=doc_id,
                    updated_at=to_iso(now()),
                )
            )
        return self.get(cluster_id)

    def append_decision(
        self, cluster_id: str, text: str, *, author: str = "", author_tier: str | None = None
    ) -> Cluster:
        """Add an entry to the decision log (entries are never changed or removed)."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("a decision needs text")
        entry = {
            "at": to_iso(now()),
            "text": text,
            "author": author,
            "author_tier": author_tier or self.store.author_tier,
        }
        with self.store.transaction():
            cluster = self.get(cluster_id)
            log = (*cluster.decision_log, entry)
            self._save(replace(cluster, decision_log=log, updated_at=entry["at"]))
        return self.get(cluster_id)

    def add(self, cluster_id: str, doc_ids: Iterable[str]) -> Cluster:
        """Add documents (live, of the cluster's namespace); an unknown id is NotFound and
        nothing is added."""
        cluster = self.get(cluster_id)
        wanted = list(dict.fromkeys(_ids(doc_ids)))
        for doc_id in wanted:
            doc = self.store.peek(doc_id)
            if doc is None or doc.namespace != cluster.namespace:
                raise NotFound(f"no document with id {doc_id!r} in {cluster.namespace!r}")
        self.backend.add_members(cluster_id, wanted, now())
        return self.get(cluster_id)

    def remove(self, cluster_id: str, doc_ids: Iterable[str]) -> Cluster:
        self.get(cluster_id)
        self.backend.remove_members(cluster_id, _ids(doc_ids))
        return self.get(cluster_id)

    def delete(self, cluster_id: str) -> bool:
        """Delete a cluster (its members stay); returns False if there was none."""
        row = self.backend.get_cluster(cluster_id)
        if row is None:
            return False
        cluster = self._load(cluster_id, row[1])
        with self.store.transaction():
            if cluster.summary_doc_id:
                self.store.purge(ids=[cluster.summary_doc_id])
            return self.backend.delete_cluster(cluster_id)

    def _write_summary(self, cluster: Cluster, text: str, entities: Sequence[str]) -> str | None:
        if not text:
            if cluster.summary_doc_id:
                self.store.purge(ids=[cluster.summary_doc_id])
            return None
        return self.store.add(
            text,
            source=SUMMARY_SOURCE,
            source_id=cluster.id,
            doc_type=SUMMARY_TYPE,
            title=cluster.name,
            namespace=cluster.namespace,
            entities=entities,
            metadata={"cluster_id": cluster.id},
        )

    def _save(self, cluster: Cluster) -> None:
        data = cluster.to_dict()
        for name in ("id", "namespace", "members"):
            del data[name]
        self.backend.put_cluster(cluster.id, cluster.namespace, json.dumps(data, sort_keys=True))

    def _load(self, cluster_id: str, data: str) -> Cluster:
        values = json.loads(data)
        row = self.backend.get_cluster(cluster_id)
        namespace = row[0] if row else "default"
        members = [
            doc_id
            for doc_id in self.backend.cluster_members(cluster_id)
            if self.store.peek(doc_id) is not None
        ]
        return Cluster(
            id=cluster_id,
            namespace=namespace,
            name=values["name"],
            rolling_summary=values["rolling_summary"],
            key_entities=tuple(values["key_entities"]),
            decision_log=tuple(values["decision_log"]),
            members=tuple(members),
            created_at=values["created_at"],
            updated_at=values["updated_at"],
            summary_doc_id=values.get("summary_doc_id"),
        )


def _cluster_id(namespace: str, name: str) -> str:
    key = "\x00".join(("cluster", namespace, name))
    return "c" + hashlib.blake2b(key.encode(), digest_size=10).hexdigest()


def _ids(doc_ids: Iterable[str]) -> list[str]:
    if isinstance(doc_ids, str):
        raise InvalidInput("give a list of document ids, not one string")
    ids = list(doc_ids)
    if not all(isinstance(i, str) for i in ids):
        raise InvalidInput("document ids must be strings")
    return ids


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    items = (values,) if isinstance(values, str) else tuple(values)
    if not all(isinstance(v, str) for v in items):
        raise InvalidInput("key_entities must be a list of strings")
    return tuple(dict.fromkeys(v.strip() for v in items if v.strip()))
