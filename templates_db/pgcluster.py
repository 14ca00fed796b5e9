"""A throwaway PostgreSQL server on a free loopback port: the tests' and the benchmarks' real database.

:class:`Cluster` runs Debian's ``initdb`` in a new folder, starts ``postgres`` on 127.0.0.1 (and a Unix
socket in the folder) and stops it by its PID. Run as root it runs both as the ``postgres`` user, which
Debian's package creates (``initdb`` refuses root), in a folder of its own under the system's temporary
directory (pytest's folders are closed to other users). Nothing else on the machine is touched: no
system cluster, no service, no port but the one chosen.

``python -m templates_db.pgcluster`` starts one in the foreground and prints its URI, to try a
multi-worker crawl on one machine (docs/distributed.md); Ctrl-C stops it and deletes its folder.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

# Where Debian puts the server's programs (postgresql-NN), newest first; PATH is looked at before.
DEBIAN_BIN_GLOB = "/usr/lib/postgresql/*/bin"
START_TIMEOUT_S = 60.0  # a new cluster answers in about a second on the 2-core dev machine
STOP_TIMEOUT_S = 30.0
SUPERUSER = "postgres"


class ClusterError(RuntimeError):
    """The server could not be set up or started; the message carries its log's end."""


def server_programs() -> tuple[Path, Path] | None:
    """Return (initdb, postgres) of the newest installed server, or None when PostgreSQL is not installed."""
    candidates = [Path(found).parent for found in (shutil.which("initdb"),) if found]
    candidates += sorted((Path(folder) for folder in glob.glob(DEBIAN_BIN_GLOB)),
                         key=lambda path: _version(path.parent.name), reverse=True)
    for folder in candidates:
        initdb, postgres = folder.resolve() / "initdb", folder.resolve() / "postgres"
        if initdb.is_file() and postgres.is_file():
            return initdb, postgres
    return None


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port free on ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A PostgreSQL server of its own (module docstring); ``start()`` returns the URI of its ``postgres``
    database, ``create_database(name)`` another's."""

    def __init__(self, durable: bool = False, host: str = "127.0.0.1") -> None:
        programs = server_programs()
        if programs is None:
            raise ClusterError("PostgreSQL is not installed (no initdb): `make test` installs Debian's postgresql, "
                               "or apt-get install postgresql")
        self.initdb, self.postgres = programs
        self.durable = durable  # False: fsync off, for tests (a crash of the machine loses the throwaway data)
        self.host = host
        self.port = 0
        self.folder: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(SUPERUSER)
            except KeyError:
                raise ClusterError("running as root needs the 'postgres' system user (Debian's postgresql package"
                                   " creates it): initdb refuses to run as root") from None
            self._user = SUPERUSER

    @property
    def pid(self) -> int | None:
        """Return the server's process id while it runs."""
        return self.process.pid if self.process is not None and self.process.poll() is None else None

    def uri(self, database: str = "postgres") -> str:
        """Return the URI of ``database`` on this server."""
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{database}"

    def _run_as(self) -> dict[str, str]:
        return {"user": self._user, "group": self._user} if self._user else {}

    def start(self) -> str:
        """Create the cluster and start its server; return the URI of its ``postgres`` database."""
        folder = self.folder = Path(tempfile.mkdtemp(prefix="newscorpus-pg-"))
        if self._user:
            shutil.chown(folder, self._user, self._user)
        data = folder / "data"
        init = subprocess.run([str(self.initdb), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                               "--locale=C", "--no-sync"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, **self._run_as())  # type: ignore[call-overload]
        if init.returncode != 0:
            self._remove()
            raise ClusterError(f"initdb failed: {init.stderr[-2000:] or init.stdout[-2000:]}")
        options = ["-c", f"listen_addresses={self.host}", "-c", f"unix_socket_directories={folder}",
                   "-c", "max_connections=300", "-c", "shared_buffers=32MB"]
        if not self.durable:
            options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        log = folder / "server.log"
        for _attempt in range(3):  # another program may take the free port before the server binds it
            self.port = free_port(self.host)
            with log.open("ab") as out:
                self.process = subprocess.Popen([str(self.postgres), "-D", str(data), "-p", str(self.port), *options],
                                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                start_new_session=True, **self._run_as())  # type: ignore[call-overload]
            if self._wait_ready():
                return self.uri()
            self.process.wait()
            if "could not bind" not in log.read_text(errors="replace"):
                break
        tail = log.read_text(errors="replace")[-2000:]
        self.stop()
        raise ClusterError(f"the PostgreSQL server did not start: {tail}")

    def _wait_ready(self) -> bool:
        import psycopg

        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                psycopg.connect(self.uri(), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.05)  # the server is starting: it answers within about a second
        return False

    def create_database(self, name: str) -> str:
        """Create database ``name`` and return its URI."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.uri(name)

    def terminate(self, database: str) -> int:
        """Close every session on ``database`` (the server stays up); return how many were closed."""
        import psycopg

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                                "AND pid <> pg_backend_pid()", (database,)).fetchall()
        return len(rows)

    def stop(self) -> None:
        """Stop the server by its PID (fast shutdown, then SIGKILL) and delete the cluster (idempotent)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGINT)  # fast shutdown: sessions closed, no waiting for them
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._remove()

    def _remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> Cluster:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Run a throwaway server in the foreground until Ctrl-C; return the exit status."""
    parser = argparse.ArgumentParser(description="Start a throwaway PostgreSQL server on a free loopback port.")
    parser.add_argument("--database", default="crawl", help="database to create (default: crawl)")
    args = parser.parse_args(argv)
    with Cluster(durable=True) as cluster:
        uri = cluster.create_database(args.database)
        print(f"PostgreSQL {cluster.postgres.parent.parent.name} at {uri} (pid {cluster.pid}); Ctrl-C stops it and "
              f"deletes {cluster.folder}", flush=True)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
