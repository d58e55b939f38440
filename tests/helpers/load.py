"""A load run against a real `quoteproof serve` on 127.0.0.1: concurrent clients ask
and search while an upload is ingested in the background; shared by the bounded
test (tests/server/test_load.py) and `benchmarks/serve.py`."""

from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx2 as httpx

UPLOAD_BATCH = 50  # files per upload request (the server takes at most 100)
QUESTIONS = (
    "What are the early signs of shingles?",
    "What is normal blood pressure for adults?",
    "What causes obstructive sleep apnea?",
    "What should be done if signs of a hypersensitivity reaction to remdesivir occur?",
    "How much weight loss can delay or prevent type 2 diabetes?",
)
TOPICS = ("aspirin", "ibuprofen", "insulin", "warfarin", "metformin", "statin", "antacid")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(
    index: Path | str, log: IO[bytes], port: int, *options: str
) -> subprocess.Popen[bytes]:
    """Start `quoteproof serve --no-auth` (with `options`) on 127.0.0.1:`port`, output
    to `log`, in a process group of its own (not waiting for it: see
    `wait_until_healthy`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "quoteproof", "serve", "--index", str(index),
         "--no-auth", "--host", "127.0.0.1", "--port", str(port), *options],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Wait until `GET url/v1/health` answers 200; RuntimeError if `process` ends or
    `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the server at {url} did not start")
        time.sleep(0.2)


@contextmanager
def serving(
    index: Path | str,
    upload_dir: Path,
    log: Path,
    options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`quoteproof serve --no-embed` (with `options` and the environment variables
    `env`) on a free loopback port, once it answers: its URL and process. Then
    stopped with SIGTERM (uvicorn's supervisor stops its workers), and its process
    group killed."""
    port = free_port()
    with log.open("a") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "quoteproof", "serve", "--index", str(index),
             "--upload-dir", str(upload_dir), "--no-embed",
             "--host", "127.0.0.1", "--port", str(port), *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until_healthy(url, process)
        except RuntimeError as exc:
            raise AssertionError(log.read_text()) from exc
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        finally:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def running_server(index: Path, workers_log: Path) -> Iterator[str]:
    """Start `quoteproof serve --no-auth` on a free loopback port; yield its URL."""
    port = free_port()
    with workers_log.open("wb") as log:
        process = start_server(index, log, port)
        url = f"http://127.0.0.1:{port}"
        try:
            try:
                wait_until_healthy(url, process)
            except RuntimeError as exc:
                raise RuntimeError(f"{exc}: see {workers_log}") from None
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def make_documents(folder: Path, count: int) -> list[Path]:
    """`count` small, distinct Markdown documents to upload during the run."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(count):
        topic = TOPICS[number % len(TOPICS)]
        path = folder / f"note-{number:04d}.md"
        path.write_text(
            f"# Note {number} on {topic}\n\nLoad note {number}: {topic} is discussed in "
            f"paragraph {number}, marker qp{number:04d}x.\n",
            encoding="utf-8",
        )
        paths.append(path)
    return paths


@dataclass(frozen=True)
class EndpointStats:
    """Requests of one endpoint (or `all`) over a run: count, per second, p50/p95 ms."""

    endpoint: str
    requests: int
    per_second: float
    p50_ms: float
    p95_ms: float

    @classmethod
    def of(cls, endpoint: str, values: list[float], seconds: float) -> EndpointStats:
        cuts = statistics.quantiles(values, n=20) if len(values) > 1 else values * 19
        return cls(
            endpoint, len(values), len(values) / seconds, statistics.median(values), cuts[18]
        )


@dataclass
class LoadReport:
    """What the clients saw: latencies (ms) per endpoint and every failure."""

    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    uploaded: int = 0
    job_state: str = ""
    listed_before: int = 0
    listed_after: int = 0
    distinct_paths_after: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, endpoint: str, milliseconds: float) -> None:
        with self._lock:
            self.latencies.setdefault(endpoint, []).append(milliseconds)

    def fail(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def stats(self) -> list[EndpointStats]:
        """Per endpoint (sorted by name), then `all`; none when no request completed."""
        if not self.requests:
            return []
        every = [v for values in self.latencies.values() for v in values]
        named = sorted(self.latencies.items())
        return [EndpointStats.of(name, values, self.seconds) for name, values in named] + [
            EndpointStats.of("all", every, self.seconds)
        ]

    def lines(self) -> list[str]:
        """The report as table lines: requests/s and p50/p95 per endpoint."""
        if not self.requests:
            return ["no request completed"]
        rows = [f"{'endpoint':<12} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8}"]
        for s in self.stats():
            rows.append(
                f"{s.endpoint:<12} {s.requests:>8} {s.per_second:>7.1f} "
                f"{s.p50_ms:>8.1f} {s.p95_ms:>8.1f}"
            )
        return rows


def _client(url: str, number: int, stop: float, report: LoadReport) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        turn = number
        while time.monotonic() < stop:
            question = QUESTIONS[turn % len(QUESTIONS)]
            if turn % 2:
                endpoint, started = "ask", time.perf_counter()
                response = client.post("/v1/ask", json={"question": question})
            else:
                endpoint, started = "search", time.perf_counter()
                response = client.get("/v1/search", params={"q": question, "top_k": 5})
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                report.fail(f"{endpoint}: HTTP {response.status_code} {response.text[:200]}")
            else:
                report.add(endpoint, elapsed)
            turn += 1


def _wait_for_jobs(admin: httpx.Client, jobs: list[str], deadline: float) -> str:
    """Poll the ingest jobs until all end; "done" when all succeeded, else the first
    other state seen (or "timeout")."""
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = {job: admin.get(f"/v1/jobs/{job}").json()["state"] for job in jobs}
        if all(state in ("done", "failed") for state in states.values()):
            failed = [state for state in states.values() if state != "done"]
            return failed[0] if failed else "done"
        time.sleep(0.5)
    return "timeout"


def run_load(url: str, documents: list[Path], clients: int, seconds: float) -> LoadReport:
    """Run `clients` concurrent clients for `seconds` while `documents` are uploaded
    and ingested in the background; then check that every uploaded document is
    listed exactly once."""
    report = LoadReport()
    with httpx.Client(base_url=url, timeout=120) as admin:
        report.listed_before = len(admin.get("/v1/documents").json()["documents"])
        jobs = []
        for first in range(0, len(documents), UPLOAD_BATCH):
            batch = documents[first : first + UPLOAD_BATCH]
            files = [("file", (p.name, p.read_bytes(), "text/markdown")) for p in batch]
            accepted = admin.post("/v1/documents", files=files)
            if accepted.status_code != 202:
                report.fail(f"upload: HTTP {accepted.status_code} {accepted.text[:200]}")
                return report
            report.uploaded += len(batch)
            jobs.append(accepted.json()["job"])
        started = time.monotonic()
        threads = [
            threading.Thread(target=_client, args=(url, n, started + seconds, report))
            for n in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report.seconds = time.monotonic() - started
        report.job_state = _wait_for_jobs(admin, jobs, deadline=time.monotonic() + 300)
        listed = admin.get("/v1/documents").json()["documents"]
        report.listed_after = len(listed)
        report.distinct_paths_after = len({d["source_path"] for d in listed})
    return report
