"""Keyword search: BM25 over words and CJK bigrams, plain-text queries, filters."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trove
from trove import InvalidQuery


@pytest.fixture
def notes(kb: trove.Store) -> trove.Store:
    kb.add_many(
        [
            {
                "text": "We dropped Redis because the cache hit rate was low.",
                "title": "Cache decision",
                "source": "notes",
                "source_id": "redis.md",
                "author": "ana",
                "tags": ["architecture", "decision"],
                "timestamp": "2026-10-14T10:00:00Z",
                "metadata": {"team": "search", "priority": 1},
            },
            {
                "text": "Running shoes and runners: notes from the marathon.",
                "title": "Marathon",
                "source": "journal",
                "source_id": "run.md",
                "author": "bo",
                "tags": ["personal"],
                "timestamp": "2026-11-01T08:00:00Z",
                "metadata": {"team": "none", "priority": 2},
            },
            {
                "text": "我们决定把知识库迁移到单个 SQLite 文件，北京团队负责测试。",
                "title": "数据库迁移",
                "source": "notes",
                "source_id": "cn.md",
                "author": "chen",
                "tags": ["decision"],
                "timestamp": "2026-11-10T09:00:00Z",
            },
            {
                "text": "東京で会議をしました。検索エンジンの話をしました。",
                "title": "会議",
                "source": "journal",
                "source_id": "ja.md",
            },
            {
                "text": "한국어 문서입니다. 검색 엔진 테스트.",
                "title": "한국어",
                "source": "journal",
                "source_id": "ko.md",
            },
        ]
    )
    return kb


def titles(hits: list[trove.Hit]) -> list[str]:
    return [hit.title for hit in hits]


def test_natural_language_query_is_an_or_of_words(notes: trove.Store) -> None:
    hits = notes.search("why did we drop redis for sqlite")
    assert titles(hits)[0] == "Cache decision"


def test_stemming_matches_word_forms(notes: trove.Store) -> None:
    assert titles(notes.search("runner running"))[0] == "Marathon"
    assert titles(notes.search("dropping caches")) == ["Cache decision"]


def test_titles_are_searchable(notes: trove.Store) -> None:
    assert titles(notes.search("marathon")) == ["Marathon"]


def test_chinese_query_uses_bigrams(notes: trove.Store) -> None:
    assert titles(notes.search("知识库迁移")) == ["数据库迁移"]


def test_chinese_hits_rank_by_the_bigrams_they_share(kb: trove.Store) -> None:
    kb.add_many(
        [
            {"text": "我们把知识库迁移到新的服务器上。", "title": "all"},
            {"text": "知识分子的故事和迁徙。", "title": "one"},
            {"text": "图书馆今天不开门。", "title": "none"},
        ]
    )
    assert titles(kb.search("知识库迁移")) == ["all", "one"]


@pytest.mark.parametrize("query", ["北京", "库", "伞北京"])
def test_short_cjk_queries(notes: trove.Store, query: str) -> None:
    # "北京" is one bigram; "库" has none and is found as a substring; of "伞北京"'s
    # bigrams only "北京" occurs.
    assert titles(notes.search(query)) == ["数据库迁移"]


def test_short_cjk_query_with_no_match_is_empty(notes: trove.Store) -> None:
    assert notes.search("伞") == []


def test_japanese_and_korean(notes: trove.Store) -> None:
    assert titles(notes.search("検索エンジン")) == ["会議"]
    assert titles(notes.search("会議")) == ["会議"]  # the title, a two-character word
    assert titles(notes.search("東京で")) == ["会議"]  # kanji and kana in one run
    assert titles(notes.search("검색 엔진")) == ["한국어"]
    assert titles(notes.search("문서")) == ["한국어"]


def test_mixed_script_query_uses_both_indexes(notes: trove.Store) -> None:
    hits = titles(notes.search("redis 知识库"))
    assert hits[0] == "数据库迁移"
    assert "Cache decision" in hits


def test_latin_words_written_against_chinese(kb: trove.Store) -> None:
    kb.add("我们使用SQLite文件保存知识库，版本3.45。", title="glued")
    kb.add("SQLite is a library.", title="apart")
    assert titles(kb.search("SQLite文件")) == ["glued"]
    assert "glued" in titles(kb.search("知识库 sqlite"))


def test_substring_fallback_for_partial_words(notes: trove.Store) -> None:
    assert titles(notes.search("marath")) == ["Marathon"]
    notes.add("We run kubernetes clusters behind the gateway.", title="Ops")
    assert titles(notes.search("kube")) == ["Ops"]  # the start of a word
    assert titles(notes.search("bernet")) == ["Ops"]  # inside a word
    assert notes.search("zzyzx") == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_returns_nothing(notes: trove.Store, query: str) -> None:
    assert notes.search(query) == []


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "*",
        "-",
        ":",
        "NEAR(",
        "AND",
        "OR NOT",
        '"redis',
        "redis*",
        "-redis",
        "a:b",
        "((",
        "^",
        "NEAR(redis cache, 2)",
        "title:redis",
        "{redis}",
        "'",
        "?!",
        "\\",
        "AND OR NOT",
    ],
)
def test_operator_characters_are_plain_text(notes: trove.Store, query: str) -> None:
    hits = notes.search(query)
    assert isinstance(hits, list)


def test_operators_are_searched_as_words(notes: trove.Store) -> None:
    assert titles(notes.search('"redis" -cache NEAR(')) == ["Cache decision"]
    notes.add("Use AND and OR operators in boolean queries", title="Boolean")
    assert titles(notes.search("OR"))[:1] == ["Boolean"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(
        alphabet=st.sampled_from(list("\"*-:()^{}+~.,;!?'\\ NEARORANDNOT北京a1")), max_size=30
    )
)
def test_any_query_never_raises(notes: trove.Store, query: str) -> None:
    notes.search(query)


def test_raw_mode_passes_fts5_syntax(notes: trove.Store) -> None:
    assert titles(notes.search("redis AND cache", raw=True)) == ["Cache decision"]
    assert notes.search("redis AND marathon", raw=True) == []
    assert titles(notes.search("runn*", raw=True)) == ["Marathon"]


def test_raw_mode_with_cjk_matches_unbroken_text(notes: trove.Store) -> None:
    assert titles(notes.search("知识库 AND 北京", raw=True)) == ["数据库迁移"]
    assert notes.search("知识库 NOT 北京", raw=True) == []
    assert titles(notes.search('"知识库迁移"', raw=True)) == ["数据库迁移"]
    assert notes.search('"知识迁移"', raw=True) == []  # both bigram pairs occur, apart


def test_raw_mode_bad_syntax_is_invalid_query(notes: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="cannot parse"):
        notes.search('"unterminated', raw=True)


def test_results_are_documents_not_chunks(kb: trove.Store) -> None:
    long_text = "\n\n".join(f"Paragraph {i} mentions kafka streams." for i in range(400))
    kb.add(long_text, title="Kafka")
    kb.add("kafka once", title="Short")
    hits = kb.search("kafka", limit=10)
    assert sorted(titles(hits)) == ["Kafka", "Short"]


def test_hit_carries_provenance_and_marked_snippet(notes: trove.Store) -> None:
    hit = notes.search("redis")[0]
    assert hit.source == "notes" and hit.source_id == "redis.md"
    assert hit.author == "ana" and hit.tags == ("architecture", "decision")
    assert hit.timestamp == "2026-10-14T10:00:00Z"
    assert "«Redis»" in hit.snippet
    assert hit.chunk.index == 0 and hit.chunk.start == 0 and hit.score > 0
    chinese = notes.search("知识库")[0]
    assert "«知识库»" in chinese.snippet


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"source": "notes"}, ["Cache decision"]),
        ({"source": ["notes", "journal"]}, ["Cache decision", "Marathon"]),
        ({"author": "bo"}, ["Marathon"]),
        ({"tags": ["decision"]}, ["Cache decision"]),
        ({"tags": ["decision", "architecture"]}, ["Cache decision"]),
        ({"tags": ["decision", "personal"]}, []),
        ({"since": "2026-10-20"}, ["Marathon"]),
        ({"until": "2026-10-20"}, ["Cache decision"]),
        ({"since": "2026-10-14T10:00:00Z", "until": "2026-10-14T10:00:00Z"}, ["Cache decision"]),
        ({"metadata": {"team": "search"}}, ["Cache decision"]),
        ({"metadata": {"priority": 2}}, ["Marathon"]),
        ({"namespace": "other"}, []),
        ({"doc_type": "email"}, []),
    ],
)
def test_filters(notes: trove.Store, filters: dict, expected: list[str]) -> None:
    hits = notes.search("redis marathon", **filters)
    assert sorted(titles(hits)) == sorted(expected)


def test_unknown_filter_names_it(notes: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="unknown filter colour"):
        notes.search("redis", colour="red")


def test_unknown_mode_is_invalid(notes: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="unknown mode"):
        notes.search("redis", mode="telepathy")


def test_bad_filter_values_are_invalid(notes: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="since"):
        notes.search("redis", since="last tuesday")
    with pytest.raises(InvalidQuery, match="metadata"):
        notes.search("redis", metadata={"k": [1]})


def test_filtered_search_still_returns_limit_results(kb: trove.Store) -> None:
    # 600 strong matches outside the filter rank above the 15 weak matches inside it.
    kb.add_many(
        {"text": "apple " * 20, "source": "noise", "source_id": str(i)} for i in range(600)
    )
    kb.add_many(
        {
            "text": "apple and many other words " * 3 + str(i),
            "source": "wanted",
            "source_id": str(i),
        }
        for i in range(15)
    )
    hits = kb.search("apple", source="wanted", limit=10)
    assert len(hits) == 10
    assert {h.source for h in hits} == {"wanted"}


def test_namespaces_are_isolated(kb: trove.Store) -> None:
    kb.add("secret plan", namespace="a")
    kb.add("public plan", namespace="b")
    assert [h.namespace for h in kb.search("plan", namespace="a")] == ["a"]
    assert kb.search("secret", namespace="b") == []


def test_limit_is_respected(kb: trove.Store) -> None:
    kb.add_many({"text": f"widget number {i}"} for i in range(30))
    assert len(kb.search("widget", limit=7)) == 7
    assert kb.search("widget", limit=0) == []
