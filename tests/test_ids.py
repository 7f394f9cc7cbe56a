"""The document id rule (trove.ids.document_id), directly: a dedupe key, else the source
and its id, else the content names a document; scopes and sessions keep items apart."""

from __future__ import annotations

import hashlib

from trove.ids import document_id


def ident(
    *,
    namespace: str = "default",
    scope: str = "workspace",
    source: str = "",
    source_id: str | None = None,
    dedupe_key: str | None = None,
    content_hash: str = "h1",
    session: str = "",
) -> str:
    return document_id(namespace, scope, source, source_id, dedupe_key, content_hash, session)


def test_ids_existing_stores_hold_never_change() -> None:
    # The same values tests/memory/test_memory.py sees through Store.add.
    assert ident(source="notes", source_id="a.md") == "37b1bf2fd7d7f5955c18"
    assert ident(dedupe_key="k") == "a3354eb00b669708ba8e"
    key = "\x00".join(("hash", "default", "notes", "h1")).encode()
    assert ident(source="notes") == hashlib.blake2b(key, digest_size=10).hexdigest()


def test_an_id_is_twenty_hex_characters_and_deterministic() -> None:
    first = ident(source="notes", source_id="a.md")
    assert len(first) == 20 and int(first, 16) >= 0
    assert first == ident(source="notes", source_id="a.md")


def test_a_dedupe_key_decides_over_source_id_and_content() -> None:
    keyed = ident(dedupe_key="k", source="a", source_id="1", content_hash="h1")
    assert keyed == ident(dedupe_key="k", source="b", source_id="2", content_hash="h2")


def test_a_source_id_decides_over_content_within_its_source() -> None:
    assert ident(source="a", source_id="1", content_hash="h1") == ident(
        source="a", source_id="1", content_hash="h2"
    )
    assert ident(source="a", source_id="1") != ident(source="b", source_id="1")


def test_without_either_the_content_and_source_decide() -> None:
    assert ident(content_hash="h1") == ident(content_hash="h1")
    assert ident(content_hash="h1") != ident(content_hash="h2")
    assert ident(source="a") != ident(source="b")


def test_namespaces_and_scopes_keep_the_same_key_apart() -> None:
    for fields in ({"dedupe_key": "k"}, {"source_id": "1"}, {}):
        ids = {
            ident(**fields),
            ident(namespace="other", **fields),
            ident(scope="global", **fields),
            ident(scope="session", session="s1", **fields),
            ident(scope="session", session="s2", **fields),
        }
        assert len(ids) == 5, fields


def test_a_session_names_only_session_items() -> None:
    for fields in ({"dedupe_key": "k"}, {"source_id": "1"}, {}):
        assert ident(session="s1", **fields) == ident(**fields)
        assert ident(scope="global", session="s1", **fields) == ident(scope="global", **fields)
