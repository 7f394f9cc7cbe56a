"""Sample files the ingest tests write themselves: e-mail through the standard library
(an mbox through ``mailbox``), PDFs through fpdf2; and an embedder that counts."""

from __future__ import annotations

import email.message
import mailbox
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trove.embedders.hashing import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """Counts the texts it is asked to embed (re-embedding is what sync must avoid)."""

    def __init__(self) -> None:
        super().__init__(dimension=32)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def message(
    subject: str,
    body: str = "",
    *,
    sender: str = "Ana Lima <ana@example.com>",
    to: str = "bob@example.com",
    cc: str | None = None,
    date: str | None = "Tue, 03 Nov 2026 09:00:00 +0000",
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | None = None,
    html: str | None = None,
    attachments: Sequence[tuple[str, bytes]] = (),
) -> email.message.EmailMessage:
    msg = email.message.EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    msg["Subject"] = subject
    if date:
        msg["Date"] = date
    if message_id:
        msg["Message-ID"] = message_id
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = references
    if body:
        msg.set_content(body)
    if html is not None:
        if body:
            msg.add_alternative(html, subtype="html")
        else:
            msg.set_content(html, subtype="html")
    for name, data in attachments:
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return msg


def write_mbox(path: Path, messages: Sequence[email.message.EmailMessage]) -> Path:
    """An mbox written by the standard library, as mail clients' exports are."""
    box = mailbox.mbox(path)
    box.lock()
    try:
        for msg in messages:
            box.add(msg)
        box.flush()
    finally:
        box.unlock()
        box.close()
    return path


def write_pdf(
    path: Path, pages: Sequence[str], *, title: str = "", author: str = "", text: bool = True
) -> Path:
    """A PDF made by fpdf2: one page per string (``text=False``: shapes only, no text
    layer, as a scan has)."""
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    if author:
        pdf.set_author(author)
    pdf.set_font("helvetica", size=12)
    for content in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, content)
        else:
            pdf.rect(20, 20, 100, 60, style="F")
    pdf.output(str(path))
    return path
