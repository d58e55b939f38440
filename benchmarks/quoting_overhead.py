"""How much time the non-LLM part of `ask` takes, next to retrieval alone.

For every question: retrieval (BM25 top 5) is timed on its own; then the quoting
layer is timed on the same hits: prompt building, parsing a realistic model reply
(a whole-chunk quote, an exact quote, a paraphrased quote, cited prose), resolving
it against the index, and rendering JSON and terminal text. The model's own time is
excluded (the simulated model records it and it is subtracted).

Run: .venv/bin/python benchmarks/quoting_overhead.py [--scifact-queries N] [--json FILE]
Corpora: examples/corpus (demo) and ../shared/data/beir-scifact (5,183 abstracts).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import scifact
from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.llm.base import (
    Capability,
    Completion,
    CompletionRequest,
    TextSink,
    model_capabilities,
)
from quoteproof.model import Chunk
from quoteproof.render.json import render_json
from quoteproof.render.terminal import render_text
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.quote import answer_quote
from quoteproof.strategies.session import AnswerSession

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 5.0
"""The quoting layer's mean time per answer, in ms, below this."""
RETRIEVAL = "retrieval alone (BM25 top 5)"


def paraphrase(words: list[str], rng: random.Random) -> str:
    """Light edits a model makes when it 'quotes': a dropped word, a case change."""
    edited = list(words)
    if len(edited) > 6:
        del edited[rng.randrange(1, len(edited) - 1)]
    edited[0] = edited[0].lower()
    return " ".join(edited)


class SimulatedModel:
    """A backend that writes a realistic protocol reply instantly, timing itself."""

    name = "simulated"
    model: str | None = "simulated"
    server: str | None = None
    capabilities: frozenset[Capability] = model_capabilities(constrained=False)

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.seconds = 0.0

    def excess_tokens(self, request: CompletionRequest) -> int:
        """No context limit: every prompt fits."""
        return 0

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        text = self.reply(request.sources)
        self.seconds += time.perf_counter() - started
        return Completion(text=text, model=self.model)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        completion = self.complete(request)
        on_text(completion.text)
        return completion

    def reply(self, sources: Sequence[Chunk]) -> str:
        parts = [
            f"The sources address this [{sources[0].ref}].",
            f'<quote ref="{sources[0].ref}"/>',
        ]
        for chunk in sources[1:3]:
            words = chunk.text.split()
            start = self.rng.randrange(0, max(1, len(words) - 25))
            exact = " ".join(words[start : start + 20])
            parts.append(f'<quote ref="{chunk.ref}">{exact}</quote>')
            edited = paraphrase(words[start : start + 20], self.rng)
            parts.append(f'<quote ref="{chunk.ref}">{edited}</quote>')
        return "\n".join(parts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row(name: str, values: list[float]) -> None:
    print(
        f"  {name:44} {statistics.mean(values):8.2f} {percentile(values, 0.5):8.2f} "
        f"{percentile(values, 0.95):8.2f}"
    )


def measure(index: Index, questions: list[str], label: str, out: Figures) -> None:
    """Time each part for `questions`, print the table of `label`, and add to `out` the
    quoting layer's mean ms/answer (JSON and terminal output) next to retrieval alone."""
    lookup = StoreLookup(index.store)
    retrieval, resolve, as_json, as_text = [], [], [], []
    quotes = fuzzy = 0
    for question in questions:
        started = time.perf_counter()
        hits = index.search(question, top_k=5)
        retrieval.append((time.perf_counter() - started) * 1000)
        if not hits:
            continue
        model = SimulatedModel()
        started = time.perf_counter()
        answer = answer_quote(AnswerSession(question, hits, model, lookup, "quote"))
        resolve.append((time.perf_counter() - started - model.seconds) * 1000)
        started = time.perf_counter()
        render_json(answer)
        as_json.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        render_text(answer)
        as_text.append((time.perf_counter() - started) * 1000)
        quotes += len(answer.quotes)
        fuzzy += sum(q.match == "fuzzy" for q in answer.quotes)
    layer_json = [r + j for r, j in zip(resolve, as_json, strict=True)]
    layer_text = [r + t for r, t in zip(resolve, as_text, strict=True)]
    counts = f"{len(questions)} questions, {len(resolve)} answered"
    print(f"\n{label}: {counts}, {quotes} quotes ({fuzzy} fuzzy)")
    print(f"  {'':44} {'mean':>8} {'p50':>8} {'p95':>8}  (ms)")
    row(RETRIEVAL, retrieval)
    row("prompt + parse + resolve", resolve)
    row("render JSON", as_json)
    row("render terminal (rich)", as_text)
    row("quoting layer, JSON output", layer_json)
    row("quoting layer, terminal output", layer_text)
    row(
        "non-LLM ask, JSON (retrieval + quoting)",
        [a + b for a, b in zip(retrieval, layer_json, strict=False)],
    )
    worst = max(statistics.mean(layer_json), statistics.mean(layer_text))
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    line = (
        f"quoting layer adds at most {worst:.2f} ms per answer (mean): {verdict} "
        f"(target < {TARGET_MS:g} ms)"
    )
    print(f"  {line}")
    for output, values in (("JSON", layer_json), ("terminal", layer_text)):
        out.add(
            f"quoting layer ms/answer ({output}), {label}",
            statistics.mean(values),
            "ms",
            RETRIEVAL,
            statistics.mean(retrieval),
        )
    out.note(line)
    out.target(f"{label}: quoting layer < {TARGET_MS:g} ms per answer (mean)", worst < TARGET_MS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact-queries", type=int, default=300)
    add_json_option(parser)
    args = parser.parse_args()
    out = Figures("quoting")
    run(args.scifact_queries, out)
    out.write(args.json)


def run(scifact_queries: int, out: Figures) -> None:
    """Measure on the demo corpus, then on SciFact (its first `scifact_queries` queries)
    when its data is present (a note says so when not)."""
    demo_questions = (REPO / "examples" / "questions.txt").read_text().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        with Index.open(Path(tmp) / "demo", create=True) as index:
            index.ingest([REPO / "examples" / "corpus"], embed=False)
            measure(index, demo_questions * 10, "demo corpus (questions x10)", out)
        if not scifact.SCIFACT.exists():
            print("\nSciFact not found at", scifact.SCIFACT)
            out.note(f"SciFact not found at {scifact.SCIFACT}")
            return
        folder = scifact.write_folder(Path(tmp))
        with Index.open(Path(tmp) / "scifact", create=True) as index:
            started = time.perf_counter()
            results = index.ingest([folder], embed=False)
            seconds = time.perf_counter() - started
            stats = index.store.stats()
            print(
                f"\nSciFact ingest: {len(results)} files -> {stats.documents} documents, "
                f"{stats.chunks} chunks in {seconds:.1f} s"
            )
            queries = list(scifact.queries().values())[:scifact_queries]
            measure(index, queries, f"SciFact ({len(queries)} queries)", out)


if __name__ == "__main__":
    main()
