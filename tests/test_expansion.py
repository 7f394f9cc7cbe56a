"""LLM query expansion against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

import trove
from helpers.llm_server import FakeLLM
from trove.llm import ChatModel


def _store(fake: FakeLLM, timeout: float = 3.0, embedder: str | None = None) -> trove.Store:
    model = ChatModel("tiny", base_url=fake.url, timeout=timeout)
    kb = trove.open(":memory:", embedder=embedder, llm=model)
    kb.add("Redis was dropped in favour of Postgres queues.", source_id="q")
    kb.add("We picked SQLite for the local cache.", source_id="c")
    return kb


def test_expansion_fuses_the_models_variants(fake_llm: FakeLLM) -> None:
    fake_llm.answers["db choice"] = {"keywords": ["sqlite", "redis"], "paraphrases": []}
    kb = _store(fake_llm)
    assert kb.search("db choice") == []
    hits = kb.search("db choice", expand="llm", explain=True)
    assert {h.source_id for h in hits} == {"q", "c"}
    assert hits.degraded is None
    assert hits.variants == ("sqlite", "redis")
    assert hits[0].explain is not None
    assert {v["origin"] for v in hits[0].explain["variants"]} == {"llm"}
    request = fake_llm.requests[0]
    assert request["model"] == "tiny"
    assert request["temperature"] == 0


def test_one_call_per_distinct_query_and_the_cache_lives_in_the_file(
    fake_llm: FakeLLM, tmp_path: object
) -> None:
    path = f"{tmp_path}/kb.db"
    model = ChatModel("tiny", base_url=fake_llm.url)
    with trove.open(path, embedder=None, llm=model) as kb:
        kb.add("SQLITE is small", source_id="c")
        kb.search("sqlite store", expand="llm")
        kb.search("  SQLite   STORE ", expand="llm")  # the same query, normalized
        assert len(fake_llm.requests) == 1
        assert kb.stats().expansion_cache == {
            "hits": 1,
            "misses": 1,
            "failures": 0,
            "hit_rate": 0.5,
        }
    with trove.open(path, embedder=None, llm=ChatModel("tiny", base_url=fake_llm.url)) as kb:
        kb.search("sqlite store", expand="llm")
        assert len(fake_llm.requests) == 1
    with trove.open(path, embedder=None, llm=ChatModel("other", base_url=fake_llm.url)) as kb:
        kb.search("sqlite store", expand="llm")  # another model: its own answer
        assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("behaviour", ["slow", "error", "garbage"])
def test_a_failing_model_falls_back_to_the_plain_search(fake_llm: FakeLLM, behaviour: str) -> None:
    kb = _store(fake_llm, timeout=0.3)
    fake_llm.behaviour = behaviour
    hits = kb.search("sqlite", expand="llm")
    assert [h.source_id for h in hits] == ["c"]
    assert hits.degraded == "unexpanded"
    assert hits.warning is not None and "LLM request" in hits.warning
    assert kb.stats().expansion_cache["failures"] == 1
    fake_llm.behaviour = "ok"  # a failure is not cached: the next search asks again
    assert kb.search("sqlite", expand="llm").degraded is None


def test_the_model_unreachable_is_not_an_error() -> None:
    model = ChatModel("tiny", base_url="http://127.0.0.1:9/v1", timeout=0.5)
    kb = trove.open(":memory:", embedder=None, llm=model)
    kb.add("sqlite", source_id="c")
    hits = kb.search("sqlite", expand="llm")
    assert [h.source_id for h in hits] == ["c"] and hits.degraded == "unexpanded"


def test_nothing_is_called_without_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TROVE_LLM", raising=False)
    kb = trove.open(":memory:", embedder=None)
    assert kb.llm is None
    kb.add("sqlite", source_id="c")
    assert kb.search("sqlite").degraded is None
    assert kb.search("sqlite", expand="llm").degraded == "unexpanded"


def test_the_environment_configures_the_model(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROVE_LLM", "openai:envmodel")
    monkeypatch.setenv("TROVE_LLM_BASE_URL", fake_llm.url)
    kb = trove.open(":memory:", embedder=None)
    kb.add("SQLITE", source_id="c")
    kb.search("sqlite db", expand="llm")
    assert fake_llm.requests[0]["model"] == "envmodel"


def test_a_model_named_in_open_is_reached_as_the_environment_says(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trove.open(llm="openai:M") honours the endpoint, key and timeout variables that
    $TROVE_LLM does (issue 30): it went to OpenAI's endpoint instead."""
    monkeypatch.delenv("TROVE_LLM", raising=False)
    monkeypatch.setenv("TROVE_LLM_BASE_URL", fake_llm.url)
    monkeypatch.setenv("TROVE_LLM_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("TROVE_LLM_TIMEOUT", "7")
    with trove.open(":memory:", embedder=None, llm="openai:named") as kb:
        kb.add("SQLITE", source_id="c")
        assert kb.search("sqlite db", expand="llm").degraded is None
        assert fake_llm.requests[0]["model"] == "named"
        assert kb.llm is not None and kb.llm.timeout == 7.0
    monkeypatch.setenv("TROVE_LLM_TIMEOUT", "soon")
    with pytest.raises(trove.InvalidInput, match="TROVE_LLM_TIMEOUT"):
        trove.llm.ChatModel.from_spec("openai:named")


def test_the_store_setting_turns_expansion_on_by_default(fake_llm: FakeLLM) -> None:
    kb = _store(fake_llm)
    kb.search("sqlite")
    assert fake_llm.requests == []
    assert kb.settings(expand="llm") == {"expand": "llm", "enrich": "off"}
    assert kb.search("sqlite").variants  # expanded without asking
    assert kb.search("sqlite", expand=0).variants == ()  # a caller can still say no
    assert len(fake_llm.requests) == 1


def test_a_hypothetical_passage_searches_by_meaning_only(fake_llm: FakeLLM) -> None:
    kb = _store(fake_llm, embedder="hash:64")
    hits = kb.search("sqlite cache", expand="llm", explain=True)
    runs = {v["origin"] for h in hits for v in (h.explain or {})["variants"]}
    assert "passage" in runs
    assert hits.variants[-1] == "A document about sqlite cache."


def test_the_variants_vectors_are_cached_with_the_expansion(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _store(fake_llm, embedder="hash:64")
    first = kb.search("sqlite cache", expand="llm")
    embedder = kb.embedder
    assert embedder is not None
    embedded: list[list[str]] = []
    embed = embedder.embed

    def counted(texts):  # type: ignore[no-untyped-def]
        embedded.append(list(texts))
        return embed(texts)

    monkeypatch.setattr(embedder, "embed", counted)
    again = kb.search("sqlite cache", expand="llm")
    assert [h.doc_id for h in again] == [h.doc_id for h in first]
    assert embedded == [["sqlite cache"]]  # the query, as a plain search; not its variants
    assert len(fake_llm.requests) == 1


def test_a_repeated_expansion_reads_no_row(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _store(fake_llm, embedder="hash:64")
    first = kb.search("sqlite cache", expand="llm")
    read: list[str] = []
    get_meta = kb.backend.get_meta

    def counted(key: str, *, max_age: float = 0.0) -> str | None:
        read.append(key)
        return get_meta(key, max_age=max_age)

    monkeypatch.setattr(kb.backend, "get_meta", counted)
    again = kb.search("sqlite cache", expand="llm")
    assert again.variants == first.variants and again.degraded is None
    assert not [key for key in read if key.startswith("llm.expand")]
    assert kb.stats().expansion_cache["hits"] == 1


def test_closing_the_store_closes_the_chat_model_it_was_given(fake_llm: FakeLLM) -> None:
    """Store.close closes a ChatModel it holds; a model only named ("env", a spec) was
    never made, and closing needs no trove.llm for it (the CLI opens stores that way)."""
    closed: list[str] = []

    class Model(ChatModel):
        def close(self) -> None:
            closed.append(self.model)
            super().close()

    kb = _store(fake_llm)
    kb.close()
    with trove.open(":memory:", embedder=None, llm=Model("tiny", base_url=fake_llm.url)):
        pass
    with trove.open(":memory:", embedder=None, llm="openai:unused"):
        pass
    assert closed == ["tiny"]
