"""Whether llama.cpp's own grammar engine accepts a text: the bundled model's vocabulary
(`vocab_only`, no weights run) and llama.cpp's grammar sampler, fed the text's tokens
one by one. Needs the `local` extra."""

from __future__ import annotations

import ctypes


class GrammarChecker:
    """Checks texts against GBNF grammars the way `--llm local` samples under them."""

    def __init__(self) -> None:
        import llama_cpp

        from quoteproof.llm.local import bundled_model_path

        self._api = llama_cpp
        self._llama = llama_cpp.Llama(
            model_path=str(bundled_model_path()), vocab_only=True, verbose=False
        )
        self._vocab = self._llama._model.vocab

    def parses(self, grammar: str) -> bool:
        """True when llama.cpp parses `grammar` (root rule `root`)."""
        sampler = self._api.llama_sampler_init_grammar(self._vocab, grammar.encode(), b"root")
        if not sampler:
            return False
        self._api.llama_sampler_free(sampler)
        return True

    def _allowed(self, sampler: object, token: int) -> bool:
        api = self._api
        data = (api.llama_token_data * 1)(api.llama_token_data(token, 0.0, 0.0))
        candidates = api.llama_token_data_array(data, 1, -1, False)
        api.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return bool(data[0].logit != float("-inf"))

    def accepts(self, grammar: str, text: str) -> bool:
        """True when `text` is a whole reply `grammar` allows: each of its tokens is
        allowed in turn, and then the end of generation is. Raises ValueError when
        llama.cpp cannot parse `grammar`."""
        api = self._api
        sampler = api.llama_sampler_init_grammar(self._vocab, grammar.encode(), b"root")
        if not sampler:
            raise ValueError("llama.cpp cannot parse the grammar")
        try:
            for token in self._llama.tokenize(text.encode(), add_bos=False, special=False):
                if not self._allowed(sampler, token):
                    return False
                api.llama_sampler_accept(sampler, token)
            return self._allowed(sampler, api.llama_vocab_eos(self._vocab))
        finally:
            api.llama_sampler_free(sampler)
