"""The hash embedder, the script names and the normalization every embedder shares."""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata

import numpy as np
import pytest

from trove.embedders import HashEmbedder, scripts_of
from trove.embedders.base import SCRIPTS, l2_normalize


def test_rows_are_unit_float32_and_empty_text_is_a_zero_row() -> None:
    vectors = HashEmbedder(64).embed(["hello world", "", "?!", "你好世界"])
    assert vectors.shape == (4, 64)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 3]], axis=1), 1.0)
    assert not vectors[[1, 2]].any()
    assert HashEmbedder(64).embed([]).shape == (0, 64)


def test_shared_words_and_fragments_raise_the_cosine() -> None:
    base, fragment, other = HashEmbedder().embed(
        ["searching the archive", "archives searched", "lunch menu today"]
    )
    assert base @ fragment > base @ other


def test_vectors_are_the_same_in_another_process() -> None:
    code = (
        "from trove.embedders import HashEmbedder;"
        " print(HashEmbedder(32).embed(['Stable?'])[0].tolist())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    assert np.allclose(eval(out.stdout), HashEmbedder(32).embed(["Stable?"])[0])


def test_the_dimension_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        HashEmbedder(0)


def test_l2_normalize_keeps_zero_rows_zero() -> None:
    rows = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert rows.dtype == np.float32
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 0.0]])
    assert not np.isnan(rows).any()


@pytest.mark.parametrize(
    ("text", "scripts"),
    [
        ("Hello, café!", {"latin"}),
        ("ＡＢＣ", {"latin"}),
        ("你好", {"cjk"}),
        ("こんにちは カタカナ", {"cjk"}),
        ("안녕하세요", {"cjk"}),
        ("Привет", {"cyrillic"}),
        ("مرحبا", {"arabic"}),
        ("שלום", {"hebrew"}),
        ("Γειά", {"greek"}),
        ("สวัสดี", {"thai"}),
        ("नमस्ते", {"devanagari"}),
        ("ሰላም", {"other"}),
        ("Tokyo 東京", {"latin", "cjk"}),
        ("123 !? 🙂", set()),
    ],
)
def test_scripts_of(text: str, scripts: set[str]) -> None:
    assert scripts_of(text) == scripts
    assert scripts_of(text) <= SCRIPTS


@pytest.mark.parametrize(
    ("text", "scripts"),
    [
        ("Mice lacking IFN-γ resist myocarditis", {"latin"}),  # 1 of 30 letters is Greek
        ("TNF-α", {"latin", "greek"}),  # a quarter
        ("iPhone 价格", {"latin", "cjk"}),
        ("北京 Beijing capital airport", {"latin"}),
        ("", set()),
    ],
)
def test_scripts_of_with_a_minimum_share(text: str, scripts: set[str]) -> None:
    assert scripts_of(text, min_share=0.2) == scripts


@pytest.mark.parametrize("code", range(128))
def test_scripts_of_ascii_text_reads_each_character_as_unicode_does(code: int) -> None:
    # ASCII text skips the per-character lookups: its answer must be theirs.
    char = chr(code)
    expected = {"latin"} if unicodedata.category(char).startswith("L") else set()
    assert scripts_of(char) == expected
    assert scripts_of(f"{char} 1 2", min_share=0.2) == expected


def test_a_probed_dimension_is_learned_once_and_can_be_declared() -> None:
    from trove.embedders.base import ProbedDimension

    class Lazy(ProbedDimension):
        model_id = "lazy"
        calls = 0

        def embed(self, texts: object) -> np.ndarray:
            Lazy.calls += 1
            return HashEmbedder(24).embed(list(texts))  # type: ignore[call-overload]

    lazy = Lazy()
    assert Lazy.calls == 0  # nothing is embedded until the dimension is asked for
    assert lazy.dimension == 24 and lazy.dimension == 24
    assert Lazy.calls == 1
    lazy.dimension = 12
    assert lazy.dimension == 12
