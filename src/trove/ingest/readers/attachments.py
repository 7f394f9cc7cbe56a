"""Mail attachments as documents of their own (issue 19).

An attachment whose type has a reader (PDF, HTML, text, Markdown, a nested message)
becomes a record keyed under its message (``<message key>/attachment-N``), with the
message's provenance (author, participants, timestamp, thread) and its subject in
metadata; the walk links it to the message with an ``attachment_of`` edge. One that
cannot be read is a failed record (the message is still stored); one with no reader
(a zip, an image) stays listed in the message's metadata only: archives are never
expanded. The file name from the mail is sanitised before it is used anywhere.
"""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from trove.ingest.readers.base import ReadOptions, Record, RecordError, Unreadable
from trove.originals import guess_type, safe_name

# Content types read when the file name says nothing (or there is none).
_BY_TYPE = {
    "application/pdf": ".pdf",
    "text/html": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "message/rfc822": ".eml",
}
_READABLE = frozenset(_BY_TYPE.values()) | {".htm", ".xhtml", ".markdown", ".text"}
# A message attached to a message attached to ...: read this deep, no deeper.
MAX_DEPTH = 3
_PROVENANCE = ("author", "participants", "timestamp", "thread_id", "tags")


def attachment_records(
    message: EmailMessage,
    parent: Record,
    options: ReadOptions,
    prefix: str,
    depth: int = 1,
) -> list[Record | RecordError]:
    """Records for ``message``'s readable attachments; ``prefix`` is the key they sit
    under (the message's key, or "" for an ``.eml`` file that is one document)."""
    from trove.ingest.readers import format_for  # the registry imports this module's caller

    found: list[Record | RecordError] = []
    for number, part in enumerate(message.iter_attachments(), start=1):
        content_type = part.get_content_type()
        name = safe_name(part.get_filename() or "", f"attachment-{number}")
        suffix = _suffix(name, content_type)
        if suffix is None:
            continue  # no reader: listed on the message, as before
        key = f"{prefix}/attachment-{number}" if prefix else f"attachment-{number}"
        where = f"{key} ({name})"
        data = _payload(part)
        fmt = format_for(f"x{suffix}")
        if fmt is None or fmt.read is None:
            continue
        try:
            # A nested message is read here, not by read_eml: its attachments are keyed
            # under this one, and read no deeper than MAX_DEPTH.
            read = _message(data) if suffix == ".eml" else fmt.read(name, data, options)
        except (Unreadable, ImportError) as exc:
            found.append(RecordError(where, f"attachment not read: {exc}", retry=False))
            continue
        except Exception as exc:  # a reader's library failing on odd bytes
            reason = f"attachment not read: {type(exc).__name__}"
            found.append(RecordError(where, reason, retry=False))
            continue
        for record in read:
            if isinstance(record, RecordError):
                found.append(RecordError(where, record.reason, record.skipped, retry=False))
                continue
            fields = _with_provenance(record.fields, parent.fields, name, content_type)
            child = Record(fields, key=key, notes=record.notes)
            child.attachment_of = prefix
            child.original = (data, name, guess_type(name) if suffix != ".eml" else content_type)
            found.append(child)
            if suffix == ".eml" and depth < MAX_DEPTH:
                nested = _nested(data)
                found.extend(attachment_records(nested, child, options, key, depth + 1))
    return found


def _suffix(name: str, content_type: str) -> str | None:
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    if suffix in _READABLE:
        return suffix
    if suffix and suffix not in ("", ".bin", ".dat"):
        return None  # a named type we do not read (.zip, .docx, .png)
    return _BY_TYPE.get(content_type)


def _payload(part: EmailMessage) -> bytes:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        inner = inner[0] if isinstance(inner, list) and inner else inner
        return bytes(inner.as_bytes()) if hasattr(inner, "as_bytes") else b""
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _nested(data: bytes) -> EmailMessage:
    import email
    import email.policy

    message = email.message_from_bytes(data, policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not message.keys():
        raise Unreadable("not an e-mail message (no headers)")
    return message


def _message(data: bytes) -> list[Record]:
    from trove.ingest.readers.mail import body_notes, message_fields

    message = _nested(data)
    return [Record(message_fields(message), notes=body_notes(message))]


def _with_provenance(
    own: dict[str, Any], message: dict[str, Any], name: str, content_type: str
) -> dict[str, Any]:
    fields = dict(own)
    for key in _PROVENANCE:
        if key in message:
            fields[key] = message[key]
    metadata = dict(fields.get("metadata") or {})
    metadata.update(
        attachment_name=name,
        content_type=content_type,
        message_subject=message.get("title", ""),
        message_id=(message.get("metadata") or {}).get("message_id", ""),
    )
    fields["metadata"] = {k: v for k, v in metadata.items() if v}
    fields["title"] = fields.get("title") or name
    fields.setdefault("doc_type", "attachment")
    return fields
