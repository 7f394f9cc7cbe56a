"""Throughput of the default embedder on the SciFact corpus: naive loop against trove's path.

    python bench/embed_speed.py [--limit N] [--repeats 3] [--batch-tokens 1024] [--threads N]

(a) baseline: batches of 32 in corpus order, padded to the longest text of the batch,
    onnxruntime with its default session options;
(b) tuned: MiniLMEmbedder.embed, which sorts by token count, batches by a padded-token
    budget, runs a thread per core that sleeps instead of spinning while it waits.
The two run alternately, so that load from other processes hits both alike. Reports the
median over the repeats of docs/s and of CPU milliseconds per document (all threads); the
second barely moves when other processes compete for the cores, the first does. Embeds
title + " " + text of each document (5,183 in all).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

import _data
from trove.embedders.base import available_cores, l2_normalize
from trove.embedders.default import (
    BATCH_TOKENS,
    MODEL_FILE,
    VOCAB_FILE,
    MiniLMEmbedder,
    load_tokenizer,
)


def baseline(
    texts: list[str], session: onnxruntime.InferenceSession, tokenizer: Tokenizer
) -> np.ndarray:
    """What a first implementation does: default session options, fixed batches of 32."""
    batch_size = 32
    rows = []
    for start in range(0, len(texts), batch_size):
        encodings = tokenizer.encode_batch(texts[start : start + batch_size])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run(["last_hidden_state"], feeds)
        pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        rows.append(l2_normalize(pooled))
    return np.concatenate(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N documents only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-tokens", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    docs = itertools.islice(_data.corpus("scifact"), args.limit)
    texts = [f"{d['title']} {d['text']}" for d in docs]
    embedder = MiniLMEmbedder(threads=args.threads, batch_tokens=args.batch_tokens or BATCH_TOKENS)
    started = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - started
    tokenizer = load_tokenizer(VOCAB_FILE.locate())
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    session = onnxruntime.InferenceSession(
        str(MODEL_FILE.locate()), providers=["CPUExecutionProvider"]
    )
    # onnxruntime plans its memory on the first runs
    embedder.embed(texts[:8])
    baseline(texts[:8], session, tokenizer)

    print(f"machine: {_data.machine()}, {available_cores()} usable, load {os.getloadavg()[0]:.1f}")
    print(f"onnxruntime {onnxruntime.__version__}, {len(texts)} docs, {args.repeats} repeats")
    print(f"model load {load_s:.2f} s (sha256 checks, session, tokenizer)")
    paths = {
        "baseline": lambda: baseline(texts, session, tokenizer),
        "tuned": lambda: embedder.embed(texts),
    }
    rates: dict[str, list[float]] = {name: [] for name in paths}
    cpu_ms: dict[str, list[float]] = {name: [] for name in paths}
    vectors = {}
    for _ in range(args.repeats):
        for name, run in paths.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            vectors[name] = run()
            rates[name].append(len(texts) / (time.perf_counter() - started))
            cpu_ms[name].append(1000 * (time.process_time() - cpu_started) / len(texts))
        so_far = {name: [round(rate, 1) for rate in rates[name]] for name in paths}
        print(f"  load {os.getloadavg()[0]:.1f}, docs/s so far: {so_far}", flush=True)
    worst = float(np.min(np.sum(vectors["baseline"] * vectors["tuned"], axis=1)))
    base, tuned = _data.median(rates["baseline"]), _data.median(rates["tuned"])
    base_cpu, tuned_cpu = _data.median(cpu_ms["baseline"]), _data.median(cpu_ms["tuned"])
    print(
        f"(a) baseline, batch 32, corpus order, default session:"
        f" {base:.1f} docs/s, {base_cpu:.0f} CPU ms/doc"
    )
    print(
        f"(b) tuned, length-sorted, {embedder.batch_tokens} padded tokens per batch,"
        f" {embedder.threads} threads: {tuned:.1f} docs/s ({tuned / base:.2f}x),"
        f" {tuned_cpu:.0f} CPU ms/doc ({base_cpu / tuned_cpu:.2f}x less)"
    )
    print(f"lowest cosine between the two paths' vectors: {worst:.6f}")


if __name__ == "__main__":
    main()
