"""Site leases on a real PostgreSQL server: one owner per site, fencing, takeovers of killed and stale workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import psycopg
import pytest

from templates_db.pgstate import PostgresCrawlState, application_name
from templates_db.state import CrawlStateError, LeaseLost, PageOutcome, QueuedPage, open_state

SITES = ["a", "b", "c", "d", "e", "f"]
KEEPALIVE = 3600.0  # s: no lease in these tests gets old by itself; staleness is made by moving its time back
JOIN_TIMEOUT_S = 120


@pytest.fixture
def workers(pg_uri: str) -> Iterator[list[PostgresCrawlState]]:
    opened: list[PostgresCrawlState] = []
    for name in ("w1", "w2"):
        state = PostgresCrawlState(pg_uri, timeout=5, worker=name)
        state.start_leasing(name, KEEPALIVE)
        opened.append(state)
    yield opened
    for state in opened:
        state.close()


def _done(url: str, site: str, round_number: int = 1) -> PageOutcome:
    return PageOutcome(url=url, site=site, status="done", depth=1, round=round_number, fetched_at=time.time())


def test_each_site_has_one_owner_and_unfinished_rounds_go_first(workers: list[PostgresCrawlState]) -> None:
    one, two = workers
    first = one.claim(SITES, 2, 0.0, KEEPALIVE)
    second = two.claim(SITES, 10, 0.0, KEEPALIVE)
    assert [c.site for c in first] == ["a", "b"]
    assert [c.site for c in second] == ["c", "d", "e", "f"]  # never one of the other's
    assert one.claim(SITES, 10, 0.0, KEEPALIVE) == []  # everything is held
    assert all(c.round.number == 1 and not c.round.resumed and c.epoch == 1 for c in first + second)
    one.release("a", first[0].round, finished=True)
    one.release("b", first[1].round, finished=False)  # stopped: its round is left to resume
    leases = one.leases()
    assert leases["a"].owner is None and leases["c"].owner == "w2" and leases["c"].renewed_age is not None
    # The unfinished round first, then the finished site (its next round is due: interval 0).
    again = one.claim(SITES, 2, 0.0, KEEPALIVE)
    assert [(c.site, c.round.number, c.round.resumed, c.epoch) for c in again] == [("b", 1, True, 2),
                                                                                    ("a", 2, False, 2)]


def test_a_finished_round_is_not_due_again_within_the_interval(workers: list[PostgresCrawlState]) -> None:
    one, two = workers
    (claim,) = one.claim(["a"], 1, 3600.0, KEEPALIVE)
    one.release("a", claim.round, finished=True)
    assert two.claim(["a"], 1, 3600.0, KEEPALIVE) == []  # begun less than an hour ago: crawled this period
    (later,) = two.claim(["a"], 1, 0.0, KEEPALIVE)
    assert later.round.number == 2


def test_a_worker_that_lost_its_lease_writes_nothing_more_for_the_site(workers: list[PostgresCrawlState],
                                                                       pg_uri: str) -> None:
    one, two = workers
    (claim,) = one.claim(["a"], 1, 0.0, KEEPALIVE)
    one.enqueue([QueuedPage("http://a/1", "a", 1, round=claim.round.number)])
    # w1 stops renewing (hung, SIGSTOP): its lease is made older than the keepalive of the next claimer.
    with psycopg.connect(pg_uri, autocommit=True, options="-c search_path=crawl_state") as conn:
        conn.execute("UPDATE leases SET renewed_at = renewed_at - 100 WHERE site = 'a'")
    assert two.claim(["a"], 1, 0.0, 10.0) == []  # the holder's sessions are ended on the way...
    assert two.stale_ended >= 2  # its lease session and its state session
    (taken,) = two.claim(["a"], 1, 0.0, 10.0)  # ...and its site is free
    assert (taken.previous_owner, taken.epoch, taken.round.resumed) == ("w1", 2, True)
    with pytest.raises(CrawlStateError):  # w1's sessions are gone: nothing it sends reaches the state
        one.complete(_done("http://a/1", "a"))
    assert [q.url for q in two.queued("a", 3)] == ["http://a/1"]  # resumed by its new owner


def test_fencing_refuses_a_write_with_an_old_epoch(workers: list[PostgresCrawlState], pg_uri: str) -> None:
    one, _ = workers
    (claim,) = one.claim(["a"], 1, 0.0, KEEPALIVE)
    one.complete(_done("http://a/1", "a"))
    with psycopg.connect(pg_uri, autocommit=True, options="-c search_path=crawl_state") as conn:
        conn.execute("UPDATE leases SET epoch = epoch + 1, owner = 'w3' WHERE site = 'a'")  # another's claim
    for write in (lambda: one.complete(_done("http://a/2", "a")),
                  lambda: one.enqueue([QueuedPage("http://a/3", "a", 1)]),
                  lambda: one.visit_aux("http://a/feed", "a", "feed", 1),
                  lambda: one.end_run({"a": claim.round}, finished=True),
                  lambda: one.release("a", claim.round, finished=True)):
        with pytest.raises(LeaseLost):
            write()
    assert set(one.known(["http://a/1", "http://a/2", "http://a/3"])) == {"http://a/1"}
    assert one.summary()["a"]["completed_round"] == 0
    with pytest.raises(LeaseLost):  # a site it never claimed
        one.complete(_done("http://b/1", "b"))


def test_renew_reports_the_sites_taken_away(workers: list[PostgresCrawlState], pg_uri: str) -> None:
    one, _ = workers
    one.claim(["a", "b"], 2, 0.0, KEEPALIVE)
    assert one.renew() == []
    with psycopg.connect(pg_uri, autocommit=True, options="-c search_path=crawl_state") as conn:
        conn.execute("UPDATE leases SET owner = NULL WHERE site = 'b'")
    assert one.renew() == ["b"] and set(one.held()) == {"a"}


def test_the_budget_of_a_resumed_round_comes_from_the_state(workers: list[PostgresCrawlState]) -> None:
    one, two = workers
    (claim,) = one.claim(["a"], 1, 0.0, KEEPALIVE)
    one.enqueue([QueuedPage(f"http://a/{n}", "a", 1, round=claim.round.number) for n in range(5)])
    for n in range(3):
        one.complete(_done(f"http://a/{n}", "a"))
    one.release("a", claim.round, finished=False)
    (resumed,) = two.claim(["a"], 1, 0.0, KEEPALIVE)
    assert resumed.round.resumed
    assert two.completed_in_round("a", resumed.round.number, 3) == 3  # the 2 queued are scheduled again
    assert len(two.queued("a", 3)) == 2


def test_two_workers_of_one_name_are_refused(pg_uri: str, workers: list[PostgresCrawlState]) -> None:
    twin = PostgresCrawlState(pg_uri, timeout=5, worker="w1")
    try:
        with pytest.raises(CrawlStateError, match="another worker named 'w1'"):
            twin.start_leasing("w1", KEEPALIVE)
    finally:
        twin.close()


_HOLDER = """
import sys, time
from templates_db.pgstate import PostgresCrawlState
state = PostgresCrawlState(sys.argv[1], worker="killed")
state.start_leasing("killed", 3600)
print(",".join(c.site for c in state.claim(["a", "b", "c"], 2, 0.0, 3600)), flush=True)
time.sleep(600)
"""


def test_a_killed_workers_sites_are_free_at_once(workers: list[PostgresCrawlState], pg_uri: str) -> None:
    one, _ = workers
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, pg_uri], stdout=subprocess.PIPE, text=True,
                              cwd=os.getcwd(), start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "a,b"
        assert [c.site for c in one.claim(["a", "b", "c"], 3, 0.0, KEEPALIVE)] == ["c"]
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(JOIN_TIMEOUT_S)
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
    _wait_until_gone(pg_uri, application_name("killed"))  # the server notices the closed socket (milliseconds)
    # No keepalive to wait out: the killed worker's session, and its locks, ended with it.
    taken = one.claim(["a", "b", "c"], 3, 0.0, KEEPALIVE)
    assert [(c.site, c.previous_owner, c.epoch) for c in taken] == [("a", "killed", 2), ("b", "killed", 2)]


def _wait_until_gone(uri: str, application: str) -> None:
    deadline = time.monotonic() + 30
    with psycopg.connect(uri, autocommit=True) as conn:
        while conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = %s",
                           (application,)).fetchone() != (0,):
            assert time.monotonic() < deadline, "the killed worker's sessions did not end"
            time.sleep(0.01)


_CLAIMER = """
import sys
from templates_db.pgstate import PostgresCrawlState
state = PostgresCrawlState(sys.argv[1], worker=sys.argv[2])
state.start_leasing(sys.argv[2], 3600)
print("ready", flush=True)
sys.stdin.readline()  # go: every claimer at once
print(",".join(claim.site for claim in state.claim(sys.argv[3].split(","), 4, 0.0, 3600)), flush=True)
sys.stdin.readline()  # holds its leases until every claimer has claimed
"""

_ADDER = """
import sys, types
from templates_db.state import open_state
state = open_state(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
print(state.add(sys.argv[2], types.SimpleNamespace(text_hash="same-text", signature=None), []) or "", flush=True)
"""


def _at_once(scripts: list[list[str]], steps: int) -> list[list[str]]:
    """Run each ``python -c`` script, start them together once all are ready, and return each one's ``steps`` output
    lines (a line sent to every stdin between steps)."""
    processes = [subprocess.Popen([sys.executable, "-c", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd=os.getcwd()) for args in scripts]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        outputs: list[list[str]] = [[] for _ in processes]
        for _ in range(steps):
            for process in processes:
                assert process.stdin is not None
                process.stdin.write("go\n")
                process.stdin.flush()
            for output, process in zip(outputs, processes, strict=True):
                assert process.stdout is not None
                output.append(process.stdout.readline().strip())
        for process in processes:
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(JOIN_TIMEOUT_S) == 0
        return outputs
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()


def test_workers_starting_at_once_never_claim_a_site_twice(pg_uri: str) -> None:
    open_state(pg_uri).close()  # the schema, made once
    outputs = _at_once([[_CLAIMER, pg_uri, f"w{n}", ",".join(SITES)] for n in range(3)], 1)
    sites = [site for (line,) in outputs for site in line.split(",") if site]
    assert sorted(sites) == SITES  # each once, every one (4 + 2 + 0, in some order of the workers)


def test_the_first_writer_of_a_text_wins_across_processes(pg_uri: str) -> None:
    open_state(pg_uri).close()
    keys = [f"http://{site}/same" for site in "xyz"]
    outputs = _at_once([[_ADDER, pg_uri, key] for key in keys], 1)
    winners = {key: line for key, (line,) in zip(keys, outputs, strict=True)}
    (first,) = [key for key, winner in winners.items() if not winner]
    assert all(winner == first for key, winner in winners.items() if key != first)
    state = open_state(pg_uri)
    assert state.by_hash("same-text") == first
    state.close()
