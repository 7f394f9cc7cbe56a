"""Hostile exports: importers that loop, escape the export folder, or crash on deep JSON;
trove exports that hold what `add` refuses."""

from __future__ import annotations

import io
import json
import math
import threading
from pathlib import Path
from typing import Any

import export_fixtures as fx
import pytest
from click.testing import CliRunner

import trove
from trove import InvalidInput
from trove.interfaces.cli import cli
from trove.transfer.importers import run_importer
from trove.transfer.jsonl import export_jsonl, import_jsonl

DEEP = "[" * 200_000 + "]" * 200_000


def _within(seconds: float, work: Any) -> Any:
    """``work()``'s result, failing the test when it runs past ``seconds`` (a daemon
    thread: a loop that never ends cannot hold up the run)."""
    found: dict[str, Any] = {}

    def run() -> None:
        try:
            found["value"] = work()
        except BaseException as exc:  # handed to the test
            found["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in found:
        raise found["error"]
    return found["value"]


def test_chatgpt_a_cycle_of_children_ends(tmp_path: Path) -> None:
    node = {"role": "user"}
    mapping = {
        "a": {"id": "a", "parent": None, "children": ["b"], "message": None},
        "b": {
            "id": "b",
            "parent": "a",
            "children": ["a"],
            "message": {"id": "b", "author": node, "content": {"parts": ["hello loop"]}},
        },
    }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"id": "c1", "title": "loop", "mapping": mapping}]))
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        report = _within(20, lambda: run_importer(kb, "chatgpt", path))
        assert report.added == 1


@pytest.mark.parametrize("name", ["../outside", "ABSOLUTE", "link"])
def test_slack_channel_names_stay_inside_the_export(tmp_path: Path, name: str) -> None:
    root = fx.slack(tmp_path / "export")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "2026-01-01.json").write_text(json.dumps([{"ts": "1.0", "text": "secret"}]))
    if name == "ABSOLUTE":
        name = str(outside)
    elif name == "link":
        (root / "link").symlink_to(outside)
    (root / "channels.json").write_text(json.dumps([{"id": "C9", "name": name}]))
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="not a channel folder inside the export"):
            run_importer(kb, "slack", root)
        assert not kb.search("secret", mode="keyword")


@pytest.mark.parametrize("kind", ["chatgpt", "claude", "mcp-memory", "slack"])
def test_deeply_nested_json_is_an_invalid_input(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "deep.json"
    if kind == "slack":
        path = fx.slack(tmp_path / "export") / "channels.json"
    path.write_text(DEEP)
    with trove.open(tmp_path / "kb.db", embedder=None) as kb, pytest.raises(InvalidInput):
        run_importer(kb, kind, path.parent if kind == "slack" else path)


def test_a_deep_line_in_an_export_is_an_invalid_input(tmp_path: Path) -> None:
    header = json.dumps({"kind": "header", "format": "trove-export", "version": 1})
    deep = r"line 2 .* nested too deeply"
    with (
        trove.open(tmp_path / "kb.db", embedder=None) as kb,
        pytest.raises(InvalidInput, match=deep),
    ):
        import_jsonl(kb, io.StringIO(f"{header}\n{DEEP}\n"))


def test_ingest_skips_a_deep_jsonl_and_stores_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deep.jsonl").write_text(DEEP + "\n")
    (folder / "good.md").write_text("# Good\n\nA note about lighthouses.")
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        report = kb.ingest(folder)
        assert kb.search("lighthouses", mode="keyword")
    assert any("nested too deeply" in why for _, why in report.failed), report.failed


def test_import_of_a_zip_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 8)
    db = ["--db", str(tmp_path / "kb.db"), "--embedder", "none"]
    result = CliRunner().invoke(cli, [*db, "import", str(path)])
    assert result.exit_code == 1 and "is a ZIP archive: unzip it" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    result = CliRunner().invoke(cli, [*db, "import", str(path), "--from", "trove"])
    assert result.exit_code == 1 and "not UTF-8" in result.output


def _export(tmp_path: Path) -> list[dict[str, Any]]:
    with trove.open(tmp_path / "src.db", embedder=None) as kb:
        kb.add("\n\n".join(f"Paragraph {i} about parks." for i in range(200)), source="s")
        out = io.StringIO()
        export_jsonl(kb, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"chunks": [[0, 0, 10, ""]]}, "do not cover its text"),
        ({"chunks": []}, "do not cover its text"),
        ({"chunks": "dup"}, "chunk 1 is numbered 0"),
        ({"scope": "session", "session_id": ""}, "needs a session"),
        ({"importance": math.nan}, "importance must be a number"),
        ({"metadata": _nested(40)}, "nested deeper than 32"),
        ({"source": "a\x00b"}, "source must not contain a NUL"),
        ({"namespace": ""}, "namespace must not be empty"),
        ({"created_at": None}, "created_at is missing"),
        ({"author_tier": "root"}, "author_tier must be one of"),
    ],
)
def test_import_refuses_what_add_refuses(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    header, record = _export(tmp_path)
    if change.get("chunks") == "dup":
        change = {"chunks": [record["chunks"][0], record["chunks"][0], *record["chunks"][1:]]}
    if "chunks" in change:
        record["chunks"] = change["chunks"]
    else:
        record["document"].update(change)
    text = "\n".join(json.dumps(r) for r in (header, record))
    with trove.open(tmp_path / "dst.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match=f"line 2 of the export: .*{message}"):
            import_jsonl(kb, io.StringIO(text))
        assert kb.stats().documents == 0


def test_add_refuses_nul_in_a_key(tmp_path: Path) -> None:
    # NUL joins the parts of a natural key into an id: inside one it made two keys one id.
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        for field in ("namespace", "source", "source_id", "dedupe_key"):
            with pytest.raises(InvalidInput, match="NUL"):
                kb.add("x", **{field: "a\x00b"})


def _with_original(tmp_path: Path, **change: str) -> str:
    with trove.open(tmp_path / "src.db", embedder=None) as kb:
        kb.add("a note with its file", source="s", original=b"data", original_name="n.txt")
        out = io.StringIO()
        export_jsonl(kb, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    records[-1].update(change)
    return "\n".join(json.dumps(r) for r in records)


def test_import_refuses_an_odd_media_type(tmp_path: Path) -> None:
    text = _with_original(tmp_path, media_type="text/h中ml")
    with trove.open(tmp_path / "dst.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="is not a media type"):
            import_jsonl(kb, io.StringIO(text))
        assert kb.backend.original_hashes() == {}


def test_import_makes_an_original_name_safe(tmp_path: Path) -> None:
    text = _with_original(tmp_path, name="../../etc/x\r\n.txt")
    with trove.open(tmp_path / "dst.db", embedder=None) as kb:
        import_jsonl(kb, io.StringIO(text))
        (doc,) = kb.list().items
        assert kb.original(doc.id).name == "x_.txt"
