"""Soak test of `quoteproof serve`: concurrent clients for a while, the server killed
with SIGKILL (kill -9) at random moments and restarted, then what was lost.

    python benchmarks/soak.py [--seconds 60] [--kills 2] [--clients 30] [--seed 1]
                              [--settle 60] [--workers 1] [--postgres URL] [--json FILE]

A fresh index holds small generated text and Markdown files and the PDF label of
examples/corpus, ingested as `quoteproof ingest` does (with vectors when the dense
extra is installed, so the server embeds only what is uploaded). Each client loops
over a mix of requests: ask (extractive backend), search, a recorded answer
(`GET /v1/answers/{id}`), the history page, and uploads (`POST /v1/documents`) of a
new small Markdown file whose ingest job it then polls. At `--kills` random moments
the server is killed with SIGKILL and started again on the same port over the same
index. With `--workers N` the server is `serve --workers N` (a kill takes its whole
process group, as a crash of the host would); with `--postgres URL` the index is
that PostgreSQL database (it must be empty), else a SQLite index in a temporary
folder.

At the end, once the last server's jobs have settled (at most `--settle` seconds),
it prints: requests made; errors by kind (5xx; refused while the server was down;
cut off by a kill while in flight; other); uploads accepted (202) against uploads
ingested (lost: accepted but never a document; duplicated: one upload stored as two
documents); the server's peak memory (RSS of its process tree, sampled from /proc);
p50/p95 latencies per endpoint; and the audit log checked entry by entry (broken
links: an entry whose chain hash or signature does not hold, or a head that does
not match). Exit status 0 when the run completed, whatever it
found; the targets in `--json` say what was met.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import httpx2 as httpx  # noqa: E402

from figures import Figures, add_json_option  # noqa: E402
from helpers.load import (  # noqa: E402
    QUESTIONS,
    TOPICS,
    LoadReport,
    free_port,
    start_server,
    wait_until_healthy,
)
from process_memory import tree_memory_kb  # noqa: E402
from quoteproof import Index  # noqa: E402
from quoteproof.audit import LogCheck, verify_log  # noqa: E402
from quoteproof.retrieval.embedder import dense_available  # noqa: E402
from quoteproof.retrieval.retriever import RetrievalNotice  # noqa: E402

ACTIONS = ("ask", "ask", "ask", "search", "search", "search", "answer", "history", "upload")
"""What a client does on each turn, drawn uniformly (so 1 turn in 9 uploads)."""

ERROR_KINDS = ("5xx", "refused during kills", "cut off by a kill", "other")
JOB_POLL_SECONDS = 10.0
"""How long a client polls its upload's ingest job before going on."""
BACKOFF_SECONDS = 0.2
"""A client's pause after a failed request."""
REFUSED_BACKOFF_SECONDS = 1.0
"""A client's pause after a refused connection (the server is restarting)."""
SAMPLE_SECONDS = 0.2
"""How often the server's memory is read."""
PDF = REPO / "examples" / "corpus" / "fda" / "veklury_remdesivir_label_oct2020.pdf"


def write_corpus(folder: Path, count: int) -> list[Path]:
    """`count` small generated text and Markdown files, and the example PDF label."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [PDF]
    for number in range(count):
        topic = TOPICS[number % len(TOPICS)]
        if number % 2:
            path = folder / f"guide-{number:03d}.md"
            body = f"# {topic.title()} guide {number}\n\n## Dosing\n\nTake {topic} with water."
        else:
            path = folder / f"note-{number:03d}.txt"
            body = f"Note {number} on {topic}\n\nPatients on {topic} should report side effects."
        path.write_text(f"{body} Reference soak{number:03d}.\n", encoding="utf-8")
        paths.append(path)
    return paths


class Server:
    """A `quoteproof serve` subprocess on a fixed port that can be killed and restarted.

    `generation` counts kills; `down` is true from a kill until the new server
    answers, so a failed request can tell whether a kill explains it.
    """

    def __init__(self, index: Path | str, log: Path, workers: int = 1) -> None:
        self.index = index
        self.options = ("--workers", str(workers)) if workers > 1 else ()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.generation = 0
        self.down = False
        self.restarts: list[float] = []  # seconds from each kill until healthy again
        self._log = log.open("ab")
        self.process = start_server(index, self._log, self.port, *self.options)
        wait_until_healthy(self.url, self.process, timeout=180)

    def kill_and_restart(self) -> None:
        """SIGKILL the server's process group, then start a new one over the same
        index and port."""
        killed = time.monotonic()
        self.down = True
        self.generation += 1
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = start_server(self.index, self._log, self.port, *self.options)
        wait_until_healthy(self.url, self.process, timeout=180)
        self.down = False
        self.restarts.append(time.monotonic() - killed)

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL if it is still busy after 30 s."""
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@dataclass
class Soak:
    """What the clients saw, gathered from all threads."""

    report: LoadReport = field(default_factory=LoadReport)
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    attempted: set[str] = field(default_factory=set)
    accepted: dict[str, str] = field(default_factory=dict)  # upload name -> job id
    jobs: Counter[str] = field(default_factory=Counter)  # how each polled job ended
    answer_ids: list[str] = field(default_factory=list)
    peak_rss: int = 0
    audit: LogCheck | None = None  # the audit log checked once the server stopped
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, kind: str, message: str) -> None:
        with self._lock:
            self.errors[kind] += 1
            shown = self.examples.setdefault(kind, [])
            if len(shown) < 3:
                shown.append(message)

    def count_job(self, outcome: str) -> None:
        with self._lock:
            self.jobs[outcome] += 1


def _request(
    client: httpx.Client,
    server: Server,
    soak: Soak,
    endpoint: str,
    method: str,
    url: str,
    allowed: tuple[int, ...] = (),
    **options: object,
) -> httpx.Response | None:
    """Send one request; record its latency, or its error by kind (None then).
    Statuses in `allowed` are answers too (a job unknown after a restart: 404)."""
    generation = server.generation
    started = time.perf_counter()
    try:
        response = client.request(method, url, **options)  # type: ignore[arg-type]
    except httpx.TransportError as exc:
        if server.down or server.generation != generation:
            kind = "refused during kills"
            if not isinstance(exc, httpx.ConnectError):
                kind = "cut off by a kill"
        else:
            kind = "other"
        soak.error(kind, f"{endpoint}: {type(exc).__name__}: {exc}")
        refused = isinstance(exc, httpx.ConnectError)
        time.sleep(REFUSED_BACKOFF_SECONDS if refused else BACKOFF_SECONDS)
        return None
    elapsed = (time.perf_counter() - started) * 1000
    status = response.status_code
    if status >= 400 and status not in allowed:
        kind = "5xx" if status >= 500 else "other"
        soak.error(kind, f"{endpoint}: HTTP {status} {response.text[:200]}")
        time.sleep(BACKOFF_SECONDS)
        return None
    soak.report.add(endpoint, elapsed)
    return response


def _upload(
    client: httpx.Client, server: Server, soak: Soak, name: str, topic: str, stop: float
) -> None:
    """Upload a new Markdown file named `name`, then poll its job for a while."""
    text = f"# Upload {name}\n\nSoak upload {name} is about {topic}.\n"
    soak.attempted.add(name)
    files = [("file", (name, text.encode(), "text/markdown"))]
    response = _request(client, server, soak, "upload", "POST", "/v1/documents", files=files)
    if response is None or response.status_code != 202:
        return
    job = response.json()["job"]
    soak.accepted[name] = job
    deadline = min(time.monotonic() + JOB_POLL_SECONDS, stop + JOB_POLL_SECONDS)
    while time.monotonic() < deadline:
        polled = _request(client, server, soak, "job", "GET", f"/v1/jobs/{job}", allowed=(404,))
        if polled is not None and polled.status_code == 404:
            soak.count_job("unknown after a restart")
            return
        if polled is not None and polled.json()["state"] in ("done", "failed"):
            soak.count_job(polled.json()["state"])
            return
        time.sleep(0.5)
    soak.count_job("still running when polling stopped")


def _client(server: Server, soak: Soak, number: int, seed: int, stop: float) -> None:
    rng = random.Random(seed * 1000 + number)
    turn = 0
    with httpx.Client(base_url=server.url, timeout=60) as client:
        while time.monotonic() < stop:
            turn += 1
            action = rng.choice(ACTIONS)
            question = rng.choice(QUESTIONS)
            if action == "ask":
                body = {"question": question}
                response = _request(client, server, soak, "ask", "POST", "/v1/ask", json=body)
                if response is not None:
                    soak.answer_ids.append(response.headers["X-Answer-Id"])
            elif action == "answer" and soak.answer_ids:
                answer = rng.choice(soak.answer_ids)
                _request(client, server, soak, "answer", "GET", f"/v1/answers/{answer}")
            elif action == "history":
                _request(client, server, soak, "history", "GET", "/history")
            elif action == "upload":
                name = f"soak-{number:02d}-{turn:05d}.md"
                _upload(client, server, soak, name, rng.choice(TOPICS), stop)
            else:
                params = {"q": question, "top_k": 5}
                _request(client, server, soak, "search", "GET", "/v1/search", params=params)


def _sample_memory(server: Server, soak: Soak, done: threading.Event) -> None:
    while not done.wait(SAMPLE_SECONDS):
        soak.peak_rss = max(soak.peak_rss, tree_memory_kb(server.process.pid, "VmRSS") * 1024)


def _settle(server: Server, soak: Soak, seconds: float) -> dict[str, str]:
    """Wait (at most `seconds`) until no accepted job is queued or running on the
    last server; return the state of every accepted job then ("unknown" for a job
    the last server does not know: it was lost with a killed one)."""
    deadline = time.monotonic() + seconds
    states: dict[str, str] = {}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        while True:
            for job in set(soak.accepted.values()):
                response = client.get(f"/v1/jobs/{job}")
                found = response.status_code != 404
                states[job] = response.json()["state"] if found else "unknown"
            settled = all(state in ("done", "failed", "unknown") for state in states.values())
            if settled or time.monotonic() > deadline:
                return states
            time.sleep(0.5)


@dataclass(frozen=True)
class Uploads:
    """Accepted uploads against the documents listed at the end."""

    attempted: int
    accepted: int
    ingested: int
    lost: int  # accepted, never stored, its job ended or unknown to the last server
    lost_to_kills: int  # of `lost`: jobs the last server does not know
    pending: int  # accepted, not stored, its job still queued or running after the settle wait
    duplicated: int
    unacknowledged: int  # ingested though the client never saw its 202 (cut off)

    @classmethod
    def count(cls, soak: Soak, source_paths: list[str], jobs: dict[str, str]) -> Uploads:
        """Count the uploads of `soak` given the documents listed at the end and the
        final state of each accepted job (`_settle`)."""
        stored = Counter(Path(path).name for path in source_paths)
        accepted = set(soak.accepted)
        missing = {name for name in accepted if not stored[name]}
        state = {name: jobs.get(soak.accepted[name], "unknown") for name in missing}
        lost = {name for name in missing if state[name] in ("done", "failed", "unknown")}
        return cls(
            attempted=len(soak.attempted),
            accepted=len(accepted),
            ingested=len(accepted) - len(missing),
            lost=len(lost),
            lost_to_kills=sum(1 for name in lost if state[name] == "unknown"),
            pending=len(missing - lost),
            duplicated=sum(1 for name in soak.attempted if stored[name] > 1),
            unacknowledged=sum(1 for name in soak.attempted - accepted if stored[name]),
        )


def run(args: argparse.Namespace, root: Path) -> tuple[Soak, Server, Uploads]:
    """Build the index, serve it, run the clients and the kills; count the uploads."""
    location = args.postgres or str(root / "index")
    with Index.open(location, create=True) as index:
        index.ingest(write_corpus(root / "corpus", 20))
    server = Server(location, root / "server.log", args.workers)
    soak = Soak()
    rng = random.Random(args.seed)
    started = time.monotonic()
    stop = started + args.seconds
    kills = sorted(rng.uniform(0.15, 0.85) * args.seconds for _ in range(args.kills))
    done = threading.Event()
    sampler = threading.Thread(target=_sample_memory, args=(server, soak, done), daemon=True)
    sampler.start()
    clients = [
        threading.Thread(target=_client, args=(server, soak, n, args.seed, stop))
        for n in range(args.clients)
    ]
    try:
        for thread in clients:
            thread.start()
        for moment in kills:
            time.sleep(max(0.0, started + moment - time.monotonic()))
            server.kill_and_restart()
        for thread in clients:
            thread.join()
        soak.report.seconds = time.monotonic() - started
        jobs = _settle(server, soak, args.settle)
        with httpx.Client(base_url=server.url, timeout=60) as client:
            listed = client.get("/v1/documents").json()["documents"]
    finally:
        done.set()
        server.stop()
    with Index.open(location) as index:
        soak.audit = verify_log(index.store, index.signing_key())
    return soak, server, Uploads.count(soak, [item["source_path"] for item in listed], jobs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=60.0, help="How long clients run.")
    parser.add_argument("--kills", type=int, default=2, help="SIGKILLs of the server.")
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1, help="Seeds the kill moments and mix.")
    parser.add_argument("--settle", type=float, default=60.0, help="Most seconds to wait for jobs.")
    parser.add_argument("--workers", type=int, default=1, help="serve --workers N.")
    parser.add_argument("--postgres", help="An empty PostgreSQL database to index into.")
    add_json_option(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RetrievalNotice)
    with tempfile.TemporaryDirectory() as tmp:
        soak, server, uploads = run(args, Path(tmp))
    restarts = ", ".join(f"{seconds:.1f} s" for seconds in server.restarts) or "none"
    retrieval = "BM25 + dense" if dense_available() else "BM25"
    print(
        f"{args.clients} clients for {args.seconds:g} s (the last request in flight ended at "
        f"{soak.report.seconds:.1f} s) against quoteproof serve ({args.workers} worker(s), "
        f"{'PostgreSQL' if args.postgres else 'SQLite'}, extractive backend, "
        f"{retrieval}), killed with SIGKILL {len(server.restarts)} times (back up after "
        f"{restarts})"
    )
    for line in soak.report.lines():
        print(line)
    out = figures(soak, uploads)
    for note in out.notes:
        print(note)
    for kind in ERROR_KINDS:
        for example in soak.examples.get(kind, []):
            print(f"  {kind}: {example}")
    out.write(args.json)
    return 0


def figures(soak: Soak, uploads: Uploads) -> Figures:
    """Latencies per endpoint, errors by kind, uploads lost and duplicated, peak RSS;
    notes say the same in words, targets what a robust server would meet."""
    out = Figures("soak")
    for s in soak.report.stats():
        out.add(f"p50 ms, {s.endpoint}", s.p50_ms, "ms")
        out.add(f"p95 ms, {s.endpoint}", s.p95_ms, "ms")
    out.add("requests", soak.report.requests, "requests")
    for kind in ERROR_KINDS:
        out.add(f"errors, {kind}", soak.errors[kind], "requests")
    out.add("uploads accepted", uploads.accepted, "files")
    out.add("uploads lost", uploads.lost, "files")
    out.add("uploads still queued", uploads.pending, "files")
    out.add("uploads duplicated", uploads.duplicated, "files")
    out.add("peak RSS", soak.peak_rss / 2**20, "MiB")
    audit = soak.audit
    out.add("audit entries", audit.entries if audit else 0, "entries")
    out.add("audit problems", len(audit.problems) if audit else 0, "problems")
    errors = " · ".join(f"{kind} {soak.errors[kind]}" for kind in ERROR_KINDS)
    jobs = ", ".join(f"{count} {outcome}" for outcome, count in sorted(soak.jobs.items()))
    out.note(f"requests: {soak.report.requests} answered, {sum(soak.errors.values())} failed")
    out.note(f"errors: {errors}")
    out.note(
        f"uploads: {uploads.attempted} tried, {uploads.accepted} accepted (202), "
        f"{uploads.ingested} ingested, {uploads.lost} lost (accepted, never ingested; "
        f"{uploads.lost_to_kills} of them with a killed server), "
        f"{uploads.pending} still queued after the settle wait, {uploads.duplicated} "
        f"duplicated, {uploads.unacknowledged} ingested without a 202 seen; jobs polled by "
        f"the clients: {jobs or 'none'}"
    )
    if audit is not None:
        out.note(
            f"audit log: {audit.entries} entries, {len(audit.problems)} broken links"
            + "".join(f"\n  audit: {problem}" for problem in audit.problems)
        )
    out.note(f"server memory: peak RSS {soak.peak_rss / 2**20:.0f} MiB (process tree, /proc)")
    out.target("no 5xx", not soak.errors["5xx"])
    out.target("no errors but those of the kills", not soak.errors["other"])
    out.target("no accepted upload lost", not uploads.lost)
    out.target("no upload duplicated", not uploads.duplicated)
    out.target("audit chain unbroken", audit is not None and audit.intact)
    return out


if __name__ == "__main__":
    sys.exit(main())
