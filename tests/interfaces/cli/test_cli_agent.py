"""The agent loop's commands: events, search --variant/--expand, settings, enrich, probe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import trove
from helpers.llm_server import FakeLLM
from trove.interfaces.cli import cli

TROVE = str(Path(sys.executable).with_name("trove"))


def run(db: Path, *args: str, code: int = 0, **env: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "none", *args], env=env)
    assert result.exit_code == code, result.output
    return result.output


def test_events_follow_prints_json_lines_of_other_processes_writes(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    run(db, "add", "before the follower started")
    # From the last logged event on, however long the follower takes to start (a busy
    # machine): earlier events are not printed, later ones are not missed.
    [seen] = [json.loads(line)["seq"] for line in run(db, "events").splitlines()]
    follower = subprocess.Popen(
        [TROVE, "--db", str(db), "--embedder", "none", "events", "--follow", "--after", str(seen)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        with trove.open(db, embedder=None) as kb:
            doc = kb.add("hello", source="chat", doc_type="note")
            kb.delete(doc)
        assert follower.stdout is not None
        lines = [json.loads(follower.stdout.readline()) for _ in range(2)]
    finally:
        follower.terminate()
        follower.wait(timeout=10)
    assert [(e["kind"], e["source"], e["doc_type"]) for e in lines] == [
        ("written", "chat", "note"),
        ("deleted", "chat", "note"),
    ]
    logged = run(db, "events", "--kind", "deleted").splitlines()
    assert [json.loads(line)["kind"] for line in logged] == ["deleted"]


def test_search_variants_and_expand_on_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    run(db, "add", "The birthday party is in May", "--source-id", "b")
    assert json.loads(run(db, "search", "celebration", "--json")) == []
    found = json.loads(
        run(db, "search", "celebration", "--variant", "birthday", "--json", "--all")
    )
    assert [h["source_id"] for h in found] == ["b"]
    assert "found by 'birthday'" in run(
        db, "search", "celebration", "--variant", "birthday", "--explain", "--all"
    )
    degraded = CliRunner().invoke(
        cli, ["--db", str(db), "--embedder", "none", "search", "birthday", "--expand", "llm"]
    )
    assert degraded.exit_code == 0 and "not expanded" in degraded.stderr


def test_settings_enrich_and_probe(tmp_path: Path, fake_llm: FakeLLM) -> None:
    db = tmp_path / "kb.db"
    assert json.loads(run(db, "settings", "--json")) == {"expand": "off", "enrich": "off"}
    assert "expand = llm" in run(db, "settings", "expand=llm")
    assert "must be one of" in run(db, "settings", "expand=maybe", code=1)
    run(db, "add", "The wifi password is on the fridge", "--source-id", "wifi")
    assert "no LLM configured" in run(db, "enrich", "--missing", code=1, TROVE_LLM="")
    env = {"TROVE_LLM": "openai:tiny", "TROVE_LLM_BASE_URL": fake_llm.url}
    assert json.loads(run(db, "enrich", "--missing", "--json", **env)) == {
        "enriched": 1,
        "failed": 0,
    }
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"query": "wifi password", "expected_doc": "wifi"}\n')
    out = run(db, "probe", "--pairs", str(pairs), "--save")
    assert "INFO recall: 1/1" in out and out.count("PASS") == 4
    stored = json.loads(run(db, "probe", "--json"))
    assert stored["pairs"] == 1 and stored["recall"]["recall@1"] == 1.0
