"""What a face makes its options of: the registries of backends and answer modes and
the options objects, each field with its command-line text (`OptionText`).

- the backends (`llm.registry`): `BackendSpec`, the backend options; `backend_names`,
  `--llm`'s choices; `option_help`, each backend option's help;
- the answer modes (`strategies.registry`): `modes`, `mode_help`, and `strategy`,
  a mode's entry by name;
- `AnswerOptions`, how to answer, and `RetrievalSettings`, how to retrieve, with
  `RetrieverName`, the retrievers' names.

The CLI reads this module at start-up, to make its options: it loads no index,
store, retrieval engine, strategy or backend (`tests/test_cli_imports.py`).
"""

from quoteproof.llm.registry import BackendSpec, backend_names, option_help
from quoteproof.option_text import OptionText
from quoteproof.retrieval_settings import RetrievalSettings, RetrieverName
from quoteproof.strategies.options import AnswerOptions
from quoteproof.strategies.registry import mode_help, modes, strategy

__all__ = [
    "AnswerOptions",
    "BackendSpec",
    "OptionText",
    "RetrievalSettings",
    "RetrieverName",
    "backend_names",
    "mode_help",
    "modes",
    "option_help",
    "strategy",
]
