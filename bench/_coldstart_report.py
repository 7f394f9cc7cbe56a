"""The cold-start section of docs/benchmarks.md and its plot, from bench/results/coldstart.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = [
    ("import_s", "`import trove`"),
    ("help_s", "`trove --help`"),
    ("stats_s", "`trove stats`"),
    ("keyword_s", "keyword"),
    ("semantic_s", "semantic"),
    ("hybrid_s", "hybrid"),
    ("cached_semantic_s", "semantic, cache"),
    ("cached_hybrid_s", "hybrid, cache"),
    ("sqlite_vec_s", "sqlite-vec exact"),
]


def section(results: dict[str, Any]) -> str:
    runs = results.get("runs", [])
    header = "| run | chunks | load | " + " | ".join(title for _, title in COLUMNS) + " |"
    rows = [header, "|" + "---|" * (len(COLUMNS) + 3)]
    for run in runs:
        if "import_s" not in run:
            continue  # a memory-only run (below)
        load = f"{run['load_before']:.1f}–{run['load_after']:.1f}"
        cells = [_seconds(run.get(key)) for key, _ in COLUMNS]
        label = run.get("label", "")
        rows.append(f"| {label} | {run['chunks']:,} | {load} | {' | '.join(cells)} |")
    shared = [r for r in runs if "pss_total_mb" in r]
    memory = "\n".join(
        f"- {r['label']}, {r['chunks']:,} chunks, load {r['load_before']:.1f}: "
        f"{r['processes']} warm processes serving one store hold {r['pss_total_mb']:.0f} MB "
        f"in total (proportional set size; {r['rss_total_mb']:.0f} MB RSS, shared pages "
        f"counted in each)." + _served(r)
        for r in shared
    )
    cpu = _cpu_table(runs)
    builds = "\n".join(
        f"- {r['label']}: built {r['chunks']:,} documents with `add_many` (hash:384 embedding "
        f"included) at {r['build_docs_per_s']:,.0f} documents/s."
        for r in runs
        if "build_docs_per_s" in r
    )
    return f"""
## Cold start (`bench/coldstart.py`)

Wall time of a fresh process, from exec to exit, median of the runs (the store file in
the page cache, as on a machine that used it recently): `import trove`, `trove --help`,
`trove stats`, and `trove search` in each mode (limit 10). The store holds one-chunk
documents of 2–6 SciFact sentences, embedded by `hash:384` so that no model costs time.
"cache" columns: the same commands after a process has warmed the store once (the vector
index cache beside the file, `<store>.trove-index/`, is then mapped instead of loaded).
"sqlite-vec exact": a bare process (apsw + sqlite-vec + numpy, no trove) answering one
exact k-NN on the same vectors: the floor. Load is the 1-minute load average before and
after the row (2 cores; the machine was shared, so only rows measured back to back, at
the same load, compare).

Required on a quiet machine: `import trove` ≤ 0.1 s, `trove --help` ≤ 0.15 s, keyword
≤ 0.3 s and hybrid ≤ 0.8 s at 100k chunks, `trove stats` ≤ 0.1 s at 1M.

{chr(10).join(rows)}
{cpu}
{memory}

{builds}

![first query against store size](coldstart.png)
"""


def _served(run: dict[str, Any]) -> str:
    if "serve_warm_s" not in run:
        return ""
    return (
        f" The first of them: `warm()` {run['serve_warm_s']:.1f} s; then warm p50 keyword "
        f"{run['serve_warm_keyword_p50_ms']:.1f} ms, semantic "
        f"{run['serve_warm_semantic_p50_ms']:.1f} ms, hybrid "
        f"{run['serve_warm_hybrid_p50_ms']:.1f} ms (55 SciFact claims, alone on the store)."
    )


def _cpu_table(runs: list[dict[str, Any]]) -> str:
    """The runs that also recorded CPU time (user + system), which a busy machine inflates
    less than wall time: the figure to compare where the load was high."""
    timed = [r for r in runs if "help_cpu_s" in r]
    if not timed:
        return ""
    keys = [(k.removesuffix("_s") + "_cpu_s", title) for k, title in COLUMNS[:6]]
    lines = [
        "",
        "CPU time (user + system) of the same runs, median, where recorded:",
        "",
        "| run | chunks | load | " + " | ".join(title for _, title in keys) + " |",
        "|" + "---|" * (len(keys) + 3),
    ]
    for run in timed:
        load = f"{run['load_before']:.1f}–{run['load_after']:.1f}"
        cells = " | ".join(_seconds(run.get(key)) for key, _ in keys)
        lines.append(f"| {run.get('label', '')} | {run['chunks']:,} | {load} | {cells} |")
    return "\n".join(lines) + "\n"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def plot(results: dict[str, Any], path: Path) -> None:
    """First-query wall time against store size: trove cold, trove with its cache, and
    sqlite-vec's exact scan (the newest run of each size)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latest: dict[int, dict[str, Any]] = {}
    for run in results.get("runs", []):
        if "cached_hybrid_s" in run:
            latest[run["chunks"]] = run
    sizes = sorted(latest)
    if not sizes:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = [
        ("hybrid_s", "trove hybrid, no cache (exact sqlite-vec leg)", "C2", "o-"),
        ("cached_hybrid_s", "trove hybrid, index cache mapped", "C2", "s--"),
        ("keyword_s", "trove keyword", "C0", "o-"),
        ("sqlite_vec_s", "sqlite-vec exact k-NN, bare process", "C3", "^-"),
    ]
    for key, label, colour, style in series:
        ax.plot(sizes, [latest[n][key] for n in sizes], style, color=colour, label=label)
    runs = [r for r in results.get("runs", []) if "hybrid_s" in r]
    before = [r for r in runs if r.get("label", "").startswith("baseline")]
    if before:
        ax.plot([r["chunks"] for r in before], [r["hybrid_s"] for r in before], "kx",
                label="trove hybrid before issue 14 (ebdf9d5), load in the table")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the store")
    ax.set_ylabel("fresh process, exec to answer (s)")
    loads = ", ".join(f"{latest[n]['load_before']:.1f}" for n in sizes)
    ax.set_title(f"First query of a fresh process (load {loads})")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
