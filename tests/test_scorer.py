"""The embedded model's scorer (``LocalBackend._score_sync``, ``_score_batch_sync``, ``score``)
against a reference computed another way, and against itself alone.

The scorer evaluates each prompt once and asks llama.cpp for logits only at the positions a
continuation is read from, reusing what its KV cache holds. The reference here is the plain way:
a context with a row of logits for every token (``logits_all``), each prompt + continuation
evaluated from an empty cache, and the log-softmax summed in float64. The two differ only in the
arithmetic (batch shapes, float32 sums): TOLERANCE bounds that.
"""

import asyncio
import math

import numpy as np
import pytest

from solver.lm.base import LMError
from solver.lm.local import LEAST_DECODE

pytestmark = pytest.mark.model

# Largest difference measured between the two ways on these cases: see test_matches_the_reference.
TOLERANCE = 2e-3
MULTI = 1.0

PROMPT = ("Evaluate if given numbers can reach 24 (sure/likely/impossible)\n"
          "10 14\n10 + 14 = 24\nsure\n11 12\n11 + 12 = 23\n12 - 11 = 1\nimpossible\n4 9 10 13\n")
VALUE = [" sure", " likely", " impossible"]  # one token each
RANK = ["13 - 9 = 4 (left: 4 4 10)\n", "13 - 10 = 3 (left: 3 4 9)\n", "4 + 9 = 13 (left: 10 13 13)\n",
        "4 * 9 = 36 (left: 10 13 36)\n"]  # several tokens; the first two share a prefix


@pytest.fixture(scope="module")
def model_file():
    from solver.lm.local import model_path

    return model_path()


@pytest.fixture(scope="module")
def reference(model_file):
    from solver.lm.local import load_llama

    llm = load_llama(model_file, n_ctx=256, threads=2, logits_all=True)

    def score(prompt, continuations, n_batch=512):
        llm.n_batch = n_batch
        base = llm.tokenize(prompt.encode(), add_bos=True, special=False)
        out = []
        for cont in continuations:
            full = llm.tokenize((prompt + cont).encode(), add_bos=True, special=False)
            start = 1
            while start < min(len(base), len(full)) and base[start] == full[start]:
                start += 1
            llm.reset()
            llm.eval(full)
            rows = np.asarray(llm.scores[start - 1 : len(full) - 1], dtype=np.float64)
            top = rows.max(axis=1, keepdims=True)
            logz = top[:, 0] + np.log(np.exp(rows - top).sum(axis=1))
            out.append(float((rows[np.arange(len(rows)), full[start:]] - logz).sum()))
        return out

    yield score
    llm.close()


def fresh_backend(model_file, **kw):
    from solver.lm.local import LocalBackend

    return LocalBackend(model_file, check=False, threads=2, **kw)


def calls():
    """A sequence like the search's: value labels, ranked steps, the same prompt again, a prompt
    that extends a continuation, another state's prompt sharing the few-shot prefix."""
    return [(PROMPT, VALUE), (PROMPT, RANK), (PROMPT, VALUE[::-1]), (PROMPT + RANK[0], [" 4 + 4 = 8", ""]),
            (PROMPT.replace("4 9 10 13", "1 1 4 6"), VALUE), (PROMPT, [RANK[1]])]


def test_matches_the_reference(model_file, reference):
    """Requests whose continuations are one sequence of tokens (labels of one token, a single
    continuation) match the reference within TOLERANCE, the prompt cached or not. Continuations
    that part after the prompt are sequences of their own in one llama.cpp batch, whose arithmetic
    moves a total by up to MULTI (measured: 0.79 on RANK's first step, 20 tokens); the order of
    the steps is the reference's wherever its gaps are wider than that."""
    backend = fresh_backend(model_file)
    worst, worst_multi = 0.0, 0.0
    try:
        for prompt, conts in calls():
            got, _ = backend._score_sync(prompt, conts)
            want = reference(prompt, conts)
            assert len(got) == len(conts)
            assert all(math.isfinite(x) and x <= 0 for x in got)
            gaps = [abs(a - b) for a, b in zip(got, want, strict=True)]
            if conts is RANK:  # the one request whose continuations part into sequences of their own
                worst_multi = max([worst_multi] + gaps)
                for i in range(len(conts)):
                    for j in range(len(conts)):
                        if want[i] > want[j] + 2 * MULTI:
                            assert got[i] > got[j]
            else:
                worst = max([worst] + gaps)
    finally:
        asyncio.run(backend.close())
    assert worst < TOLERANCE, worst
    assert 0 < worst_multi < MULTI, worst_multi


def test_logits_only_where_read(model_file):
    backend = fresh_backend(model_file)
    try:
        backend._score_sync(PROMPT, VALUE)
        assert backend._scorer._logits_all is False
        assert backend._scorer.context_params.n_ctx == 2048  # SCORE_CONTEXT, as before
    finally:
        asyncio.run(backend.close())


def test_tokens_evaluated_once_per_prefix(model_file):
    """The prompt is evaluated once; each further continuation only from where it differs."""
    backend = fresh_backend(model_file)
    try:
        tok = backend.count_tokens
        _, read = backend._score_sync(PROMPT, VALUE)
        assert read == tok(PROMPT)  # each label is one token after the prompt, read, never evaluated
        _, again = backend._score_sync(PROMPT, VALUE)
        # the prompt is cached; its last position is evaluated again for its row, in a batch of
        # LEAST_DECODE tokens (the arithmetic of smaller ones differs)
        assert again == LEAST_DECODE
    finally:
        asyncio.run(backend.close())


def test_across_batches(model_file, reference):
    """Batches of 8 tokens (the context's are 512): a continuation spans several, and the rows read
    in one batch are still right after the next is evaluated. The reference evaluates in the same
    batches (the batch shapes alone move a log-probability by up to 0.8 on this model)."""
    backend = fresh_backend(model_file)
    try:
        backend._score_sync("4", [" 9"])  # opens the scoring context
        backend._scorer.n_batch = 8
        backend._scorer.reset()  # an empty cache: batches from position 0, as the reference's
        long = [RANK[0] + " " + " ".join(str(i) for i in range(24))]
        got, read = backend._score_sync(PROMPT, long)
        assert read == backend.count_tokens(PROMPT + long[0]) - 1  # all but the last token
        assert abs(got[0] - reference(PROMPT, long, n_batch=8)[0]) < TOLERANCE
    finally:
        asyncio.run(backend.close())


def test_the_context_limit_is_one_line(model_file):
    """--context 64: llama.cpp rounds its window up to 256, the scorer keeps to the 64 asked for."""
    backend = fresh_backend(model_file, n_ctx=64)
    try:
        assert backend._score_sync("4 9 10 13\n", VALUE)[0][0] < 0
        with pytest.raises(LMError) as err:
            backend._score_sync(PROMPT * 2, VALUE)
        assert "\n" not in str(err.value)
        assert str(err.value).endswith("tokens; the scoring context is 64")
    finally:
        asyncio.run(backend.close())


def test_same_answers_run_to_run(model_file):
    runs = []
    for _ in range(2):
        backend = fresh_backend(model_file)
        try:
            runs.append([backend._score_sync(p, c) for p, c in calls()])
        finally:
            asyncio.run(backend.close())
    assert runs[0] == runs[1]


STATES = ["4 9 8", "1 1 1", "2 3 5", "7 8 9", "6 6 6", "1 2 4"]  # the same token count each


def state_prompt(numbers):
    return f"Numbers: {numbers}\nCan they reach 24? Answer:"


def test_a_request_sees_only_its_own_tokens_in_a_batch(model_file):
    """Several requests in one pass: each one's scores do not depend on what the others say, only
    on the batch's shape. Companions of the same length with other numbers, in another order, give
    bit-identical scores; a sequence that attended to another's tokens would not."""
    backend = fresh_backend(model_file)
    tok = backend.count_tokens
    assert len({tok(state_prompt(s)) for s in STATES}) == 1
    try:
        x = (state_prompt(STATES[0]), VALUE)
        got = [backend._score_batch_sync([x] + [(state_prompt(s), VALUE) for s in companions])[0][0]
               for companions in (STATES[1:3], STATES[3:5], STATES[2:0:-1], STATES[4:6])]
        assert all(g == got[0] for g in got), got
        alone, _ = backend._score_sync(*x)
        # the batch's shape alone moves a log-probability (see docs/performance.md), not by much
        assert max(abs(a - b) for a, b in zip(alone, got[0], strict=True)) < MULTI
    finally:
        asyncio.run(backend.close())


def test_requests_made_together_are_one_pass(model_file):
    """The evaluator gathers a node's children: the backend's ``score`` takes them in one pass, and
    the answers are those of the same batch asked for directly, run after run."""
    requests = [(state_prompt(s), VALUE) for s in STATES] + [(PROMPT, RANK)]
    runs = []
    for _ in range(2):
        backend = fresh_backend(model_file)
        passes = []
        original = backend._score_batch_sync

        def spy(reqs, original=original, passes=passes):
            passes.append(len(reqs))
            return original(reqs)

        backend._score_batch_sync = spy

        async def together(backend=backend):
            return await asyncio.gather(*(backend.score(p, c) for p, c in requests))

        try:
            runs.append(asyncio.run(together()))
        finally:
            asyncio.run(backend.close())
        assert passes == [len(requests)]
    assert runs[0] == runs[1]
    direct = fresh_backend(model_file)
    try:
        assert [tuple(r) for r in direct._score_batch_sync(requests)] == [tuple(r) for r in runs[0]]
    finally:
        asyncio.run(direct.close())


def test_a_request_too_long_fails_alone(model_file):
    backend = fresh_backend(model_file, n_ctx=64)
    try:
        got = backend._score_batch_sync([(state_prompt(STATES[0]), VALUE), (PROMPT * 2, VALUE)])
        assert isinstance(got[1], LMError) and isinstance(got[0], tuple) and got[0][0][0] < 0
    finally:
        asyncio.run(backend.close())
