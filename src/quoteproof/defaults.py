"""The library's default settings, in a module that imports nothing of quoteproof's
own: the command line shows them in its help without loading the library.

The modules that use a default re-export it under the same name (e.g.
`quoteproof.index.DEFAULT_INDEX`).
"""

from __future__ import annotations

import os

DEFAULT_INDEX = ".quoteproof"
DEFAULT_SEARCH_TOP_K = 10
DEFAULT_ASK_TOP_K = 5
SPARE_HITS = 2
"""`ask` retrieves this many times `top_k` hits, so that sources with nothing to quote
can give way to the next ones (`RefusalPolicy.answer_sources`)."""
DEFAULT_COLLECTION = "default"
"""The collection documents go to when none is named."""

DEFAULT_MAX_FILE_MB = 200.0
"""Files larger than this many megabytes (10^6 bytes) are refused unread."""
DEFAULT_PARSE_MEMORY_MB = 256.0
"""Megabytes of memory any file may use to parse, plus 64 per megabyte of file."""
DEFAULT_PARSE_SECONDS = 60.0
"""Seconds of CPU time any file may use to parse, plus 10 per megabyte of file."""
DEFAULT_SECTION_TOKENS = 500
DEFAULT_WINDOW_TOKENS = 400
DEFAULT_OVERLAP_TOKENS = 80
DEFAULT_EMBED_TOKENS = 256
"""The default dense model's input limit (all-MiniLM-L6-v2 reads 256 tokens, [CLS]
and [SEP] included)."""
DEFAULT_JOBS = min(4, os.cpu_count() or 1)
"""Worker processes `quoteproof ingest` parses with unless told otherwise."""

DEFAULT_DEPTH = 100
"""How many hits each list contributes to fusion."""
DEFAULT_RRF_K = 60
DEFAULT_RERANK_CANDIDATES = 12
DEFAULT_RERANK_KEEP = 5

DEFAULT_THRESHOLD = 90.0
DEFAULT_MAX_STEPS = 8
DEFAULT_CONTEXT = 4096

MAX_QUESTION_CHARS = 10_000
"""The longest question or search query any face takes (`service.check_question`)."""
