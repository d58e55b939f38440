"""Run one `quoteproof ask` and say which of quoteproof's modules it loads, which it
runs, and which lie on the path of the question.

    python benchmarks/ask_path.py INDEX QUESTION [ASK OPTION ...]

`structure.py` runs it with the tree it measures first on PYTHONPATH. The command runs
through `quoteproof.cli.main()` under a profile hook (`sys.setprofile`); the last
line printed is `ASK_PATH ` and a JSON object:

- `exit`: the command's exit status;
- `loaded`: the quoteproof modules in `sys.modules` after it;
- `ran`: the modules with a function that ran while the command's `ask` function
  ran, leaving out what an import runs (module and class bodies, and every call
  they make);
- `path`: for each landmark of a question that was reached, the quoteproof modules
  on the call stack there (every time it was reached, merged): the index searched
  (a store function whose name starts with `search`), the model asked (a backend's
  `complete` or `stream`), a quote made (`Quote`'s constructor), the answer recorded
  (the store's `append_audit`) and the answer laid out (`answer_layout` in render).
  A newcomer who follows the question from the command to each of these reads
  these modules; what they call on the way and return from is read by its name and
  docstring.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
from types import CodeType, FrameType
from typing import Any

import quoteproof.cli

ASK_MODULES = ("quoteproof.cli_query", "quoteproof.cli")
"""Where the `ask` command's function is (an older tree has it in `cli`)."""


def ours(module: str) -> bool:
    """Whether `module` is quoteproof or one of its modules."""
    return module == "quoteproof" or module.startswith("quoteproof.")


def landmark(module: str, code: CodeType, frame: FrameType) -> str | None:
    """The landmark a call of `code` (in `module`, running in `frame`) is, or None."""
    name = code.co_name
    if module.startswith("quoteproof.store.") and name.startswith("search"):
        return "the index searched"
    if module.startswith("quoteproof.llm.") and name in ("complete", "stream"):
        return "the model asked"
    if name == "__init__" and type(frame.f_locals.get("self")).__name__ == "Quote":
        return "a quote made"
    if module.startswith("quoteproof.store.") and name == "append_audit":
        return "the answer recorded"
    if module.startswith("quoteproof.render.") and name == "answer_layout":
        return "the answer laid out"
    return None


class Trace:
    """What the profile hook saw (see the module docstring)."""

    def __init__(self) -> None:
        self.asking = 0
        self.importing = 0
        self.ran: set[str] = set()
        self.path: dict[str, set[str]] = {}

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        module = frame.f_globals.get("__name__", "")
        if code.co_name == "<module>":
            self.importing += {"call": 1, "return": -1}.get(event, 0)
            return
        if code.co_name == "ask" and module in ASK_MODULES:
            self.asking += {"call": 1, "return": -1}.get(event, 0)
        if event != "call" or not self.asking or self.importing or not ours(module):
            return
        if code.co_flags & inspect.CO_NEWLOCALS:  # a function, not a class body
            self.ran.add(module)
        mark = landmark(module, code, frame)
        if mark is not None:
            stack = self.path.setdefault(mark, set())
            caller: FrameType | None = frame
            while caller is not None:
                name = caller.f_globals.get("__name__", "")
                if ours(name):
                    stack.add(name)
                caller = caller.f_back


def main() -> None:
    index, question, *options = sys.argv[1:]
    sys.argv = ["quoteproof", "ask", question, "--index", index, *options]
    trace = Trace()
    sys.setprofile(trace)
    threading.setprofile(trace)
    code: object = 0
    try:
        quoteproof.cli.main()
    except SystemExit as exit:
        code = exit.code
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    loaded = sorted(m for m in sys.modules if ours(m))
    seen = {
        "exit": code,
        "loaded": loaded,
        "ran": sorted(trace.ran),
        "path": {mark: sorted(modules) for mark, modules in trace.path.items()},
    }
    print("\nASK_PATH " + json.dumps(seen))


if __name__ == "__main__":
    main()
