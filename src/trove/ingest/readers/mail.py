"""E-mail: ``.eml`` messages and ``.mbox`` archives, with the standard library.

A message becomes one document: the subject is its title, the sender its author, every
address its participants, the Date header its timestamp, and its thread id is the first
Message-ID of References (the thread's root), else In-Reply-To, else its own. The plain
text body is preferred over the HTML one; attachments are listed in metadata, and those
with a reader become documents of their own (see :mod:`.attachments`).

An mbox is read as a stream, one message at a time, so memory stays bounded by the
largest message, not the archive. Each message's source_id is ``path#message-id``.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import hashlib
import re
from collections.abc import Iterator
from email.message import EmailMessage
from html.parser import HTMLParser
from typing import IO, Any

from trove.ingest.readers.attachments import attachment_records
from trove.ingest.readers.base import Corrupt, ReadOptions, Record, RecordError, Unreadable
from trove.originals import safe_name

_MESSAGE_ID = re.compile(r"<([^<>\s]+)>")
_ESCAPED_FROM = re.compile(rb">+From ")
# Tags whose text starts on a new line.
_BLOCKS = frozenset(
    """address article aside blockquote br dd div dl dt figure figcaption footer form h1 h2
    h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul""".split()  # noqa: SIM905
)
_HIDDEN = frozenset(("script", "style", "head", "title", "template"))


def read_eml(name: str, data: bytes, options: ReadOptions) -> list[Record | RecordError]:
    message = email.message_from_bytes(data, policy=email.policy.default)
    if not message.keys():
        raise Unreadable("not an e-mail message (no headers)")
    assert isinstance(message, EmailMessage)
    record = Record(message_fields(message), notes=body_notes(message))
    return [record, *attachment_records(message, record, options, "")]


def read_mbox(
    name: str, stream: IO[bytes], options: ReadOptions
) -> Iterator[Record | RecordError]:
    seen: dict[str, int] = {}
    for number, raw in enumerate(split_mbox(stream, options.max_record_bytes), start=1):
        where = f"message {number}"
        if isinstance(raw, RecordError):
            yield RecordError(where, raw.reason, raw.skipped)
            continue
        try:
            message = email.message_from_bytes(raw, policy=email.policy.default)
            assert isinstance(message, EmailMessage)
            fields = message_fields(message)
        except Exception as exc:  # the email package raises many types on odd headers
            yield RecordError(where, f"cannot parse: {type(exc).__name__}: {exc}")
            continue
        # No Message-ID: the message's own bytes name it, wherever it sits in the file.
        key = fields["metadata"].get("message_id") or "sha256-" + _digest(raw)
        if key in seen:
            yield RecordError(where, f"same Message-ID as message {seen[key]}", skipped=True)
            continue
        seen[key] = number
        record = Record(fields, key=key, notes=body_notes(message))
        record.original = (raw, safe_name(key, "message") + ".eml", "message/rfc822")
        yield record
        yield from attachment_records(message, record, options, key)


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:20]


def split_mbox(stream: IO[bytes], max_bytes: int) -> Iterator[bytes | RecordError]:
    """The raw messages of an mbox: a message starts at a ``From `` line that opens the
    file or follows a blank line (so a body line starting "From " does not split it).
    Body lines escaped as ``>From `` lose one ``>``, as mboxrd readers do."""
    lines: list[bytes] = []
    size = 0
    too_big = False
    blank_before = True
    started = False
    for line in stream:
        if blank_before and line.startswith(b"From "):
            if started:
                yield _finish(lines, too_big, max_bytes)
            started, lines, size, too_big = True, [], 0, False
            blank_before = False
            continue
        if not started:
            if not line.strip():
                continue  # blank lines before the first message
            raise Corrupt("not an mbox: it does not start with a 'From ' line")
        blank_before = not line.strip()
        if line.startswith(b">") and _ESCAPED_FROM.match(line):
            line = line[1:]  # mboxrd/mboxo escaping of body lines starting "From "
        size += len(line)
        if size > max_bytes:
            too_big, lines = True, []  # drop it as it streams: memory stays bounded
        elif not too_big:
            lines.append(line)
    if started:
        yield _finish(lines, too_big, max_bytes)


def _finish(lines: list[bytes], too_big: bool, max_bytes: int) -> bytes | RecordError:
    if too_big:
        return RecordError("", f"larger than {max_bytes} bytes", skipped=True)
    if lines and not lines[-1].strip():
        lines.pop()  # the blank line before the next "From " belongs to the mbox
    return b"".join(lines)


def message_fields(message: EmailMessage) -> dict[str, Any]:
    """Document fields of one parsed message."""
    senders = _addresses(message, "From")
    recipients = [a for h in ("To", "Cc", "Bcc") for a in _addresses(message, h)]
    message_id = _first_id(message.get("Message-ID"))
    in_reply_to = _first_id(message.get("In-Reply-To"))
    references = _MESSAGE_ID.findall(str(message.get("References") or ""))
    metadata: dict[str, Any] = {
        "message_id": message_id,
        "in_reply_to": in_reply_to,
        "references": references,
        "from": [_display(n, a) for n, a in senders],
        "to": [_display(n, a) for n, a in _addresses(message, "To")],
        "cc": [_display(n, a) for n, a in _addresses(message, "Cc")],
        "attachments": _attachments(message),
    }
    fields: dict[str, Any] = {
        "text": _body(message),
        "title": str(message.get("Subject") or "").strip(),
        "doc_type": "email",
        "author": senders[0][1] if senders else "",
        "participants": list(dict.fromkeys(a for _, a in senders + recipients)),
        "thread_id": (references[0] if references else in_reply_to) or message_id,
        "metadata": {k: v for k, v in metadata.items() if v},
    }
    when = _date(message)
    if when is not None:
        fields["timestamp"] = when
    labels = str(message.get("X-Gmail-Labels") or "")
    if labels:
        fields["tags"] = [t.strip() for t in labels.split(",") if t.strip()]
    return fields


def _addresses(message: EmailMessage, header: str) -> list[tuple[str, str]]:
    values = [str(v) for v in message.get_all(header) or []]
    found = []
    for name, address in email.utils.getaddresses(values):
        address = address.strip().lower()
        if address:
            found.append((name.strip(), address))
    return found


def _display(name: str, address: str) -> str:
    return email.utils.formataddr((name, address)) if name else address


def _first_id(value: Any) -> str:
    found = _MESSAGE_ID.search(str(value or ""))
    if found:
        return found.group(1)
    return str(value or "").strip().strip("<>")


def _date(message: EmailMessage) -> str | None:
    value = message.get("Date")
    if not value:
        return None
    try:
        moment = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return moment.isoformat()


def body_notes(message: EmailMessage) -> tuple[str, ...]:
    """A note when the body's charset is unknown or wrong, so it was decoded as UTF-8
    with U+FFFD in place of what could not be read."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ()
    try:
        part.get_content()
    except (LookupError, ValueError, AssertionError):
        charset = part.get_content_charset() or "?"
        return (f"body charset {charset!r} could not be decoded; read as UTF-8 with replacements",)
    return ()


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):
        # An unknown or lying charset: keep the text rather than the message.
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_type() == "text/html":
        return html_to_text(content)
    return content


def _attachments(message: EmailMessage) -> list[dict[str, Any]]:
    found = []
    for part in message.iter_attachments():
        payload = part.get_payload(decode=True)
        found.append(
            {
                "filename": part.get_filename() or "",
                "content_type": part.get_content_type(),
                "size": len(payload) if isinstance(payload, bytes) else 0,
            }
        )
    return found


class _TextOfHTML(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The readable text of an HTML mail body (mail HTML is simple: no extractor needed)."""
    parser = _TextOfHTML()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
