"""GET /v1/items/{id}/original over real HTTP: bytes, headers, and who may read them."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

ANA = "ana-token-0123456789"
BO = "bo-token-0123456789"
CONFIG = {
    "namespace": "ana",
    "tokens": [{"name": "ana", "token": ANA}, {"name": "bo", "token": BO, "namespace": "bo"}],
}
Serve = Callable[[Any], AbstractContextManager[str]]


@pytest.fixture
def served(tmp_path: Any, serve: Serve) -> Iterator[tuple[trove.Store, str]]:
    kb = trove.open(tmp_path / "kb.db", embedder=None)
    with kb, serve(create_app(kb, ServerConfig.from_dict(CONFIG))) as url:
        yield kb, url


def get(url: str, path: str, token: str = ANA) -> httpx.Response:
    return httpx.get(url + path, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def test_original_is_streamed_with_type_and_disposition(served: tuple[trove.Store, str]) -> None:
    kb, url = served
    data = bytes(range(256)) * 5000  # > one piece
    doc_id = kb.add("Vertrag", namespace="ana", original=data, original_name="Vertrag März.pdf")
    response = get(url, f"/v1/items/{doc_id}/original")
    assert response.status_code == 200
    assert response.content == data
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-length"] == str(len(data))
    assert response.headers["x-content-type-options"] == "nosniff"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="Vertrag M_rz.pdf"')
    assert "filename*=UTF-8''Vertrag%20M%C3%A4rz.pdf" in disposition


def test_original_follows_the_reading_rules(served: tuple[trove.Store, str]) -> None:
    kb, url = served
    doc_id = kb.add("ana's", namespace="ana", original=b"<p>x</p>", original_name="x.html")
    assert get(url, f"/v1/items/{doc_id}/original", BO).status_code == 404  # not bo's
    plain = kb.add("no original", namespace="ana")
    response = get(url, f"/v1/items/{plain}/original")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    kb.delete(doc_id)
    assert get(url, f"/v1/items/{doc_id}/original").status_code == 404


@pytest.mark.parametrize("kind", ["text/h中ml", "text/plain\x00", "text/html\r\nSet-Cookie: x=1"])
def test_an_odd_media_type_is_refused_on_the_way_in(
    served: tuple[trove.Store, str], kind: str
) -> None:
    kb, _ = served
    with pytest.raises(trove.InvalidInput, match="is not a media type"):
        kb.add("odd", namespace="ana", original=b"x", original_name="x.bin", media_type=kind)


@pytest.mark.parametrize("kind", ["text/h中ml", "text/plain\x00", "text/html\r\nSet-Cookie: x=1"])
def test_an_odd_stored_original_is_served_safely(
    served: tuple[trove.Store, str], kind: str
) -> None:
    # A store written before media types and names were checked may hold anything.
    kb, url = served
    doc_id = kb.add("odd", namespace="ana")
    name = 'a\r\nSet-Cookie: x=1\x00"中.txt'
    kb.backend.put_original(
        doc_id, hashlib.sha256(b"x").hexdigest(), 1, io.BytesIO(b"x"), name, kind
    )
    response = get(url, f"/v1/items/{doc_id}/original")
    assert response.status_code == 200 and response.content == b"x"
    assert response.headers["content-type"] == "application/octet-stream"
    assert "set-cookie" not in response.headers
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="a__Set-Cookie: x=1___.txt"')
    assert "filename*=UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1%00%22%E4%B8%AD.txt" in disposition
