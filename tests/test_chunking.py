"""Chunking: Markdown sections with heading paths, bounded windows with overlap."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from trove.chunking import chunk_text


def spans(text: str, **kw: int) -> list[str]:
    return [text[c.start : c.end] for c in chunk_text(text, **kw)]


def test_markdown_splits_at_headings_with_paths() -> None:
    text = "intro\n# A\nalpha\n## B\nbeta\n## C\ngamma\n# D\ndelta\n"
    chunks = chunk_text(text)
    assert [c.heading for c in chunks] == ["", "A", "A > B", "A > C", "D"]
    assert [text[c.start : c.end].split("\n")[0] for c in chunks] == [
        "intro",
        "# A",
        "## B",
        "## C",
        "# D",
    ]


def test_heading_only_section_merges_forward() -> None:
    text = "# Title\n## Part\nbody text\n"
    chunks = chunk_text(text)
    assert len(chunks) == 1
    assert chunks[0].heading == "Title > Part" and chunks[0].start == 0


def test_hashes_inside_code_fences_are_not_headings() -> None:
    text = "# Real\n```sh\n# just a comment\n```\nafter\n"
    chunks = chunk_text(text)
    assert [c.heading for c in chunks] == ["Real"]


def test_long_text_windows_are_bounded_and_overlap() -> None:
    text = " ".join(f"word{i}." for i in range(3000))
    chunks = chunk_text(text, max_chars=500, overlap=100)
    assert all(c.end - c.start <= 500 for c in chunks)
    assert all(b.start < a.end for a, b in itertools.pairwise(chunks))  # overlap
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_windows_prefer_paragraph_breaks() -> None:
    paragraph = "x" * 300
    text = "\n\n".join([paragraph] * 6)
    for piece in spans(text, max_chars=700, overlap=0):
        assert piece.startswith("x") and piece.rstrip("\n").endswith("x")


def test_cjk_without_spaces_is_cut_at_sentence_ends() -> None:
    text = "这是一个句子。" * 300
    pieces = spans(text, max_chars=200, overlap=20)
    assert all(len(p) <= 200 for p in pieces)
    assert all(p.endswith("。") for p in pieces[:-1])


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\t\n") == []


@given(st.text(alphabet=st.sampled_from(list("ab #\n`~。x")), max_size=3000))
def test_every_visible_character_is_in_some_chunk(text: str) -> None:
    chunks = chunk_text(text, max_chars=50, overlap=10)
    covered = [False] * len(text)
    for c in chunks:
        assert 0 <= c.start < c.end <= len(text)
        assert c.end - c.start <= 50
        for i in range(c.start, c.end):
            covered[i] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
