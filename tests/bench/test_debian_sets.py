"""bench/debian_sets.py: Debian Translation files parsed into known-item BEIR sets."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("debian_sets", BENCH / "debian_sets.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["debian_sets"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


TRANSLATION = """\
Package: alpha
Description-md5: 0123
Description-de: Werkzeug für Alphas
 Alpha liest Dateien
 und schreibt sie.
 .
 Ein zweiter Absatz.

Package: alpha-doc
Description-md5: 4567
Description-de: Werkzeug für Alphas
 Die Dokumentation zu Alpha.

Package: beta
Description-md5: 89ab
Description-de: Ein Betaprogramm
 Beta rechnet.

Package: nolong
Description-md5: cdef
Description-de: nur eine Zeile

Package: japanese
Description-md5: 0000
Description-ja: 日本語のツール
 これは日本
 語の説明です。
 Latin words
 wrap with a space.
"""


def test_parse_reads_synopsis_and_long_description_of_the_language() -> None:
    found = {d.package: d for d in _module().parse(TRANSLATION, "de")}
    # a stanza with no long description, and one in another language, are left out
    assert set(found) == {"alpha", "alpha-doc", "beta"}
    assert found["alpha"].synopsis == "Werkzeug für Alphas"
    assert found["alpha"].long == "Alpha liest Dateien und schreibt sie.\n\nEin zweiter Absatz."


def test_wrapped_cjk_lines_join_without_a_space() -> None:
    (found,) = _module().parse(TRANSLATION, "ja")
    assert found.long == "これは日本語の説明です。 Latin words wrap with a space."


def test_build_writes_a_judged_beir_set(tmp_path: Path) -> None:
    module = _module()
    corpus, queries, relevant = module.build(list(module.parse(TRANSLATION, "de")), 10, 10)
    assert sorted(corpus.values()) == sorted(
        [
            "Alpha liest Dateien und schreibt sie.\n\nEin zweiter Absatz.",
            "Die Dokumentation zu Alpha.",
            "Beta rechnet.",
        ]
    )
    # one query per distinct synopsis; a shared synopsis is relevant to both packages
    by_text = {text: relevant[qid] for qid, text in queries.items()}
    assert len(by_text["Werkzeug für Alphas"]) == 2
    assert [corpus[d] for d in by_text["Ein Betaprogramm"]] == ["Beta rechnet."]
    module.write(tmp_path, corpus, queries, relevant)
    rows = [json.loads(line) for line in (tmp_path / "corpus.jsonl").open(encoding="utf-8")]
    assert {r["_id"] for r in rows} == set(corpus)
    lines = (tmp_path / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines) == 1 + 3


def test_build_caps_documents_and_queries() -> None:
    module = _module()
    corpus, queries, relevant = module.build(list(module.parse(TRANSLATION, "de")), 2, 1)
    assert len(corpus) == 2 and len(queries) == 1
    assert all(d in corpus for docs in relevant.values() for d in docs)
