"""Write-time enrichment against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

import trove
from helpers.llm_server import FakeLLM
from trove.enrich import enrich_missing
from trove.llm import ChatModel

TEXT = "Sprint 14 retro: the deploy broke twice because the config drifted.\r\n  "
ENRICHED = {
    "summary": "A retrospective on failed deployments.",
    "keywords": ["postmortem", "outage"],
    "entities": ["Sprint 14"],
}


@pytest.fixture
def kb(fake_llm: FakeLLM, tmp_path: Path) -> trove.Store:
    fake_llm.answers[TEXT[:6000]] = ENRICHED
    model = ChatModel("tiny", base_url=fake_llm.url, timeout=0.5)
    return trove.open(tmp_path / "kb.db", embedder=None, llm=model)


def test_enrichment_is_kept_beside_the_text_and_found_by_search(kb: trove.Store) -> None:
    doc = kb.add(TEXT, source_id="retro", enrich=True)
    stored = kb.get(doc)
    assert stored is not None and stored.text == TEXT  # byte-exact
    assert kb.enrichment(doc) == {
        "status": "done",
        "summary": ENRICHED["summary"],
        "keywords": ["postmortem", "outage"],
        "entities": ["Sprint 14"],
        "model": "openai:tiny",
        "error": "",
    }
    [hit] = kb.search("postmortem")  # only the enrichment has this word
    assert hit.source_id == "retro" and hit.provenance == "enriched"
    assert "«postmortem»" in hit.snippet
    [own] = kb.search("config drifted")
    assert own.provenance == "original"
    [both] = kb.search("retro postmortem", explain=True)  # text and enrichment match
    assert both.provenance == "original" and both.explain is not None
    assert set(both.explain["enrichment"]) == {"original", "enriched"}
    assert both.explain["keyword"]["rank"] == 1  # the retriever's own explanation stays


def test_a_failed_enrichment_leaves_the_document_stored_and_marked(
    kb: trove.Store, fake_llm: FakeLLM
) -> None:
    fake_llm.behaviour = "error"
    doc = kb.add(TEXT, source_id="retro", enrich=True)
    assert kb.get(doc) is not None
    state = kb.enrichment(doc)
    assert state is not None and state["status"] == "failed" and "HTTP 500" in state["error"]
    assert kb.search("postmortem") == []
    fake_llm.behaviour = "ok"
    assert enrich_missing(kb) == {"enriched": 1, "failed": 0}
    assert kb.search("postmortem")[0].provenance == "enriched"
    assert enrich_missing(kb) == {"enriched": 0, "failed": 0}


@pytest.mark.parametrize("behaviour", ["slow", "garbage"])
def test_a_slow_or_broken_model_never_fails_the_write(
    kb: trove.Store, fake_llm: FakeLLM, behaviour: str
) -> None:
    fake_llm.behaviour = behaviour
    doc = kb.add(TEXT, enrich=True)
    assert kb.get(doc) is not None
    assert kb.enrichment(doc)["status"] == "failed"  # type: ignore[index]


def test_a_changed_document_needs_enriching_again(kb: trove.Store) -> None:
    doc = kb.add(TEXT, source_id="retro", enrich=True)
    kb.update(doc, text="Sprint 15 retro: all green.")
    assert kb.enrichment(doc)["status"] == "stale"  # type: ignore[index]
    assert kb.search("postmortem") == []  # an old version's enrichment is not searched
    assert enrich_missing(kb)["enriched"] == 1


def test_the_store_setting_enriches_every_write(kb: trove.Store, fake_llm: FakeLLM) -> None:
    kb.add("no enrichment by default")
    assert fake_llm.requests == []
    kb.settings(enrich="on")
    doc = kb.add(TEXT)
    assert kb.enrichment(doc)["status"] == "done"  # type: ignore[index]
    kb.add("not this one", enrich=False)
    assert len(fake_llm.requests) == 1


def test_purged_documents_take_their_enrichment_along(kb: trove.Store) -> None:
    doc = kb.add(TEXT, enrich=True)
    kb.delete(doc)
    assert kb.search("postmortem") == []
    kb.purge()
    assert kb.enrichment(doc) is None


def test_postgres_refuses_enrichment_before_writing(pg_target: str) -> None:
    from trove.errors import InvalidInput, InvalidQuery

    with trove.open(pg_target, embedder=None, llm=None) as kb:
        with pytest.raises(InvalidQuery, match="SQLite"):
            kb.add("not stored", enrich=True)
        assert kb.stats().documents == 0
        with pytest.raises(InvalidInput, match="SQLite"):
            kb.settings(enrich="on")
        assert kb.search("anything") == []  # searches are unaffected
