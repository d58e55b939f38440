"""`IngestRun`: one `quoteproof ingest` of files into an index, step by step, so that
a face can show progress between the steps and say what was done when it is
interrupted."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from quoteproof.errors import RetrievalError
from quoteproof.index import Index, changed_any
from quoteproof.ingest.chunking import ChunkSettings
from quoteproof.ingest.files import source_name
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.ingest.pipeline import IngestResult, skipped_results
from quoteproof.retrieval.embed_index import EmbedReport
from quoteproof.retrieval.embedder import dense_available
from quoteproof.retrieval.evidence import Calibration
from quoteproof.service.opened import OpenedIndex

__all__ = ["ChunkSettings", "IngestRun", "IngestSettings", "IngestStage", "ParseLimits"]

IngestStage = Literal["files", "vectors", "threshold"]
"""What an ingest is doing: storing files, computing vectors, estimating the
automatic refusal threshold."""


class IngestRun(OpenedIndex):
    """Ingesting the files of `paths` (folders walked) into the index at `location`
    (made when missing) with `settings`, parsing with `jobs` processes; `embed`
    (None: when the dense extra is installed) computes vectors with `embed_model`.

    Call `store_files`, then `embed` when `embeds`, then `finish`; `done`, `stage`
    and `not_done` say how far it got. Raises `IngestError` for a path that does
    not exist, before the index is opened; `StoreError` as `Index.open`.
    """

    def __init__(
        self,
        location: str,
        paths: Iterable[Path],
        settings: IngestSettings,
        *,
        jobs: int = 1,
        embed: bool | None = None,
        embed_model: str | None = None,
    ) -> None:
        discovery = Index.discover_files(paths)
        self.files = discovery.files
        self.skipped = skipped_results(discovery)
        self.settings = settings
        self.jobs = jobs
        self.embeds = dense_available() if embed is None else embed
        """Whether vectors are computed (`embed`)."""
        self.embed_model = embed_model
        self.done: list[IngestResult] = []
        self.stage: IngestStage = "files"
        super().__init__(Index.open(location, create=True))

    @property
    def results(self) -> list[IngestResult]:
        """One result per file stored so far, then one per file the walks skipped."""
        return self.done + self.skipped

    @property
    def not_done(self) -> list[str]:
        """The names of the files not stored yet."""
        return [source_name(path) for path in self.files[len(self.done) :]]

    def store_files(self, on_file: Callable[[IngestResult], None]) -> None:
        """Parse and store every file, calling `on_file` after each (in order); a
        file that fails leaves nothing and the others go on."""

        def file_done(result: IngestResult) -> None:
            self.done.append(result)
            on_file(result)

        self._index.ingest_discovered(
            self.files,
            settings=self.settings,
            jobs=self.jobs,
            on_file=file_done,
            collection=self.settings.collection,
            after=False,
        )

    def embed(
        self, on_start: Callable[[int], None], on_progress: Callable[[int], None]
    ) -> EmbedReport:
        """Compute the vectors of the chunks that lack them (`Index.embed`): before
        `finish`, so that the refusal threshold is estimated on the evidence asks
        will use."""
        self.stage = "vectors"
        return self._index.embed(self.embed_model, on_start=on_start, on_progress=on_progress)

    def refusal_threshold(self) -> Calibration | None:
        """The refusal threshold the index applies now: the user's calibration, else
        the automatic one (None when neither applies: BM25 alone, or too few probes;
        None too when retrieval cannot run)."""
        with warnings.catch_warnings():  # notices on retrieval are for a question
            warnings.simplefilter("ignore")
            try:
                return self._index.calibration() or self._index.automatic_threshold()
            except RetrievalError:
                return None

    def finish(self) -> None:
        """Estimate the automatic refusal threshold when a document changed, and
        record that the ingest finished: the index answers questions again."""
        self.stage = "threshold"
        self._index.after_ingest(changed_any(self.done), embed=False)
