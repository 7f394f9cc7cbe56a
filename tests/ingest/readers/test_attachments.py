"""Mail attachments as documents (issue 19): readable ones stored and linked to their
message, bad ones reported without losing the mail, originals kept once per content."""

from __future__ import annotations

import email.message
from pathlib import Path

import trove
from helpers.ingest_samples import message, write_mbox, write_pdf
from trove.ingest.readers import split_source_id


def _docs(store: trove.Store) -> dict[str, trove.Document]:
    found = {}
    for sid, doc_id, _, deleted in store.iter_source("default", "vault"):
        doc = store.get(doc_id)
        if doc is not None and not deleted:
            found[sid] = doc
    return found


def _contract_pdf(tmp_path: Path) -> bytes:
    pdf = write_pdf(tmp_path / "c.pdf", ["Service contract between Bea and Ana, March."])
    return pdf.read_bytes()


def test_pdf_and_html_attachments_become_linked_documents(
    store: trove.Store, vault: Path, tmp_path: Path
) -> None:
    mail = message(
        "The contract",
        "Here it is.\n",
        sender="Bea <bea@example.com>",
        message_id="<m1@example.com>",
        attachments=[
            ("contract.pdf", _contract_pdf(tmp_path)),
            ("terms.html", b"<html><body><p>Payment within thirty days</p></body></html>"),
            ("photos.zip", b"PK\x03\x04 not expanded"),
        ],
    )
    (vault / "m.eml").write_bytes(bytes(mail))
    report = store.ingest(vault)
    assert (report.added, report.failed) == (3, [])
    docs = _docs(store)
    assert set(docs) == {"m.eml", "m.eml#attachment-1", "m.eml#attachment-2"}
    pdf = docs["m.eml#attachment-1"]
    assert "Service contract" in pdf.text
    assert (pdf.author, pdf.thread_id) == ("bea@example.com", docs["m.eml"].thread_id)
    assert pdf.timestamp == docs["m.eml"].timestamp
    assert pdf.metadata["message_subject"] == "The contract"
    assert pdf.metadata["attachment_name"] == "contract.pdf"
    edges = store.neighbors(pdf.id, "attachment_of")
    assert [(e.src, e.dst) for e in edges] == [(pdf.id, docs["m.eml"].id)]
    hits = store.search("service contract")
    assert hits and hits[0].doc_id == pdf.id
    names = [a["filename"] for a in docs["m.eml"].metadata["attachments"]]
    assert names == ["contract.pdf", "terms.html", "photos.zip"]  # all still listed
    assert split_source_id("m.eml#attachment-1") == ("m.eml", "attachment-1")


def test_bad_attachments_are_reported_and_the_mail_is_kept(
    store: trove.Store, vault: Path
) -> None:
    mail = message(
        "Odd files",
        "Body text.\n",
        message_id="<odd@example.com>",
        attachments=[("../../x.pdf", b"%PDF-1.4 broken"), ("empty.txt", b"")],
    )
    write_mbox(vault / "box.mbox", [mail])
    report = store.ingest(vault)
    docs = _docs(store)
    assert set(docs) == {"box.mbox#odd@example.com"}  # the mail is stored
    ((where, reason),) = report.failed
    assert where == "box.mbox#odd@example.com/attachment-1 (x.pdf)"
    assert "attachment not read" in reason
    assert ("box.mbox#odd@example.com/attachment-2", "no text") in report.skipped
    again = store.ingest(vault)  # the mbox is recorded as read: not retried every run
    assert (again.added, again.failed, again.unchanged) == (0, [], 1)


def test_rfc2231_name_and_nested_message(store: trove.Store, vault: Path) -> None:
    inner = message("Inner note", "The nested budget figures.\n", message_id="<in@example.com>")
    outer = message("Forward", "See below.\n", message_id="<out@example.com>")
    outer.add_attachment(
        "Résumé of the budget".encode(),
        maintype="text",
        subtype="plain",
        filename=("utf-8", "", "Résumé März.txt"),
    )
    outer.add_attachment(inner)
    (vault / "f.eml").write_bytes(bytes(outer))
    report = store.ingest(vault)
    assert report.failed == []
    docs = _docs(store)
    assert docs["f.eml#attachment-1"].metadata["attachment_name"] == "Résumé März.txt"
    nested = docs["f.eml#attachment-2"]
    assert nested.text == "The nested budget figures.\n"
    assert nested.title == "Inner note"


def test_same_attachment_in_50_messages_is_stored_once(kb: trove.Store, vault: Path) -> None:
    page = b"<html><body><p>Quarterly report, same file everywhere</p></body></html>"
    mails: list[email.message.EmailMessage] = [
        message(
            f"Report {i}",
            f"Mail {i}\n",
            message_id=f"<r{i}@example.com>",
            attachments=[("report.html", page)],
        )
        for i in range(50)
    ]
    write_mbox(vault / "many.mbox", mails)
    report = kb.ingest(vault, keep_originals=True)
    assert report.added == 100 and report.failed == []
    sizes = sorted(kb.backend.original_hashes().values())
    assert sizes.count(len(page)) == 1  # one copy of the attachment for 50 documents
    assert len(sizes) == 51  # and each message's own bytes
    docs = _docs(kb)
    attachment = docs["many.mbox#r7@example.com/attachment-1"]
    assert kb.original(attachment.id).data == page
    assert kb.original(attachment.id).media_type == "text/html"
    mail = kb.original(docs["many.mbox#r7@example.com"].id)
    assert mail.media_type == "message/rfc822" and b"Subject: Report 7" in mail.data
