"""What a PostgreSQL search reads of its hits (``hit_details``), as SQL both its reads
share: the columns, and the join of each document's candidate passages. The hits' own
read (snippets.py) and the k-NN that reads them with its hits (vectors.py) use them."""

from __future__ import annotations

from trove.backends.rows import CHUNK_OF_C, HEADER_OF_D

# Read with document ``d`` and its candidate chunks ``c`` (passages_of): the header, the
# text's first characters (a parameter), each chunk.
SHOWN = f"{HEADER_OF_D}, left(d.text, %s), {CHUNK_OF_C}"


def passages_of(ranked: str) -> str:
    """The join of document ``d``'s candidate passages as ``c``, the chunk ``ranked``
    (a table alias with ``chunk_id``) ranked among them; takes passage.MAX_CHUNKS."""
    # A chunk replaced since it was ranked has no row: its document still counts. At most
    # MAX_CHUNKS chunks: none numbered past them (an index seek; a count per chunk row
    # made a 50 MB text's search quadratic).
    return (
        f"LEFT JOIN chunk c ON c.doc_id = d.id AND (c.id = {ranked}.chunk_id OR "
        "NOT EXISTS (SELECT 1 FROM chunk x WHERE x.doc_id = d.id AND x.idx >= %s))"
    )
