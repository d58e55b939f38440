"""Uploads onto a full disk: a real `quoteproof serve` whose upload folder is a
small tmpfs of its own (a mount namespace made with `unshare`), so the disk fills
for real (ENOSPC from write(2)). The upload is answered with a JSON error and
leaves nothing under the upload folder; once there is room again, uploads work.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest

from helpers.load import free_port, wait_until_healthy
from quoteproof.index import Index

DISK_KB = 256
UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"]


@dataclass
class SmallDiskServer:
    url: str
    uploads: Path
    """The upload folder as the server sees it (through /proc/PID/root)."""

    def upload(self, name: str, body: bytes) -> httpx.Response:
        return httpx.post(
            f"{self.url}/v1/documents",
            files=[("file", (name, body, "text/plain"))],
            timeout=60,
        )

    def left_behind(self) -> list[str]:
        """Every file and folder under the upload folder but the (empty) journal folder."""
        return sorted(
            str(path.relative_to(self.uploads))
            for path in self.uploads.rglob("*")
            if path.name != ".jobs" or any(path.iterdir())
        )


def namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*UNSHARE, "true"], capture_output=True).returncode == 0


@pytest.fixture
def small_disk_server(tmp_path: Path) -> Iterator[SmallDiskServer]:
    if not namespaces_work():
        pytest.skip("needs unshare with user and mount namespaces")
    files = tmp_path / "files"
    files.mkdir()
    (files / "a.md").write_text("# Otters\n\nOtters hold hands while they sleep.\n")
    index = tmp_path / "index"
    with Index.open(index, create=True) as opened:
        opened.ingest([files], embed=False)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    port = free_port()
    mount = f'mount -t tmpfs -o size={DISK_KB}k tmpfs "$0" && exec "$@"'
    command = [
        *UNSHARE, "sh", "-c", mount, str(uploads),
        sys.executable, "-m", "quoteproof", "serve", "--index", str(index), "--no-auth",
        "--port", str(port), "--upload-dir", str(uploads), "--no-embed",
    ]  # fmt: skip
    with (tmp_path / "server.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(url, process)
            seen = Path(f"/proc/{process.pid}/root") / uploads.relative_to("/")
            yield SmallDiskServer(url, seen)
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.mark.parametrize(
    "size",
    [4 * DISK_KB * 1024, DISK_KB * 1024],
    ids=["the file does not fit", "the file fits, its job record does not"],
)
def test_an_upload_onto_a_full_disk_is_a_json_error_that_leaves_nothing(
    small_disk_server: SmallDiskServer, size: int
) -> None:
    server = small_disk_server
    line = b"Otters hold hands while they sleep.\n"
    big = (line * (size // len(line) + 1))[:size]
    response = server.upload("otters.txt", big)
    assert response.status_code == 507, response.text
    assert response.json() == {
        "error": "the upload could not be stored: No space left on device (nothing of it was kept)"
    }
    assert server.left_behind() == []
    small = server.upload("small.txt", b"Otters also hold hands in the water.\n")
    assert small.status_code == 202, small.text
