"""Stochastic beam search guided by self-evaluation (Xie et al. 2023, NeurIPS, Algorithm 1).

Level by level: each of the ``beam`` chains in the beam proposes ``candidates`` next steps
(sampled from the generator's thoughts, weighted by their log-likelihood where the generator
gives one, else uniformly), every step goes through the exact gate, the evaluator judges the new
states, and each new chain gets the score

    log E(chain) = log E(parent chain) + lambda * log P(step) + (1 - lambda) * log C(step)

(the paper's E = prod P^lambda C^(1-lambda) over the chain's steps): P the step's generation
probability (the thought's ``prior``, a log-likelihood), C the self-evaluation confidence (the
evaluator's score, scaled to 0.01..1 over the level's candidates, the best scoring 1). The next
beam is ``beam`` chains drawn without replacement with probability proportional to
exp(log E / tau) (Gumbel top-k, seeded), and tau decays to ``decay * tau`` after each level.

Where the generator gives no log-likelihoods (``enumerate``, ``propose``, ``sample``; or a backend
that cannot score), the score is the self-evaluation alone (log E sums log C); the trace's
``search`` event says which (``log_likelihood``), and ``tot solve`` says it once at the start.
A verified answer ends the search (the paper keeps finished chains until all finish; a verified
answer cannot be bettered). A chain the sampling drops is cut (``why: beam``), so ``tot audit``
counts a solvable one as lost to the search's judgement. Our addition: a beam that ends without a
verified answer (the verifier says so) is run again from the root with fresh draws and a higher
starting temperature (run r starts at r * tau), up to ``runs`` runs (``--beam-runs``; 1 is the
paper's single run); each run begins with a ``round`` event naming the root.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence, TypeVar

from solver.expansion import Run, SearchResult
from solver.generators import Generator
from solver.node import Node, SeenStates
from solver.search_options import Options, option
from solver.searches.common import AskTell, begin, quantise
from solver.settings import SearchSettings
from solver.step import Ask, Expand, Score
from solver.task import Thought

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Beam", "BeamOptions", "FLOOR", "confidences", "gumbel_top", "no_likelihood_notice"]

FLOOR = 0.01  # the lowest confidence: log C stays finite for the worst-judged state


@dataclass(frozen=True)
class BeamOptions(Options):
    """``beam``'s own options (``solver.search_options``); ``breadth`` is the flag BFS's beam
    width shares. k, n, lambda and tau are those of llm-reasoners' example of this search on GSM8K
    (beam 5, 16 candidates, lambda 0.5, beam temperature 0.5); the decay alpha as the paper's 0.5.
    ``beam_runs`` is not the paper's: with an exact verifier a failed beam is known to have failed,
    so it is run again from the root with fresh draws, hotter (run r starts at temperature r * tau),
    so that later runs stray further from the evaluator's favourites; the run's memo answers a
    state judged before without a model call, so a run costs model calls only for states no
    earlier run judged. 1 is Algorithm 1 exactly."""

    breadth: int = option(5, "chains kept per level (k)", short="-b", at_least=1)
    candidates: int = option(16, "next steps drawn per chain (n)", flag="--beam-candidates",
                             dest="beam_candidates", at_least=1)
    mix: float = option(0.5, "weight of the generation log-likelihood against the self-evaluation",
                        flag="--lambda", at_least=0, at_most=1)
    tau: float = option(0.5, "sampling temperature of the chains", above=0)
    decay: float = option(0.5, "tau is multiplied by this after each level (alpha)", above=0, at_most=1)
    beam_runs: int = option(100, "runs from the root with fresh draws, run r at temperature r * tau, "
                                 "until a verified answer; 1 is the paper's single run", at_least=1)


def gumbel_top(log_weights: Sequence[float], k: int, rng: random.Random) -> list[int]:
    """Indices of ``k`` draws without replacement, each with probability proportional to
    exp(log weight) among those left (the Gumbel top-k trick); in drawing order."""
    keys = []
    for i, lw in enumerate(log_weights):
        u = rng.random() or 5e-324  # log(0) would be -inf
        keys.append((lw - math.log(-math.log(u)) if math.isfinite(lw) else -math.inf, -i))
    order = sorted(range(len(keys)), key=lambda i: keys[i], reverse=True)
    return order[:k]


def confidences(scores: Sequence[float | None]) -> list[float]:
    """The evaluator's scores of one level scaled to FLOOR..1 (the best 1, the worst FLOOR; all
    equal: all 1). Quantised first, as search compares scores everywhere; NaN counts as the worst."""
    q = [quantise(s) for s in scores]
    finite = [v for v in q if math.isfinite(v)]
    if not finite:
        return [1.0] * len(q)
    low, high = min(finite), max(finite)
    if high <= low:
        return [1.0 if math.isfinite(v) else FLOOR for v in q]
    return [max(FLOOR, 1.0 - (1 - FLOOR) * (high - v) / (high - low)) if math.isfinite(v) else FLOOR for v in q]


def no_likelihood_notice(generator: Generator) -> str | None:
    """The line ``tot solve`` prints once when the beam must do without log-likelihoods."""
    if generator.log_likelihoods:
        return None
    hint = "" if generator.name == "enumerate-rank" else "; --generator enumerate-rank gives them"
    return (f"generator `{generator.name}` gives no log-likelihoods; chains are scored by the "
            f"self-evaluation alone (lambda unused{hint})")


@dataclass
class Beam(AskTell[S]):
    """Xie et al.'s stochastic beam search as a state that asks: a level's expansions together
    (each chain's thoughts drawn, then gated), then the level's scoring; run again from the root
    (fresh draws) until a verified answer or ``beam_runs`` runs."""

    options: BeamOptions = BeamOptions()
    uses_ll: bool = field(init=False)  # whether steps have log-likelihoods
    max_depth: int = field(init=False)
    rng: random.Random = field(init=False)
    log_e: dict[int, float] = field(init=False)  # each chain's log E, by node id
    number: int = field(init=False)  # the run from the root under way
    level: int = field(init=False)  # levels expanded in this run
    temperature: float = field(init=False)
    root: Node[S] = field(init=False)
    chains: list[Node[S]] = field(init=False)
    scoring: list[Node[S]] = field(init=False)  # the level's open states, being scored
    hit: tuple[Node[S], str] | None = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        run.step.require_evaluator()
        # Log-likelihoods come from a model: a generator that declares them but runs without one
        # (the crosswords' ``enumerate-rank`` used as a library, with no client) gives every prior None.
        self.uses_ll = run.generator.log_likelihoods and run.model is not None
        self.max_depth = begin(run, settings, self.options, log_likelihood=self.uses_ll)
        self.rng, self.scoring, self.hit = random.Random(settings.seed), [], None
        self.root = run.root()
        run.reach(self.root)
        self.log_e = {self.root.id: 0.0}
        self.number, self.level, self.temperature = 0, 0, self.options.tau
        self._run_from_root(run, 1)

    def _run_from_root(self, run: Run[S], number: int) -> None:
        """Algorithm 1 once more, from the root (none left after ``beam_runs``: the search is over)."""
        self.chains = []
        for n in range(number, self.options.beam_runs + 1):
            run.new_round(n, self.root)
            if self.max_depth > 0:
                self.number, self.level, self.temperature = n, 0, self.options.tau * n
                self.chains = [self.root]
                return

    def _draw(self, thoughts: list[Thought]) -> list[Thought]:
        """``candidates`` of the generator's thoughts, drawn by likelihood (or uniformly); in the
        generator's order, so that node ids do not depend on the draw's order."""
        if len(thoughts) <= self.options.candidates:
            return thoughts
        weights = [t.prior if self.uses_ll and t.prior is not None else 0.0 for t in thoughts]
        return [thoughts[i] for i in sorted(gumbel_top(weights, self.options.candidates, self.rng))]

    def ask(self) -> list[Ask[S]]:
        if self.scoring:
            return [Score(self.scoring)]
        seen: SeenStates[S] = SeenStates()  # this level's states
        return [Expand(nd, self._draw, seen, True) for nd in self.chains] if self.hit is None else []

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if self.scoring:
            self._pick(run)
            return
        level = [c for group in outcomes for c in group]
        self.hit = run.first_answer(level)
        if self.hit is not None:
            return
        for child in level:
            if child.solved:
                continue  # its answer failed the re-check: a dead end
            if child.depth >= self.max_depth:  # a dead end at the depth limit: not worth a judgement
                run.cut(child, "depth")
            else:
                self.scoring.append(child)
        if not self.scoring:
            self._run_from_root(run, self.number + 1)

    def _pick(self, run: Run[S]) -> None:
        """The next beam, drawn from the level's scored states."""
        o, open_nodes, log_e = self.options, self.scoring, self.log_e
        for child, conf in zip(open_nodes, confidences([c.score for c in open_nodes]), strict=True):
            assert child.parent is not None
            step = math.log(conf)
            if self.uses_ll and child.prior is not None and math.isfinite(child.prior):
                step = o.mix * child.prior + (1 - o.mix) * step
            log_e[child.id] = log_e[child.parent.id] + step
        picked = set(gumbel_top([log_e[c.id] / self.temperature for c in open_nodes], o.breadth, self.rng))
        self.chains, self.scoring = [c for i, c in enumerate(open_nodes) if i in picked], []
        for i, child in enumerate(open_nodes):
            if i in picked:
                run.keep(child, log_weight=log_e[child.id])
            else:
                run.cut(child, "beam", score=child.score, log_weight=log_e[child.id])
        run.reach(max(self.chains, key=lambda c: log_e[c.id]))
        self.temperature *= o.decay
        self.level += 1
        if self.level >= self.max_depth:
            self._run_from_root(run, self.number + 1)

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        return run.result(*self.hit, None) if self.hit is not None else run.result(None, None, stopped)
