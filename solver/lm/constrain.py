"""Constrained decoding for the embedded model: a GBNF grammar turned into the arguments of one
``llama_cpp.Llama.create_completion`` call.

Two engines. ``llguidance`` (when the package is installed): its matcher computes the mask of the
tokens the grammar allows at each step and a logits processor applies it; measured on the propose
step of Game of 24 (benchmarks/grammar.py --overhead), it costs a few per cent per token.
``llama``: llama.cpp's own grammar sampler (``LlamaGrammar``), which llama-cpp-python rebuilds at
every completion and which checks candidate tokens against the grammar one by one; measured at
about twice the seconds per token of free decoding with Gemma's 262k-token vocabulary. Both allow
exactly the same tokens: the GBNF is rewritten for llguidance by ``gbnf_lark`` (not llguidance's
own converter, whose greedy terminals dropped strings from the language).
``TOT_GRAMMAR_ENGINE=llama`` (or ``llguidance``) picks one; by default llguidance where it is
installed, else llama.cpp's. A grammar llguidance cannot read goes to
llama.cpp's sampler. Either way the gate checks every thought: a grammar is an optimisation.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from solver.lm.base import LMError
from solver.lm.gbnf_lark import gbnf_to_lark

__all__ = ["ENGINES", "Constrainer", "engine_name"]

ENGINES = ("llguidance", "llama")
KEEP = 256  # grammars kept compiled (one per state a search asked about)


def engine_name() -> str:
    """The engine ``TOT_GRAMMAR_ENGINE`` names, else llguidance where installed, else llama."""
    asked = os.environ.get("TOT_GRAMMAR_ENGINE", "").strip().lower()
    if asked:
        if asked not in ENGINES:
            raise LMError(f"TOT_GRAMMAR_ENGINE must be one of {', '.join(ENGINES)}, not {asked[:20]!r}")
        return asked
    try:
        import llguidance  # noqa: F401
    except ImportError:
        return "llama"
    return "llguidance"


class Constrainer:
    """The grammar arguments for completions of one loaded model (``llm``), compiled once per
    grammar text. Not thread-safe: the backend holds its lock around every completion."""

    def __init__(self, llm: Any, engine: str | None = None) -> None:
        self.llm = llm
        self.engine = engine or engine_name()
        self._compiled: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self._tokenizer: Any = None

    def kwargs(self, text: str) -> dict[str, Any]:
        """``create_completion`` keyword arguments that constrain decoding to ``text`` (GBNF)."""
        kind, compiled = self._compile(text)
        if kind == "llguidance":
            from llama_cpp import LogitsProcessorList

            compiled.reset()
            return {"logits_processor": LogitsProcessorList([_MaskProcessor(compiled, self.llm.n_vocab())])}
        return {"grammar": compiled}

    def _compile(self, text: str) -> tuple[str, Any]:
        got = self._compiled.get(text)
        if got is not None:
            self._compiled.move_to_end(text)
            return got
        got = None
        if self.engine == "llguidance":
            got = self._llguidance(text)
        if got is None:
            got = ("llama", self._llama(text))
        self._compiled[text] = got
        if len(self._compiled) > KEEP:
            self._compiled.popitem(last=False)
        return got

    def _llguidance(self, text: str) -> tuple[str, Any] | None:
        try:
            import llguidance
            import llguidance.llamacpp
        except ImportError:
            return None
        if self._tokenizer is None:  # about a second for Gemma's vocabulary: once per model
            self._tokenizer = llguidance.llamacpp.lltokenizer_from_vocab(self.llm._model.vocab)
        try:
            lark = gbnf_to_lark(text)
        except ValueError:  # what the converter does not read: llama.cpp's sampler takes it
            return None
        matcher = llguidance.LLMatcher(self._tokenizer, llguidance.LLMatcher.grammar_from_lark(lark))
        return None if matcher.is_error() else ("llguidance", matcher)

    def _llama(self, text: str) -> Any:
        import llama_cpp
        from llama_cpp import LlamaGrammar

        # llama-cpp-python hands the text to llama.cpp at each completion and adds whatever
        # llama.cpp returns to the sampler chain unchecked; a text llama.cpp cannot parse gives
        # NULL there and a crash later. So it is parsed here once, by llama.cpp itself.
        probe = llama_cpp.llama_sampler_init_grammar(self.llm._model.vocab, text.encode("utf-8"), b"root")
        if not probe:
            raise LMError("the grammar does not parse (llama.cpp refused it)")
        llama_cpp.llama_sampler_free(probe)
        return LlamaGrammar.from_string(text, verbose=False)


class _MaskProcessor:
    """A logits processor: every token the matcher refuses gets -inf. It feeds the matcher the
    tokens sampled since its last call (the first call sees the prompt only)."""

    def __init__(self, matcher: Any, n_vocab: int) -> None:
        self.matcher = matcher
        self.n_vocab = n_vocab
        self.seen: int | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if self.seen is not None and len(input_ids) > self.seen:
            if not self.matcher.consume_tokens([int(t) for t in input_ids[self.seen:]]):
                raise LMError(f"llguidance refused a sampled token: {self.matcher.get_error()[:200]}")
        self.seen = len(input_ids)
        bits = np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, bitorder="little")[: len(scores)].astype(bool)
        if len(allowed) < len(scores):  # tokens past the matcher's vocabulary: never allowed
            allowed = np.concatenate([allowed, np.zeros(len(scores) - len(allowed), dtype=bool)])
        return np.where(allowed, scores, -np.inf)
