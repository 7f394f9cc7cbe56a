"""HTML (main text, title, canonical url) and PDF (text per page, page of a hit)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import trove
from helpers.ingest_samples import write_pdf
from trove.ingest.readers import page_at, pages_of

PAGE = """<!doctype html><html><head><title>Cache decision | Team wiki</title>
<link rel="canonical" href="https://wiki.example.com/cache-decision">
<script>var tracking = "trackingcode";</script><style>body { color: red }</style></head>
<body><header><nav><a href="/">Home</a> <a href="/about">Aboutpage</a></nav></header>
<main><article><h1>Why we dropped Redis</h1>
<p>We measured the cache hit rate for three weeks and kept the cache in process.</p>
<p>Redis added a network hop to every request we served.</p>
<ul><li>latency p99 down by twelve milliseconds</li><li>one less service to run</li></ul>
</article></main>
<footer>Copyright 2026 Example Corp, privacypolicy</footer>
<script>console.log("scriptnoise")</script></body></html>
"""


def only(kb: trove.Store) -> trove.Document:
    docs = [kb.get(doc_id) for _, doc_id, _, _ in kb.iter_source("default", "vault")]
    assert len(docs) == 1 and docs[0] is not None
    return docs[0]


def test_html_keeps_the_main_text_title_and_canonical_url(store: trove.Store, vault: Path) -> None:
    (vault / "cache.html").write_text(PAGE, encoding="utf-8")
    assert store.ingest(vault).added == 1
    page = only(store)
    assert (page.title, page.doc_type) == ("Why we dropped Redis", "html")
    assert page.url == "https://wiki.example.com/cache-decision"
    assert "network hop" in page.text and "twelve milliseconds" in page.text
    for noise in ("trackingcode", "scriptnoise", "color: red", "Aboutpage", "privacypolicy"):
        assert noise not in page.text, noise


def test_html_that_is_only_scripts_is_skipped(store: trove.Store, vault: Path) -> None:
    (vault / "app.html").write_text(
        "<html><head><script>var a = 1;</script></head><body><script>render()</script>"
        "<noscript>Please enable JavaScript</noscript><div id=root></div></body></html>",
        encoding="utf-8",
    )
    (vault / "empty.htm").write_bytes(b"")
    report = store.ingest(vault)
    assert report.added == 0
    assert dict(report.skipped) == {
        "app.html": "no text (only scripts or markup)",
        "empty.htm": "empty HTML file",
    }


def test_html_without_the_extra_is_skipped_with_the_install_hint(
    store: trove.Store, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # import fails
    (vault / "page.html").write_text(PAGE, encoding="utf-8")
    (vault / "note.md").write_text("still stored", encoding="utf-8")
    report = store.ingest(vault)
    assert report.added == 1
    assert "pip install 'trove[html]'" in dict(report.skipped)["page.html"]


def test_pdf_text_per_page_and_the_page_of_a_hit(store: trove.Store, vault: Path) -> None:
    pages = [
        f"Page {n} is about {topic}. " * 30
        for n, topic in enumerate(["kafka", "postgres", "zeppelin"], 1)
    ]
    write_pdf(vault / "report.pdf", pages, title="Quarterly report", author="Ana Lima")
    assert store.ingest(vault).added == 1
    pdf = only(store)
    assert (pdf.title, pdf.author, pdf.doc_type) == ("Quarterly report", "Ana Lima", "pdf")
    assert pdf.metadata["pages"] == 3 and pdf.timestamp
    hit = store.search("zeppelin")[0]
    pages = pages_of(hit.metadata, hit.chunk.start, hit.chunk.end)
    assert pages is not None and pages[-1] == 3  # a chunk may start on the page before
    assert page_at(pdf.metadata, pdf.text.index("zeppelin")) == 3
    assert page_at(pdf.metadata, pdf.text.index("postgres")) == 2
    assert page_at(pdf.metadata, 0) == 1
    assert page_at({}, 0) is None and pages_of({}, 0, 5) is None


def test_pdf_without_text_layer_is_skipped_and_a_corrupt_one_fails(
    store: trove.Store, vault: Path
) -> None:
    write_pdf(vault / "scan.pdf", ["", ""], text=False)
    good = write_pdf(vault / "good.pdf", ["readable words"]).read_bytes()
    (vault / "truncated.pdf").write_bytes(good[: len(good) // 2])
    (vault / "zero.pdf").write_bytes(b"")
    report = store.ingest(vault)
    assert report.added == 1
    assert dict(report.skipped) == {"scan.pdf": "no text layer (a scanned PDF?); nothing to store"}
    failed = dict(report.failed)
    assert set(failed) == {"truncated.pdf", "zero.pdf"}
    assert all(reason.startswith("corrupt PDF") for reason in failed.values())
