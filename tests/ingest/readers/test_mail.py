"""E-mail: .eml files and .mbox archives written by the standard library."""

from __future__ import annotations

from pathlib import Path

import trove
from helpers.ingest_samples import message, write_mbox


def docs(kb: trove.Store) -> dict[str, trove.Document]:
    found = {}
    for sid, doc_id, _, deleted in kb.iter_source("default", "vault"):
        doc = kb.get(doc_id)
        if doc is not None and not deleted:
            found[sid] = doc
    return found


def test_eml_fills_provenance_and_prefers_the_plain_body(store: trove.Store, vault: Path) -> None:
    reply = message(
        "Re: Redis in production",
        "Plain body: we drop Redis.\n",
        html="<p>HTML body: <b>we drop Redis</b></p>",
        sender='"Lima, Ana" <Ana@Example.com>',
        to="Bob <bob@example.com>, carl@example.com",
        cc="dora@example.com",
        date="Wed, 04 Nov 2026 10:30:00 +0100",
        message_id="<reply-1@example.com>",
        in_reply_to="<parent@example.com>",
        references="<root@example.com> <parent@example.com>",
        attachments=[("notes.pdf", b"%PDF-" + b"x" * 95)],
    )
    (vault / "reply.eml").write_bytes(bytes(reply))
    assert store.ingest(vault).added == 1
    mail = docs(store)["reply.eml"]
    assert (mail.title, mail.doc_type) == ("Re: Redis in production", "email")
    assert mail.text == "Plain body: we drop Redis.\n"
    assert mail.author == "ana@example.com"
    assert mail.participants == (
        "ana@example.com",
        "bob@example.com",
        "carl@example.com",
        "dora@example.com",
    )
    assert mail.timestamp == "2026-11-04T09:30:00Z"
    assert mail.thread_id == "root@example.com"  # the thread's root, from References
    assert mail.metadata["message_id"] == "reply-1@example.com"
    assert mail.metadata["in_reply_to"] == "parent@example.com"
    assert mail.metadata["from"] == ['"Lima, Ana" <ana@example.com>']
    assert mail.metadata["attachments"] == [
        {"filename": "notes.pdf", "content_type": "application/octet-stream", "size": 100}
    ]


def test_html_only_mail_becomes_text_and_odd_files_are_skipped(
    store: trove.Store, vault: Path
) -> None:
    html = message(
        "Newsletter",
        html="<html><head><style>p{color:red}</style></head><body><h1>News</h1>"
        "<p>Kafka&nbsp;4.0 is out.</p><script>track()</script></body></html>",
        date=None,
        message_id="<news@example.com>",
    )
    (vault / "news.eml").write_bytes(bytes(html))
    (vault / "notes.eml").write_text("just some text, no headers\n", encoding="utf-8")
    report = store.ingest(vault)
    assert report.added == 1
    assert dict(report.skipped) == {"notes.eml": "not an e-mail message (no headers)"}
    news = docs(store)["news.eml"]
    assert news.text == "News\n\nKafka 4.0 is out."
    assert news.timestamp  # no Date header: the file's time
    assert news.thread_id == "news@example.com"


def test_mbox_is_one_document_per_message(store: trove.Store, vault: Path) -> None:
    write_mbox(
        vault / "inbox.mbox",
        [
            message("Kickoff", "Let us start.\n", message_id="<root@example.com>"),
            message(
                "Re: Kickoff",
                "From now on we meet weekly.\n",  # a body line starting with "From "
                sender="bob@example.com",
                message_id="<r1@example.com>",
                in_reply_to="<root@example.com>",
            ),
            message("No id here", "Anonymous message.\n"),
            message("Kickoff", "Let us start.\n", message_id="<root@example.com>"),
        ],
    )
    report = store.ingest(vault)
    assert report.added == 3
    assert report.skipped == [("inbox.mbox#message 4", "same Message-ID as message 1")]
    found = docs(store)
    assert {sid for sid in found if "sha256-" not in sid} == {
        "inbox.mbox#root@example.com",
        "inbox.mbox#r1@example.com",
    }
    reply = found["inbox.mbox#r1@example.com"]
    assert reply.text == "From now on we meet weekly.\n"
    assert reply.thread_id == "root@example.com" and reply.author == "bob@example.com"
    assert store.search("weekly", author="bob@example.com")[0].title == "Re: Kickoff"


def test_mbox_grows_and_shrinks_incrementally(kb: trove.Store, vault: Path) -> None:
    """On every backend: the file hashes of derived formats live in the store too."""
    store = kb
    messages = [
        message(f"Note {i}", f"body number {i}\n", message_id=f"<m{i}@x>") for i in range(4)
    ]
    write_mbox(vault / "box.mbox", messages)
    store.ingest(vault)
    assert store.ingest(vault).unchanged == 4  # unchanged file: no parsing
    write_mbox(vault / "box.mbox", [message("Note 4", "body number 4\n", message_id="<m4@x>")])
    report = store.ingest(vault)
    assert (report.added, report.updated, report.unchanged) == (1, 0, 4)
    (vault / "box.mbox").unlink()
    write_mbox(vault / "box.mbox", messages[1:])
    report = store.ingest(vault, sync=True)
    assert (report.deleted, report.unchanged) == (2, 3)  # m0 and m4 are gone
    assert set(docs(store)) == {f"box.mbox#m{i}@x" for i in (1, 2, 3)}


def test_a_malformed_mbox_is_reported_and_the_run_goes_on(store: trove.Store, vault: Path) -> None:
    (vault / "broken.mbox").write_bytes(b"Subject: not an mbox\n\nno From line\n")
    (vault / "note.md").write_text("fine", encoding="utf-8")
    report = store.ingest(vault)
    assert report.added == 1
    assert report.failed == [("broken.mbox", "not an mbox: it does not start with a 'From ' line")]


def test_a_message_without_a_body_is_skipped_not_stored_empty(
    store: trove.Store, vault: Path
) -> None:
    (vault / "box.mbox").write_bytes(
        b"From a@example.com Mon Nov  2 10:00:00 2026\n"
        b"Subject: fine\nMessage-ID: <1@x>\n\nA real body.\n\n"
        b"From b@example.com Mon Nov  2 11:00:00 2026\n"
        b"Subject: broken\nMessage-ID: <2@x>\nContent-Type: multipart/mixed\n\n"
    )
    report = store.ingest(vault)
    assert report.added == 1
    assert ("box.mbox#2@x", "no text") in report.skipped
    assert all(doc.text.strip() for doc in docs(store).values())


def test_a_bogus_charset_is_noted_in_the_report(store: trove.Store, vault: Path) -> None:
    (vault / "odd.eml").write_bytes(
        b"Subject: odd\nMessage-ID: <odd@x>\nContent-Type: text/plain; charset=x-bogus-9\n\n"
        b"caf\xe9 au lait\n"
    )
    report = store.ingest(vault)
    assert report.added == 1
    assert report.notes == [
        (
            "odd.eml",
            "body charset 'x-bogus-9' could not be decoded; read as UTF-8 with replacements",
        )
    ]
    assert "\ufffd" in docs(store)["odd.eml"].text
