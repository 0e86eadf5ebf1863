"""The embedded scorer's pass plans (solver/lm/scorer_batch.py), checked without a model.

Items are token lists that share prefixes the way a search's requests do (one prompt scored with
several labels, states of one few-shot prompt, steps that begin alike). The properties are what
llama.cpp needs for every item to be scored as it would be alone: each item's tokens, and only
them, lie in one sequence, position by position; each token is evaluated once a pass, after what it
attends to; the rows read are those of the item's own positions; and a plan's passes fit the
context. The checks rebuild each item from the plan and compare it with the item's own tokens.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lm.scorer_batch import build_tree, plan_passes


@st.composite
def batches(draw):
    """Items (full, start) built from a few shared stems, and what the context already holds."""
    tok = st.integers(0, 5)
    stems = draw(st.lists(st.lists(tok, min_size=1, max_size=6), min_size=1, max_size=3))
    items = []
    for _ in range(draw(st.integers(1, 8))):
        prompt = [9] + draw(st.sampled_from(stems)) + draw(st.lists(tok, max_size=3))
        cont = draw(st.lists(tok, min_size=1, max_size=4))
        full = prompt + cont
        items.append((full, len(prompt)))
    cache = draw(st.sampled_from([[], [9], items[0][0][: draw(st.integers(0, len(items[0][0])))]])) + \
        draw(st.lists(tok, max_size=2))
    return items, cache


def sequence_chain(tree, s):
    """The nodes whose cells belong to sequence ``s``: for the plan to be right, one node a
    position, each the child of the one before."""
    return sorted((n for n, seqs in enumerate(tree.seqs) if s in seqs), key=lambda n: tree.pos[n])


@settings(max_examples=400, deadline=None)
@given(batches())
def test_each_item_is_its_own_tokens_in_one_sequence(batch):
    items, cache = batch
    tree = build_tree(items, cache)
    prefix = 0
    while prefix < min(len(cache), len(items[0][0]) - 1) and cache[prefix] == items[0][0][prefix]:
        prefix += 1
    assert tree.cached <= min(start - 1 for _, start in items)
    assert tree.cached <= prefix
    for k, (full, start) in enumerate(items):
        path = tree.paths[k]
        assert [tree.token[n] for n in path] == full[:-1]  # the last token is never evaluated
        assert [tree.pos[n] for n in path] == list(range(len(full) - 1))
        # the rows summed: the item's own positions from start - 1, each read for the token after it
        want = [(p, full[p + 1]) for p in range(start - 1, len(full) - 1)]
        assert [(tree.pos[n], t) for n, t in tree.path_reads(k)] == want
        assert all(t in tree.reads[n] for n, t in tree.path_reads(k))
        # some sequence holds exactly this item's tokens up to its end and then, at most, a longer
        # item's whose tokens begin with these
        owners = [s for s in range(tree.sequences) if all(s in tree.seqs[n] for n in path)]
        assert owners, (k, tree.seqs)
        for s in owners:
            chain = sequence_chain(tree, s)
            assert [tree.pos[n] for n in chain] == list(range(len(chain)))  # one node a position
            assert chain[: len(path)] == path
    for s in range(tree.sequences):  # every sequence is one chain of parent and child
        chain = sequence_chain(tree, s)
        assert [tree.pos[n] for n in chain] == list(range(len(chain)))
        tokens = [tree.token[n] for n in chain]
        assert any(full[: len(tokens)] == tokens for full, _ in items)
    # sequence 0 keeps exactly the prefix all items share
    shared = min(next((i for i, (a, b) in enumerate(zip(items[0][0][:-1], full[:-1], strict=False)) if a != b),
                      min(len(items[0][0]), len(full)) - 1) for full, _ in items)
    assert tree.trunk == shared
    assert [tree.token[n] for n in sequence_chain(tree, 0)] == items[0][0][:shared] or tree.sequences == 1
    assert tree.trunk_tokens() == items[0][0][tree.cached : shared]


@settings(max_examples=400, deadline=None)
@given(batches(), st.integers(1, 12), st.integers(1, 6), st.integers(1, 6))
def test_every_token_once_in_order(batch, n_batch, max_rows, least):
    items, cache = batch
    tree = build_tree(items, cache, least)
    chunks = tree.chunks(n_batch, max_rows, min(least, n_batch))
    flat = [n for c in chunks for n in c]
    todo = [n for n in range(len(tree.token)) if tree.pos[n] >= tree.cached]
    assert sorted(flat) == sorted(todo) and len(flat) == len(set(flat))
    assert [tree.pos[n] for n in flat] == sorted(tree.pos[n] for n in flat)  # nothing before what it attends to
    assert all(len(c) <= n_batch and sum(n in tree.reads for n in c) <= max_rows + least for c in chunks)
    # no batch under ``least`` tokens where there are that many: cached tokens are evaluated again
    assert len(todo) >= min(least, len(tree.token))
    if len(todo) >= least and n_batch >= 2 * least and max_rows >= 2 * least:  # as 512, 32 and 16 are
        assert all(len(c) >= least for c in chunks)
    assert sum(tree.counted()) == len(todo)
    # distinct prefixes, counted independently: each evaluated token is one distinct prefix
    distinct = {tuple(full[: p + 1]) for full, _ in items for p in range(tree.cached, len(full) - 1)}
    assert len(distinct) == len(todo)


@settings(max_examples=300, deadline=None)
@given(batches(), st.integers(4, 16), st.integers(2, 5))
def test_passes_fit_the_context(batch, window, max_sequences):
    items, _ = batch
    items = [(full, start) for full, start in items if len(full) <= window]
    if not items:
        return
    passes = plan_passes(items, window, max_sequences)
    assert [k for p in passes for k in p] == list(range(len(items)))
    def fits(ks):
        cells = {tuple(items[k][0][: q + 1]) for k in ks for q in range(len(items[k][0]) - 1)}
        # a sequence for each distinct evaluated token list that is no proper prefix of another
        ends = {tuple(items[k][0][:-1]) for k in ks}
        leaves = sum(not any(len(o) > len(e) and o[: len(e)] == e for o in ends) for e in ends)
        return len(cells) <= window and leaves <= max_sequences - 1

    for i, p in enumerate(passes):
        assert fits(p)
        assert build_tree([items[k] for k in p], []).sequences <= max_sequences
        if i + 1 < len(passes):  # a pass is cut only where the next item would not fit
            assert not fits(p + passes[i + 1][:1])


def test_a_pass_is_cut_where_the_next_item_would_not_fit():
    a, b, c = [9, 1, 2, 3, 4], [9, 1, 2, 5, 6], [9, 7, 7, 7, 7]  # a and b share three cells of their four
    assert plan_passes([(a, 3), (b, 3), (c, 3)], window=5, max_sequences=8) == [[0, 1], [2]]
    assert plan_passes([(a, 3), (b, 3), (c, 3)], window=6, max_sequences=8) == [[0, 1], [2]]
    assert plan_passes([(a, 3), (b, 3), (c, 3)], window=8, max_sequences=8) == [[0, 1, 2]]
    assert plan_passes([(a, 3), (b, 3), (c, 3)], window=8, max_sequences=3) == [[0, 1], [2]]
    assert plan_passes([(a, 3), (a, 4)], window=4, max_sequences=2) == [[0, 1]]  # the same cells, one sequence


def test_the_client_lets_in_as_many_scoring_requests_as_a_pass_takes(monkeypatch):
    """The embedded backend takes up to SCORE_BATCH requests at once (the client's slots), or
    TOT_SCORE_BATCH of them; 1 scores each request alone. A bad value is one line."""
    import pytest

    from solver.lm.base import LMError
    from solver.lm.client import LMClient
    from solver.lm.local import SCORE_BATCH, LocalBackend, model_path

    def slots():
        backend = LocalBackend(model_path(), check=False)  # the model is loaded on first use only
        return backend.batch_slots, LMClient(backend, None, "off")._sem._value

    monkeypatch.delenv("TOT_SCORE_BATCH", raising=False)
    assert slots() == (SCORE_BATCH, SCORE_BATCH) and SCORE_BATCH > 1
    monkeypatch.setenv("TOT_SCORE_BATCH", "1")
    assert slots() == (1, 1)
    monkeypatch.setenv("TOT_SCORE_BATCH", "0")
    with pytest.raises(LMError, match="^TOT_SCORE_BATCH must be a whole number from 1 to 999, not '0'$"):
        slots()
