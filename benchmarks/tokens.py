"""Completion tokens: deterministic quoting (`<quote ref="REF"/>`) versus quoting the
chunk text in full, for the same scripted answers.

For each sample question of the demo corpus, the passages to quote are the ones the
extractive backend picks. Two scripted replies show the same passages: one in
quoteproof's form (`<quote ref="REF"/>`, the index supplies the words), one in the
form most RAG prompts ask for (the passage text copied out in full, then `[REF]`).
Both are played by the scripted OpenAI-compatible server of the test suite, which
reports usage counted with a real tokenizer (the bundled all-MiniLM-L6-v2 WordPiece
vocabulary: no download), and quoteproof records that usage in `Answer.usage`.

    python benchmarks/tokens.py [--json FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import warnings
from pathlib import Path

from tokenizers import Tokenizer

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from figures import Figures, add_json_option  # noqa: E402
from helpers.llm_servers import ScriptedOpenAIServer  # noqa: E402
from quoteproof import Index  # noqa: E402
from quoteproof.llm.extractive import choose_extractive  # noqa: E402
from quoteproof.llm.openai import OpenAIBackend  # noqa: E402
from quoteproof.model import Answer, Chunk  # noqa: E402
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL, resolve_model  # noqa: E402
from quoteproof.retrieval.retriever import RetrievalNotice  # noqa: E402

QUESTIONS = REPO / "examples" / "questions.txt"
CALIBRATION = REPO / "examples" / "calibration.jsonl"
FAITHFULNESS = "deterministic"
"""No judging call: the completion tokens counted are the answer's own, as before."""
_QUOTED_REF = re.compile(r'<quote ref="([^"]+)"')


def questions() -> list[str]:
    """The demo's sample questions and the answerable calibration questions."""
    import json

    found = [q for q in QUESTIONS.read_text(encoding="utf-8").splitlines() if q.strip()]
    for line in CALIBRATION.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["answerable"] and item["question"] not in found:
            found.append(item["question"])
    return found


def replies(question: str, sources: list[Chunk]) -> tuple[str, str, int] | None:
    """The two scripted replies for `question`, and how many passages they quote."""
    reply = choose_extractive(question, tuple(sources)).reply
    chosen = list(dict.fromkeys(_QUOTED_REF.findall(reply)))
    if not chosen:
        return None
    by_ref = {chunk.ref: chunk for chunk in sources}
    framing = f"The sources answer this [{chosen[0]}]."
    by_reference = "\n".join([framing, *(f'<quote ref="{ref}"/>' for ref in chosen)])
    in_full = "\n".join([framing, *(f'"{by_ref[ref].text}" [{ref}]' for ref in chosen)])
    return by_reference, in_full, len(chosen)


def completion_tokens(answer: Answer) -> int:
    assert answer.usage is not None, "the server reported no usage"
    return answer.usage.completion_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_json_option(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RetrievalNotice)  # BM25 alone is enough here
    model_dir = Path(resolve_model(DEFAULT_EMBED_MODEL))
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    server = ScriptedOpenAIServer()
    server.count_tokens = count
    server.start()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp, Index.open(tmp, create=True) as index:
            index.ingest([REPO / "examples" / "corpus"], embed=False)
            backend = OpenAIBackend(model="scripted", base_url=server.base_url, max_retries=0)
            for question in questions():
                sources = [hit.chunk for hit in index.search(question, top_k=5)]
                scripted = replies(question, sources)
                if scripted is None:
                    continue
                by_reference, in_full, passages = scripted
                server.script = [by_reference]
                ours = index.ask(question, backend=backend, faithfulness=FAITHFULNESS)
                server.script = [in_full]
                theirs = index.ask(question, backend=backend, faithfulness=FAITHFULNESS)
                shown = sum(len(q.text) for q in ours.quotes)
                rows.append(
                    (question, passages, shown, completion_tokens(ours), completion_tokens(theirs))
                )
    finally:
        server.stop()
    print_table(rows)
    out = Figures("tokens")
    out.add(
        'completion tokens/answer, <quote ref="…"/>',
        sum(r[3] for r in rows) / len(rows),
        "tokens",
        "passages copied out in full",
        sum(r[4] for r in rows) / len(rows),
    )
    out.write(args.json)


def print_table(rows: list[tuple[str, int, int, int, int]]) -> None:
    print("Completion tokens for the same answers (tokenizer: all-MiniLM-L6-v2 WordPiece)")
    print(f"{'question':<58} {'quotes':>6} {'chars':>6} {'<quote ref/>':>12} {'full text':>10}")
    for question, passages, chars, ours, theirs in rows:
        short = question if len(question) <= 56 else question[:55] + "…"
        print(f"{short:<58} {passages:>6} {chars:>6} {ours:>12} {theirs:>10}")
    ours_total = sum(r[3] for r in rows)
    theirs_total = sum(r[4] for r in rows)
    print(
        f"{'total (' + str(len(rows)) + ' answers)':<58} {sum(r[1] for r in rows):>6} "
        f"{sum(r[2] for r in rows):>6} {ours_total:>12} {theirs_total:>10}"
    )
    saved = 1 - ours_total / theirs_total
    print(
        f"deterministic quoting writes {ours_total / len(rows):.0f} completion tokens per answer "
        f"instead of {theirs_total / len(rows):.0f}: {saved:.0%} fewer "
        f"({theirs_total / ours_total:.1f}x)"
    )


if __name__ == "__main__":
    main()
