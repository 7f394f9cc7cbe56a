"""``trove get ID --original [-o FILE|FOLDER]``: a document's kept original, streamed."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from trove.interfaces.cli.output import emit
from trove.interfaces.cli.root import open_store


def get_original(ctx: click.Context, doc_id: str, output: str | None, as_json: bool) -> None:
    """Write the original to stdout, or to ``output`` (a file, or a folder in which a
    sanitised name is used, never a path outside it). Written to a temporary file first,
    so an interrupted copy leaves no half file under the final name."""
    import tempfile  # here, as the next: only this command needs them (cold start)

    from trove import originals

    with open_store(ctx, create=False) as kb:
        found = kb.original_info(doc_id)
        if output is None:
            originals.write_to(kb, found, sys.stdout.buffer)
            sys.stdout.flush()
            return
        target = originals.output_path(output, found)
        handle, temp = tempfile.mkstemp(dir=target.parent, prefix=".trove-")
        try:
            with os.fdopen(handle, "wb") as sink:
                written = originals.write_to(kb, found, sink)
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
    if as_json:
        emit({"path": str(target), "bytes": written, "media_type": found.media_type})
    else:
        click.echo(f"wrote {written} bytes to {target}", err=True)
