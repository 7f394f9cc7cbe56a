"""Originals in a JSONL export: after the edges, each document's original as records of
at most 1 MiB of base64 each, so neither export nor import holds a large one whole::

    {"kind": "original", "doc_id": ..., "name": ..., "media_type": ..., "sha256": ...,
     "size": ..., "piece": 0, "data": "<base64>"}

Import gathers the pieces in a temporary file and stores the original once the last
arrives and its SHA-256 matches (a damaged export is refused, not stored).
"""

from __future__ import annotations

import base64
import hashlib
import json
import tempfile
from collections.abc import Iterable
from typing import IO, Any

from trove.errors import InvalidInput
from trove.originals import PIECE, described


def export_originals(backend: Any, doc_ids: Iterable[str], out: IO[str]) -> int:
    count = 0
    for doc_id in doc_ids:
        found = backend.original_info(doc_id)
        if found is None:
            continue
        head = {
            "kind": "original",
            "doc_id": doc_id,
            "name": found.name,
            "media_type": found.media_type,
            "sha256": found.sha256,
            "size": found.size,
        }
        number = 0
        for piece in backend.original_pieces(found.sha256, PIECE):
            data = base64.b64encode(piece).decode()
            out.write(json.dumps({**head, "piece": number, "data": data}, sort_keys=True) + "\n")
            number += 1
        if number == 0:  # an empty original is one empty piece
            out.write(json.dumps({**head, "piece": 0, "data": ""}, sort_keys=True) + "\n")
        count += 1
    return count


class OriginalSink:
    """Receives ``original`` records in order and stores each finished original."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.count = 0
        self._current: dict[str, Any] | None = None
        self._spool: Any = None
        self._hash: Any = None
        self._got = 0

    def add(self, record: dict[str, Any]) -> None:
        try:
            doc_id, size, piece = str(record["doc_id"]), int(record["size"]), int(record["piece"])
            data = base64.b64decode(str(record["data"]), validate=True)
        except (KeyError, TypeError, ValueError):
            raise InvalidInput("an original record needs doc_id, size, piece and data") from None
        if piece == 0:
            name, kind = described(
                str(record.get("name") or ""), str(record.get("media_type") or "")
            )
            self._start({**record, "name": name, "media_type": kind})
        elif self._current is None or self._current["doc_id"] != doc_id:
            raise InvalidInput(f"original of {doc_id}: piece {piece} without its first piece")
        self._spool.write(data)
        self._hash.update(data)
        self._got += len(data)
        if self._got >= size:
            self._finish()

    def _start(self, record: dict[str, Any]) -> None:
        if self._spool is not None:
            self._spool.close()
        self._current = record
        # Closed in _finish (or by the next original's start): it spans many records.
        self._spool = tempfile.SpooledTemporaryFile(max_size=PIECE * 8)  # noqa: SIM115
        self._hash = hashlib.sha256()
        self._got = 0

    def _finish(self) -> None:
        record, spool = self._current, self._spool
        assert record is not None
        self._current = self._spool = None
        with spool:
            if self._hash.hexdigest() != record.get("sha256") or self._got != record["size"]:
                raise InvalidInput(f"original of {record['doc_id']}: damaged (hash differs)")
            if not self.backend.get_documents([record["doc_id"]]):
                return  # its document was not imported
            spool.seek(0)
            self.backend.put_original(
                str(record["doc_id"]),
                str(record["sha256"]),
                int(record["size"]),
                spool,
                record["name"],
                record["media_type"],
            )
        self.count += 1
