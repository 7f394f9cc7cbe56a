"""`trove export` / `trove import`: lossless JSONL, byte-exact across backends."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import trove
from trove import EmbedderMismatch, InvalidInput
from trove.interfaces.cli import cli
from trove.transfer.jsonl import export_jsonl, import_jsonl


def fill(target: str | Path) -> dict[str, str]:
    with trove.open(target, embedder="hash:64") as kb:
        ids = {
            "cats": kb.add(
                "# Cats\n\nThe cat sat on the warm mat. 猫が好き。",
                source="notes",
                source_id="cats.md",
                title="Cats",
                author="ana",
                participants=["ana", "bo"],
                timestamp="2026-11-03T09:00:00.123456Z",
                url="https://example.org/cats",
                thread_id="t1",
                channel="pets",
                tags=["animal", "pet"],
                metadata={"z": 1, "a": {"nested": [1, 2.5, None]}, "ü": "ß"},
                importance=0.75,
            ),
            "dogs": kb.add("Dogs bark at the postman.", source="notes", source_id="dogs.md"),
            "long": kb.add("\n\n".join(f"Paragraph {i} about parks." for i in range(120))),
            "memo": kb.add("session memo", scope="session", session="s1", dedupe_key="k"),
            "other": kb.add("another namespace", namespace="team", expires_at="2999-01-01"),
        }
        kb.link(ids["cats"], ids["dogs"], "relates_to", 0.5)
        kb.link(ids["dogs"], ids["long"], "supersedes")
        ids["gone"] = kb.add("a deleted note", source="notes", source_id="gone.md")
        kb.link(ids["gone"], ids["cats"])
        kb.delete(ids["gone"])
        ids["expired"] = kb.add("an expired note", expires_at="2000-01-01")
    return ids


def dump(target: str | Path, **options: bool) -> str:
    out = io.StringIO()
    with trove.open(target, embedder="hash:64") as kb:
        export_jsonl(kb, out, **options)
    return out.getvalue()


def _vectors_apart(a: str, b: str) -> float:
    """The largest difference of two exports' vectors; every other byte is the same."""
    apart = 0.0
    for line_a, line_b in zip(a.splitlines(), b.splitlines(), strict=True):
        ra, rb = json.loads(line_a), json.loads(line_b)
        va, vb = ra.pop("vectors", None), rb.pop("vectors", None)
        assert ra == rb and type(va) is type(vb)
        if not isinstance(va, list) or not isinstance(vb, list):
            assert va == vb
            continue
        for x, y in zip(va, vb, strict=True):
            if x is None or y is None:
                assert x is y
                continue
            fx, fy = (np.frombuffer(base64.b64decode(v), "<f4") for v in (x, y))
            apart = max(apart, float(np.abs(fx - fy).max()))
    return apart


def load(target: str | Path, text: str) -> dict[str, int]:
    with trove.open(target, embedder="hash:64") as kb:
        return import_jsonl(kb, io.StringIO(text)).to_dict()


@pytest.mark.parametrize("route", ["sqlite-sqlite", "sqlite-postgres", "postgres-sqlite"])
def test_round_trip_is_byte_exact(tmp_path: Path, pg_target: str, route: str) -> None:
    first, second = route.split("-")
    src = pg_target if first == "postgres" else tmp_path / "src.db"
    dst = pg_target if second == "postgres" else tmp_path / "dst.db"
    ids = fill(src)
    exported = dump(src, vectors=True)
    assert "chunk_vec" not in exported  # a backend's table name is its own business
    report = load(dst, exported)
    assert report["added"] == 7 and report["edges"] == 3 and report["embedded"] == 0
    assert report["vectors"] > 0
    if second == "sqlite" and first != "sqlite":
        # SQLite keeps a vector as int16 codes (schema 15): float32 vectors from another
        # backend read back within 2e-5 of the row's largest coordinate, and then stay put.
        assert _vectors_apart(dump(dst, vectors=True), exported) < 2e-5
        again = tmp_path / "again.db"
        load(again, dump(dst, vectors=True))
        assert dump(again, vectors=True) == dump(dst, vectors=True)
    else:
        assert dump(dst, vectors=True) == exported
    assert dump(dst) == dump(src)
    with trove.open(src, embedder="hash:64") as a, trove.open(dst, embedder="hash:64") as b:
        for doc_id in ids.values():
            assert a.backend.get_document(doc_id) == b.backend.get_document(doc_id)
        for mode in ("keyword", "semantic"):
            found = [h.doc_id for h in b.search("cat mat park", mode=mode)]
            assert found == [h.doc_id for h in a.search("cat mat park", mode=mode)]
        assert b.get(ids["gone"]) is None and b.stats().deleted == 1


def test_export_holds_every_field_and_is_sorted(tmp_path: Path) -> None:
    ids = fill(tmp_path / "a.db")
    lines = [json.loads(line) for line in dump(tmp_path / "a.db").splitlines()]
    assert lines[0]["format"] == "trove-export" and lines[0]["vectors"] is False
    docs = [r["document"] for r in lines if r["kind"] == "document"]
    assert [d["id"] for d in docs] == sorted(d["id"] for d in docs)
    cats = next(d for d in docs if d["id"] == ids["cats"])
    assert set(cats) == set(trove.Document.__dataclass_fields__)
    assert cats["metadata"] == {"z": 1, "a": {"nested": [1, 2.5, None]}, "ü": "ß"}
    assert cats["importance"] == 0.75 and cats["timestamp"] == "2026-11-03T09:00:00.123456Z"
    edges = [r for r in lines if r["kind"] == "edge"]
    assert {(e["src"], e["dst"], e["type"]) for e in edges} == {
        (ids["cats"], ids["dogs"], "relates_to"),
        (ids["dogs"], ids["long"], "supersedes"),
        (ids["gone"], ids["cats"], "relates_to"),
    }


def test_tombstones_are_optional_and_their_edges_go_with_them(tmp_path: Path) -> None:
    ids = fill(tmp_path / "a.db")
    text = dump(tmp_path / "a.db", deleted=False)
    assert ids["gone"] not in text
    report = load(tmp_path / "b.db", text)
    assert report["added"] == 6 and report["edges"] == 2


def test_import_without_vectors_embeds_the_chunks(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    report = load(tmp_path / "b.db", dump(tmp_path / "a.db"))
    assert report["vectors"] == 0 and report["embedded"] > 0
    with trove.open(tmp_path / "b.db", embedder="hash:64") as kb:
        assert kb.stats().vectors == kb.stats().chunks


def test_import_upserts_and_never_rolls_back_a_newer_edit(tmp_path: Path) -> None:
    ids = fill(tmp_path / "a.db")
    fill(tmp_path / "c.db")  # an older copy, elsewhere
    old = dump(tmp_path / "a.db")
    assert load(tmp_path / "a.db", old)["unchanged"] == 7
    with trove.open(tmp_path / "a.db", embedder="hash:64") as kb:
        kb.update(ids["dogs"], text="Dogs now ignore the postman.")
    report = load(tmp_path / "a.db", old)
    assert report["kept_newer"] == 1 and report["unchanged"] == 6
    with trove.open(tmp_path / "a.db", embedder="hash:64") as kb:
        assert kb.get(ids["dogs"]).text == "Dogs now ignore the postman."  # type: ignore[union-attr]
    # The newer export wins over the older copy in another store.
    report = load(tmp_path / "c.db", dump(tmp_path / "a.db"))
    assert report["updated"] == 1
    with trove.open(tmp_path / "c.db", embedder="hash:64") as kb:
        assert kb.search("ignore", mode="keyword")[0].doc_id == ids["dogs"]


def test_vectors_of_another_embedder_are_refused(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    with trove.open(tmp_path / "b.db", embedder="hash:32") as kb:
        kb.add("made with another embedder")
        with pytest.raises(EmbedderMismatch):
            import_jsonl(kb, io.StringIO(dump(tmp_path / "a.db", vectors=True)))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "not a trove export"),
        ('{"format": "trove-export", "version": 9}\n', "version 9"),
        ('{"format": "trove-export", "version": 1}\nnope\n', "line 2"),
        ('{"format": "trove-export", "version": 1}\n{"kind": "x"}\n', "unknown record"),
    ],
)
def test_bad_exports_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with trove.open(tmp_path / "b.db", embedder=None) as kb, pytest.raises(InvalidInput) as err:
        import_jsonl(kb, io.StringIO(text))
    assert message in str(err.value)


def test_a_tampered_text_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    text = dump(tmp_path / "a.db").replace("Dogs bark", "Dogs purr")
    with trove.open(tmp_path / "b.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="content_hash"):
            import_jsonl(kb, io.StringIO(text))
        assert kb.stats().documents == 0


def test_cli_export_import(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    runner = CliRunner()
    out = tmp_path / "dump.jsonl"
    result = runner.invoke(cli, ["--db", str(tmp_path / "a.db"), "export", str(out)])
    assert result.exit_code == 0, result.output
    assert "7 documents" in result.output and "3 edges" in result.output
    args = ["--db", str(tmp_path / "b.db"), "--embedder", "hash:64", "import", str(out), "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] == 7
    result = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "export", "-"])
    assert result.output == out.read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "trove-export", "version": 1}\n{"kind": "x"}\n')
    result = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "import", str(bad)])
    assert result.exit_code == 1 and "unknown record kind 'x'" in result.output


@pytest.mark.parametrize(
    "change, message",
    [
        ({"importance": "high"}, "importance has the wrong type"),
        ({"tags": "one"}, "tags has the wrong type"),
        ({"timestamp": "yesterday"}, "not an ISO-8601 time"),
        ({"scope": "planet"}, "unknown scope"),
        ({"colour": "red"}, "unknown document field colour"),
    ],
)
def test_bad_documents_are_refused_and_nothing_is_written(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    fill(tmp_path / "a.db")
    lines = dump(tmp_path / "a.db").splitlines()
    record = json.loads(lines[1])
    record["document"].update(change)
    lines[1] = json.dumps(record)
    with trove.open(tmp_path / "b.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match=message):
            import_jsonl(kb, io.StringIO("\n".join(lines)))
        assert kb.stats().documents == 0


def test_a_vector_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    lines = dump(tmp_path / "a.db", vectors=True).splitlines()
    record = json.loads(lines[1])
    record["vectors"][0] = "AAAAAA=="  # one float
    lines[1] = json.dumps(record)
    with trove.open(tmp_path / "b.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="not 64-d"):
            import_jsonl(kb, io.StringIO("\n".join(lines)))
        assert kb.stats().documents == 0


def test_an_interrupted_import_resumes_into_the_same_vector_table(tmp_path: Path) -> None:
    fill(tmp_path / "a.db")
    text = dump(tmp_path / "a.db", vectors=True)
    lines = text.splitlines()
    broken = "\n".join([*lines[:3], '{"kind": "edge"}'])  # two documents, then a bad edge
    with trove.open(tmp_path / "b.db", embedder="hash:64") as kb:
        with pytest.raises(InvalidInput):
            import_jsonl(kb, io.StringIO(broken))
        pending = kb.backend.get_meta("restore.vectors")
        assert pending is not None and kb.backend.vector_lock() is None
        report = import_jsonl(kb, io.StringIO(text))
        assert report.added == 5 and report.unchanged == 2 and report.embedded == 0
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.table == json.loads(pending)["table"]
        assert kb.backend.get_meta("restore.vectors") is None
        assert kb.stats().vectors == kb.stats().chunks
    assert dump(tmp_path / "b.db", vectors=True) == text
