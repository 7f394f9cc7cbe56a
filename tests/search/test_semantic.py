"""Semantic and hybrid search, the embedder lock, and re-embedding (plumbing tests use
the deterministic hash embedder; embedders/test_default_embedder.py uses the real model)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import trove
from helpers.threads import run_threads
from trove import EmbedderError, EmbedderMismatch, InvalidQuery
from trove.embedders import HashEmbedder


class Counting(HashEmbedder):
    """The hash embedder, remembering what it was asked to embed."""

    def __init__(self, dimension: int = 64, languages: frozenset[str] | None = None) -> None:
        super().__init__(dimension)
        self.languages = languages
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts)


class Failing(HashEmbedder):
    """Fails after ``ok`` calls, like an endpoint that goes down."""

    def __init__(self, ok: int = 0, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.ok = ok

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.ok <= 0:
            raise EmbedderError("embedding endpoint http://127.0.0.1:9/v1 timed out after 1 s")
        self.ok -= 1
        return super().embed(texts)


class Zero(HashEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), self.dimension), dtype=np.float32)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def target(store_target: str) -> str:
    """Each backend: a SQLite file, SQLite in memory, PostgreSQL (see conftest.py)."""
    return store_target


ANIMALS = [
    ("cats", "The cat sat on the warm mat and purred at the kitten."),
    ("dogs", "A dog barked at the postman; puppies chase sticks in the park."),
    ("rockets", "The rocket engine burns liquid oxygen and kerosene at launch."),
    ("tea", "Green tea leaves are steamed, rolled and dried before brewing."),
]


def load(kb: trove.Store) -> dict[str, str]:
    return {
        title: kb.add(text, title=title, source="s", source_id=title) for title, text in ANIMALS
    }


def test_semantic_search_ranks_by_similarity(target: str) -> None:
    with trove.open(target, embedder="hash:256") as kb:
        ids = load(kb)
        hits = kb.search("kitten purred on the mat", mode="semantic")
        assert hits[0].doc_id == ids["cats"]
        assert 0 < hits[0].score <= 1.0 + 1e-6
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_every_chunk_gets_a_vector_and_the_lock_is_recorded(target: str) -> None:
    with trove.open(target, embedder="hash:64") as kb:
        assert kb.stats().embedder is None  # nothing written yet: no lock
        load(kb)
        stats = kb.stats()
        assert stats.vectors == stats.chunks == 4
        assert stats.embedder == {
            "spec": "hash:64",
            "model_id": "hash:64",
            "dimension": 64,
            "table": "chunk_vec_1",
        }


def test_hybrid_is_the_default_and_explains_itself(target: str) -> None:
    with trove.open(target, embedder="hash:256") as kb:
        ids = load(kb)
        hits = kb.search("kerosene rocket", explain=True)
        assert hits[0].doc_id == ids["rockets"]
        explain = hits[0].explain
        assert explain is not None and explain["fusion"] == "convex"
        assert explain["keyword"]["rank"] == 1 and explain["semantic"]["rank"] == 1
        assert set(explain["weights"]) == {"keyword", "semantic"}
        assert kb.search("kerosene rocket")[0].explain is None


class Threads(HashEmbedder):
    """Remembers the thread that embedded each text."""

    def __init__(self, releases_gil: bool) -> None:
        super().__init__(64)
        self.releases_gil = releases_gil
        self.threads: list[threading.Thread] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.threads.append(threading.current_thread())
        return super().embed(texts)


@pytest.mark.parametrize("releases_gil", [True, False])
def test_hybrid_embeds_beside_the_keyword_leg_only_a_model_that_releases_the_gil(
    tmp_path: Path, releases_gil: bool
) -> None:
    # A model that holds the GIL (many small numpy steps) would take turns at it with
    # the keyword leg's Python: it is called inline instead.
    embedder = Threads(releases_gil)
    with trove.open(tmp_path / "kb.db", embedder=embedder) as kb:
        ids = load(kb)
        embedder.threads.clear()
        assert kb.search("kerosene rocket", mode="hybrid")[0].doc_id == ids["rockets"]
    inline = embedder.threads == [threading.current_thread()]
    assert inline is not releases_gil


def test_rrf_fusion(target: str) -> None:
    with trove.open(target, embedder="hash:256", fusion="rrf") as kb:
        ids = load(kb)
        hit = kb.search("kerosene rocket", explain=True)[0]
        assert hit.doc_id == ids["rockets"] and hit.explain["fusion"] == "rrf"  # type: ignore[index]
        assert hit.explain["raw_score"] == pytest.approx(2 / 61)  # type: ignore[index]


def test_keyword_only_store_never_loads_a_model(target: str) -> None:
    with trove.open(target, embedder=None) as kb:
        load(kb)
        kb.search("cat")
        kb.stats()
        assert not kb.vectors.loaded and kb.stats().vectors == 0
        with pytest.raises(InvalidQuery, match="needs an embedder"):
            kb.search("cat", mode="semantic")


def test_reopening_uses_the_locked_embedder(durable_target: str) -> None:
    path = durable_target
    with trove.open(path, embedder="hash:32") as kb:
        ids = load(kb)
    with trove.open(path) as kb:
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]
        assert kb.embedder is not None and kb.embedder.model_id == "hash:32"


@pytest.mark.sqlite_only
def test_other_embedder_is_refused_and_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:32") as kb:
        load(kb)
    before = digest(path)
    with pytest.raises(EmbedderMismatch, match=r"hash:32 \(32-d\).*reembed"):
        trove.open(path, embedder="hash:64")
    assert digest(path) == before


def test_unchanged_chunks_are_not_embedded_again(target: str) -> None:
    embedder = Counting()
    with trove.open(target, embedder=embedder) as kb:
        kb.add("alpha text", source="s", source_id="1", title="A")
        assert len(embedder.seen) == 1
        kb.add("alpha text", source="s", source_id="1", title="A")  # identical: no-op
        kb.add("alpha text", source="s", source_id="1", title="A", tags=["x"])  # metadata
        assert len(embedder.seen) == 1
        kb.add("alpha text", source="s", source_id="2", title="A")  # same chunk elsewhere
        assert len(embedder.seen) == 1
        kb.add("alpha text", source="s", source_id="1", title="B")  # title is embedded
        assert embedder.seen[-1] == "B\n\nalpha text"
        assert kb.stats().vectors == kb.stats().chunks == 2


def test_filters_apply_inside_the_knn(target: str) -> None:
    with trove.open(target, embedder="hash:128") as kb:
        kb.add_many(
            {"text": f"solar panel efficiency report {i}", "source": "near", "source_id": str(i)}
            for i in range(500)
        )
        kb.add_many(
            {"text": f"unrelated gardening diary entry {i}", "source": "far", "source_id": str(i)}
            for i in range(12)
        )
        hits = kb.search("solar panel efficiency", mode="semantic", source="far", limit=10)
        assert len(hits) == 10 and {h.source for h in hits} == {"far"}
        hits = kb.search("solar panel efficiency", source="far", limit=10)
        assert len(hits) == 10 and {h.source for h in hits} == {"far"}


def test_deleted_and_updated_documents_leave_semantic_results(target: str) -> None:
    with trove.open(target, embedder="hash:256") as kb:
        ids = load(kb)
        kb.search("kitten", mode="semantic")  # the in-memory index is loaded now
        kb.delete(ids["cats"])
        assert ids["cats"] not in [h.doc_id for h in kb.search("kitten mat", mode="semantic")]
        kb.add("Rockets now carry satellites.", source="s", source_id="rockets", title="rockets")
        hits = kb.search("kerosene liquid oxygen", mode="semantic", limit=10)
        assert kb.get(ids["rockets"]).text == "Rockets now carry satellites."  # type: ignore[union-attr]
        assert len({h.doc_id for h in hits}) == len(hits)


def test_another_connections_writes_are_seen(durable_target: str) -> None:
    path = durable_target
    with trove.open(path, embedder="hash:256") as a, trove.open(path, embedder="hash:256") as b:
        load(a)
        assert b.search("kitten", mode="semantic")  # b loads its index
        new = a.add("Quantum computers use qubits in superposition.", title="quantum")
        assert b.search("qubits superposition", mode="semantic")[0].doc_id == new
        a.delete(new)
        a.purge()
        assert new not in [h.doc_id for h in b.search("qubits", mode="semantic")]


def test_embedder_failure_writes_nothing(target: str) -> None:
    with trove.open(target, embedder=Failing(ok=1)) as kb:
        first = kb.add("first version", source="s", source_id="1")
        with pytest.raises(EmbedderError, match="timed out"):
            kb.add("second version", source="s", source_id="1")
        with pytest.raises(EmbedderError):
            kb.add("another document", source="s", source_id="2")
        assert kb.get(first).text == "first version"  # type: ignore[union-attr]
        stats = kb.stats()
        assert (stats.documents, stats.chunks, stats.vectors) == (1, 1, 1)


def test_zero_vector_and_huge_queries_do_not_crash(target: str) -> None:
    with trove.open(target, embedder=Zero(64)) as kb:
        load(kb)
        assert kb.search("anything", mode="semantic") == []
        assert kb.search("cat", mode="hybrid")[0].title == "cats"
    with trove.open(":memory:", embedder="hash:64") as kb:
        load(kb)
        long = "kitten " * 1_400  # 9,800 characters: under the 10,000 cap
        assert kb.search(long, mode="semantic")
        assert isinstance(kb.search(long), list)
        with pytest.raises(InvalidQuery, match="characters"):
            kb.search("kitten " * 15_000)  # ~100 KB: refused, not run
        assert isinstance(kb.search("ᚠᛇᚻ᛫ᛒᛦᚦ", mode="semantic"), list)


def test_query_in_a_script_the_embedder_does_not_know_is_keyword_ranked(target: str) -> None:
    latin_only = Counting(64, languages=frozenset({"latin"}))
    with trove.open(target, embedder=latin_only) as kb:
        kb.add_many(
            [
                {"text": "北京是中国的首都，有很多名胜古迹。", "title": "北京"},
                {"text": "上海是一个港口城市。北京也很大。", "title": "上海"},
                {"text": "东京是日本的首都。", "title": "东京"},
            ]
        )
        keyword = [h.doc_id for h in kb.search("中国的首都北京", mode="keyword")]
        embedded = len(latin_only.seen)
        hits = kb.search("中国的首都北京", explain=True)
        assert len(latin_only.seen) == embedded  # the query is not even embedded
        assert [h.doc_id for h in hits] == keyword
        assert hits[0].explain["weights"] == {"keyword": 1.0, "semantic": 0.0}  # type: ignore[index]


def test_a_greek_letter_in_an_english_query_does_not_silence_the_embedder(target: str) -> None:
    latin_only = Counting(64, languages=frozenset({"latin"}))
    with trove.open(target, embedder=latin_only) as kb:
        kb.add_many([{"text": "Interferon gamma drives autoimmune myocarditis in mice."}])
        hits = kb.search("Mice lacking IFN-γ resist myocarditis", explain=True)
        assert "Mice lacking IFN-γ resist myocarditis" in latin_only.seen
        assert hits[0].explain["weights"] == {"keyword": 0.5, "semantic": 0.5}  # type: ignore[index]


@pytest.mark.parametrize(
    ("option", "cjk", "latin"),
    [
        ({}, {"keyword": 0.7, "semantic": 0.3}, {"keyword": 0.5, "semantic": 0.5}),
        (
            {"keyword_weight": 0.4},
            {"keyword": 0.4, "semantic": 0.6},
            {"keyword": 0.4, "semantic": 0.6},
        ),
    ],
)
def test_cjk_queries_lean_on_keywords_unless_a_weight_is_set(
    target: str, option: dict[str, float], cjk: dict[str, float], latin: dict[str, float]
) -> None:
    with trove.open(target, embedder="hash:64", **option) as kb:
        kb.add_many([{"text": "北京是中国的首都。"}, {"text": "The capital of France."}])
        assert kb.search("中国的首都", explain=True)[0].explain["weights"] == cjk  # type: ignore[index]
        assert kb.search("capital", explain=True)[0].explain["weights"] == latin  # type: ignore[index]


@pytest.mark.sqlite_only
def test_reembed_switches_embedder_in_one_step(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:32") as kb:
        ids = load(kb)
        assert kb.reembed("hash:48") == 4
        stats = kb.stats()
        assert stats.embedder["model_id"] == "hash:48" and stats.vectors == 4  # type: ignore[index]
        assert stats.embedder["table"] == "chunk_vec_2"  # type: ignore[index]
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]
    with trove.open(path) as kb:
        assert kb.embedder.model_id == "hash:48"  # type: ignore[union-attr]
        names = [r[0] for r in kb.backend.conn.execute("SELECT name FROM sqlite_schema")]
        assert "chunk_vec_1" not in names


def test_crash_during_reembed_leaves_old_vectors_in_use(durable_target: str) -> None:
    path = durable_target
    with trove.open(path, embedder="hash:32") as kb:
        ids = load(kb)
        with pytest.raises(EmbedderError):
            kb.reembed(Failing(ok=2, dimension=48), batch_size=1)
    with trove.open(path) as kb:
        assert kb.stats().embedder["model_id"] == "hash:32"  # type: ignore[index]
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]
        assert kb.reembed("hash:48") == 4
        assert kb.stats().embedder["table"] == "chunk_vec_2"  # type: ignore[index]


@pytest.mark.sqlite_only
def test_reembed_missing_repairs_chunks_without_vectors(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        load(kb)
        table = kb.stats().embedder["table"]  # type: ignore[index]
        kb.backend.conn.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT min(id) FROM chunk)")
        assert kb.stats().vectors == 3
        assert kb.reembed(missing=True) == 1
        assert kb.stats().vectors == 4


def test_keyword_only_store_can_gain_vectors(durable_target: str) -> None:
    path = durable_target
    with trove.open(path, embedder=None) as kb:
        ids = load(kb)
    with trove.open(path, embedder="hash:64") as kb:
        assert kb.reembed("hash:64") == 4
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]


def test_one_store_serves_many_threads(tmp_path: Path) -> None:
    # apsw raises ThreadingViolationError on a connection busy in another thread; the
    # store must serialize instead (servers share one store; hybrid embeds on a thread).
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        load(kb)

        def work(i: int) -> None:
            for j in range(15):
                kb.search("kitten purred on the mat", explain=True)
                kb.add(f"note {i} {j} about kittens", source="t", source_id=f"{i}-{j}")

        run_threads(work, 6)
        assert kb.stats().documents == 4 + 6 * 15


def test_reembed_in_place_keeps_the_embedder_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=Counting(32)) as kb:  # an instance, not a name
        ids = load(kb)
        assert kb.stats().embedder["spec"] == "hash:32"  # type: ignore[index]
        assert kb.reembed() == 4  # the store's own embedder, rebuilt
    with trove.open(path) as kb:
        assert kb.embedder.model_id == "hash:32"  # type: ignore[union-attr]
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]
