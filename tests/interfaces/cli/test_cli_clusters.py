"""`trove cluster`: the cluster operations HTTP and MCP offer, for a person (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

import trove
from trove.interfaces.cli import cli


def _run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), "cluster", *args])


def test_a_cluster_is_made_read_changed_and_deleted(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        plan = kb.add("dig a second pond")
        why = kb.add("the herons ate the fish")
    made = _run(db, "create", "ponds", "--summary", "two ponds", "--member", plan, "--json")
    assert made.exit_code == 0, made.output
    cluster = json.loads(made.stdout)
    assert cluster["members"] == [plan] and cluster["rolling_summary"] == "two ponds"
    cid = cluster["id"]
    assert _run(db, "add", cid, why).exit_code == 0
    assert _run(db, "decide", cid, "net the old pond", "--author", "ana").exit_code == 0
    assert _run(db, "update", cid, "--entity", "herons").exit_code == 0
    shown = json.loads(_run(db, "get", cid, "--json").stdout)
    assert shown["members"] == [plan, why] and shown["key_entities"] == ["herons"]
    assert [e["text"] for e in shown["decision_log"]] == ["net the old pond"]
    text = _run(db, "get", cid).stdout
    assert "net the old pond" in text and "(ana)" in text and why in text
    assert _run(db, "remove", cid, plan).exit_code == 0
    assert _run(db, "list").stdout == f"{cid}\tponds\t1 members\n"
    with trove.open(db, embedder=None) as kb:  # a search within the cluster
        assert [h.doc_id for h in kb.search("herons fish", cluster=cid)] == [why]
    assert json.loads(_run(db, "delete", cid, "--json").stdout)["deleted"] is True
    assert _run(db, "list", "--json").stdout.strip() == "[]"


def test_bad_cluster_commands_fail_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kb.add("a note")
    missing = _run(db, "get", "nope")
    assert missing.exit_code == 1 and "Error: not_found: no cluster" in missing.output
    unknown = _run(db, "create", "c", "--member", "no-such-doc")
    assert unknown.exit_code == 1 and "not_found" in unknown.output
    assert _run(db, "list", "--json").stdout.strip() == "[]"  # nothing was made
    assert _run(db, "update", "x").exit_code == 2  # nothing to change: a usage error
    nostore = CliRunner().invoke(cli, ["--db", str(tmp_path / "none.db"), "cluster", "list"])
    assert nostore.exit_code == 1 and not (tmp_path / "none.db").exists()
