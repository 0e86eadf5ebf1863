"""The kit can fail: deliberately broken tasks and searches are caught, each by the invariant it
breaks, with the case named in the message."""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, Sequence
from unittest import mock

import pytest
from hypothesis import Phase, settings

import solver.expansion
import solver.searches
import solver.searches.tot
import solver.step
from solver.budget import Usage
from solver.task import Thought
from solver.testing import (
    Case,
    InvariantBroken,
    Script,
    budgets,
    check_complete_iff,
    check_replay,
    check_search_invariants,
    run_and_check,
    search_settings,
    settings_of,
)
from solver.testing import invariants as inv
from tests.test_properties import TOY_PUZZLES, ToyReach, ToyState, solvable_with_steps
from verifiers.verdict import Invalid, Solved, Valid, Verdict

FEW = 25  # enough examples to meet each bug; these tests stop at the first broken run


def broken(invariant: str, **kwargs: Any) -> InvariantBroken:
    # No shrinking: finding the bug is the point here, not its smallest case.
    quick = settings(settings(), phases=[Phase.explicit, Phase.reuse, Phase.generate], print_blob=False)
    with pytest.raises(InvariantBroken) as caught:
        check_search_invariants(profile=quick, **kwargs)
    assert caught.value.invariant == invariant, str(caught.value)
    assert "case: Case(puzzle=" in str(caught.value)
    return caught.value


@dataclass(frozen=True, slots=True)
class ListState:
    """A state holding a mutable list: frozen only on the surface."""

    value: int
    target: int
    path: list[str] = field(default_factory=list, compare=False, hash=False)


class MutatingToy(ToyReach):
    """Appends to the parent's history instead of copying it: states change after they were made."""

    def root(self, puzzle: str) -> Any:
        start, target = self.parse(puzzle)
        return ListState(start, target)

    def check(self, state: Any, thought: Thought) -> Verdict[Any]:
        verdict = super().check(ToyState(state.value, state.target, tuple(state.path)), thought)
        if isinstance(verdict, Invalid):
            return verdict
        state.path.append(thought.text)  # the bug
        new = ListState(verdict.state.value, state.target, state.path)
        return Solved(new) if isinstance(verdict, Solved) else Valid(new)


def test_a_task_that_mutates_states_is_caught() -> None:
    broken(inv.MUTATION, task=MutatingToy(3), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
           settings=search_settings(generators=["enumerate"], evaluators=["prior"]), budget=budgets(max_calls=None))


def test_a_search_that_scores_a_refused_thought_is_caught() -> None:
    original = solver.step.GatedStep.gate_all

    class Careless:
        """The task as this broken search sees it: a refused thought leads to the parent's state."""

        def __init__(self, task: Any) -> None:
            self.task = task

        def check(self, state: Any, thought: Thought) -> Any:
            verdict = self.task.check(state, thought)
            return Valid(state) if isinstance(verdict, Invalid) else verdict

        def __getattr__(self, name: str) -> Any:
            return getattr(self.task, name)

    def gate_all(self: Any, node: Any, thoughts: list[Thought]) -> Any:
        real, self.task = self.task, Careless(self.task)
        try:
            return original(self, node, thoughts)
        finally:
            self.task = real

    with mock.patch.object(solver.step.GatedStep, "gate_all", gate_all):
        broken(inv.GATE, task=ToyReach(3), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
               settings=search_settings(generators=["propose"]), budget=budgets(max_calls=None, max_tokens=None))


def test_a_search_that_returns_an_unchecked_answer_is_caught() -> None:
    class Liar(ToyReach):
        def answer(self, state: ToyState) -> str:
            return super().answer(state) + " +1"

    def accept(self: Any, node: Any) -> str:  # the bug: no re-check of the answer
        return str(self.task.answer(node.state))

    with mock.patch.object(solver.expansion.Run, "accept", accept):
        broken(inv.ANSWER, task=Liar(3), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
               settings=search_settings(generators=["enumerate"], evaluators=["oracle"]),
               budget=budgets(max_calls=None, max_tokens=None, max_steps=None))


def test_a_search_that_ignores_the_step_budget_is_caught() -> None:
    def check_step(self: Usage) -> None:  # the bug: counts, never stops
        self.steps += 1

    with mock.patch.object(Usage, "check_step", check_step):
        broken(inv.BUDGET, task=ToyReach(4), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
               settings=search_settings(generators=["enumerate"], evaluators=["prior"]),
               budget=budgets(max_calls=None, max_tokens=None, max_steps=3))


def test_a_beam_wider_than_b_is_caught() -> None:
    async def wide_bfs(run: Any, o: Any) -> Any:  # the bug: ignores the beam
        own = o.own(solver.searches.tot.BfsOptions)
        return await solver.searches.tot.Bfs(dataclasses.replace(own, breadth=own.breadth + 2))(run, o)

    wide = solver.searches.Search("tot-bfs", wide_bfs, options=solver.searches.tot.BfsOptions)
    with mock.patch.dict(solver.searches.SEARCHES, {"tot-bfs": wide}):
        broken(inv.BEAM, task=ToyReach(3), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
               settings=search_settings(methods=["tot-bfs"], generators=["enumerate"], evaluators=["prior"],
                                        max_breadth=1),
               budget=budgets(max_calls=None, max_tokens=None, max_steps=None))


def test_a_search_that_rebuilds_states_instead_of_holding_them_is_caught() -> None:
    original = solver.step.GatedStep.generate

    async def generate(self: Any, node: Any) -> Any:  # the bug: the generator gets a copy
        held = node.state
        node.state = copy.deepcopy(held)
        try:
            return await original(self, node)
        finally:
            node.state = held

    with mock.patch.object(solver.step.GatedStep, "generate", generate):
        broken(inv.BACKTRACK, task=ToyReach(3), puzzles=TOY_PUZZLES, max_examples=FEW, iff=False, replay=False,
               settings=search_settings(methods=["tot-dfs"], generators=["enumerate"], evaluators=["prior"]),
               budget=budgets(max_calls=None, max_tokens=None, max_steps=None))


class MissingMoves(ToyReach):
    """Its enumeration leaves out ``* 2``: complete search misses solutions that exist."""

    def legal_thoughts(self, state: ToyState) -> Sequence[Thought]:
        return [t for t in super().legal_thoughts(state) if "*" not in t.text]


def test_an_enumeration_that_misses_moves_is_caught_by_the_iff_check() -> None:
    with pytest.raises(InvariantBroken) as caught:
        check_complete_iff(MissingMoves(2), "3 12", solvable=lambda p: solvable_with_steps(p, 2))
    assert caught.value.invariant == inv.IFF


class WanderingToy(ToyReach):
    """Enumerates its moves in a different order on every call: runs cannot be replayed."""

    def legal_thoughts(self, state: ToyState) -> Sequence[Thought]:
        out = list(super().legal_thoughts(state))
        random.SystemRandom().shuffle(out)
        return out


def test_a_run_that_cannot_be_replayed_is_caught() -> None:
    case = Case("1 40", settings_of("tot-dfs"))
    run_and_check(WanderingToy(4), case)  # each run on its own keeps every other invariant
    for _ in range(20):  # two orders in a row agree by chance with probability 1/6 per level
        try:
            check_replay(WanderingToy(4), case)
        except InvariantBroken as exc:
            assert exc.invariant == inv.REPLAY
            return
    raise AssertionError("a shuffling task replayed identically 20 times")


def test_a_correct_task_passes_and_the_scripted_model_meets_each_kind_of_thought() -> None:
    # The other side: the kit passes a correct task, and its model proposes legal, illegal and
    # garbage thoughts and fails calls.
    seen: set[str] = set()
    failed = 0
    for seed in range(10):
        case = Case("2 11", settings_of("tot-bfs", "propose", "value", breadth=3), Script(seed, 0.5, 0.3, 0.2, 0.2))
        o = run_and_check(ToyReach(3), case)
        seen |= {e["verdict"] for e in o.of("verdict")}
        failed += o.result.usage.failed_calls
    assert {"valid", "invalid"} <= seen and failed > 0


# ---- composed parts: the kit checks what a task composes as it checks the task ----------------

class ToyMoves:
    def __init__(self, toy: ToyReach) -> None:
        self.toy = toy

    def legal_thoughts(self, state: Any) -> Sequence[Thought]:
        return self.toy.legal_thoughts(state)


class ToyPrompts:
    def __init__(self, toy: ToyReach) -> None:
        self.toy = toy

    def propose_prompt(self, state: Any, chat: bool) -> str:
        return self.toy.propose_prompt(state, chat)

    def parse_proposals(self, state: Any, text: str) -> list[Thought]:
        return self.toy.parse_proposals(state, text)

    def value_prompt(self, state: Any, chat: bool) -> str:
        return self.toy.value_prompt(state, chat)

    def parse_value(self, text: str) -> str | None:
        return self.toy.parse_value(text)


class ToyOracle:
    def __init__(self, toy: ToyReach) -> None:
        self.toy = toy

    def oracle(self, state: Any) -> bool:
        return self.toy.oracle(state)


class ToyCore:
    """ToyReach in five methods; its moves, prompts and oracle are parts it composes."""

    name = "toy-core"
    max_depth = 3

    def __init__(self, parts: Any = None) -> None:
        self.toy = ToyReach(3)
        self.parts = parts if parts is not None else (ToyMoves(self.toy), ToyPrompts(self.toy), ToyOracle(self.toy))

    def root(self, puzzle: str) -> Any:
        return self.toy.root(puzzle)

    def check(self, state: Any, thought: Thought) -> Verdict[Any]:
        return self.toy.check(state, thought)

    def answer(self, state: Any) -> str:
        return self.toy.answer(state)

    def report_answer(self, puzzle: str, answer: str) -> Any:
        return self.toy.report_answer(puzzle, answer)

    def describe(self, state: Any) -> str:
        return self.toy.describe(state)


def test_a_task_of_composed_parts_passes_and_its_prompts_reach_the_scripted_model() -> None:
    from solver.task_capabilities import HasOracle, LegalMoves, ProposePrompts, ValuePrompts
    from solver.testing.parts import check_parts

    assert set(check_parts(ToyCore())) == {LegalMoves, ProposePrompts, ValuePrompts, HasOracle}
    check_search_invariants(ToyCore, TOY_PUZZLES, max_examples=FEW,
                            settings=search_settings(max_depth=3, generators=["propose", "enumerate-rank"],
                                                     evaluators=["value", "oracle"]),
                            solvable=lambda p: solvable_with_steps(p, 3))


class NoStateMoves:
    def legal_thoughts(self) -> Sequence[Thought]:  # the bug: no state parameter
        return []


class SyncScore:
    soft_score_name = "toy"

    def soft_score(self, client: Any, answer: str, n: int, *, seed: int | None = 0,
                   chat: bool = False) -> tuple[int | None, ...]:  # the bug: not async
        return (None,) * n


class Nothing:
    def helper(self) -> None:
        return None


@pytest.mark.parametrize("parts,message", [
    ((NoStateMoves(),), "NoStateMoves.legal_thoughts (found for LegalMoves on ToyCore) cannot be called as "
                        "legal_thoughts(self, state: 'Any')"),
    ((SyncScore(),), "SyncScore.soft_score (found for SoftScore on ToyCore) must be async"),
    ((Nothing(),), "part Nothing of ToyCore gives no capability of solver.task_capabilities"),
    ("moves", "ToyCore.parts must be a tuple of part objects, not str"),
])
def test_a_part_that_does_not_really_implement_its_capability_is_caught(parts: Any, message: str) -> None:
    from solver.testing.parts import PartBroken, check_parts

    with pytest.raises(PartBroken) as caught:
        check_parts(ToyCore(parts))
    assert str(caught.value).startswith(message), str(caught.value)
    with pytest.raises(PartBroken):  # before any run
        check_search_invariants(ToyCore(parts), TOY_PUZZLES, max_examples=1)


class PeekingMoves(ToyMoves):
    """Legal moves that write into the state they are asked about."""

    def legal_thoughts(self, state: Any) -> Sequence[Thought]:
        state.path.append("peek")  # the bug
        return self.toy.legal_thoughts(ToyState(state.value, state.target))


class ListCore(ToyCore):
    """ToyCore with list-holding states (copied on every step), so a part can mutate one."""

    def root(self, puzzle: str) -> Any:
        start, target = self.toy.parse(puzzle)
        return ListState(start, target)

    def check(self, state: Any, thought: Thought) -> Verdict[Any]:
        verdict = self.toy.check(ToyState(state.value, state.target), thought)
        if isinstance(verdict, Invalid):
            return verdict
        new = ListState(verdict.state.value, state.target, [*state.path, thought.text])
        return Solved(new) if isinstance(verdict, Solved) else Valid(new)

    def answer(self, state: Any) -> str:
        return " ".join(state.path)


def test_a_part_that_mutates_a_state_is_caught() -> None:
    broken(inv.MUTATION, task=lambda: ListCore((PeekingMoves(ToyReach(3)),)), puzzles=TOY_PUZZLES,
           max_examples=FEW, iff=False, replay=False,
           settings=search_settings(generators=["enumerate"], evaluators=["prior"]), budget=budgets(max_calls=None))
