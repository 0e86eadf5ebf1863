"""Crossword evaluators: the paper's per-clue model judgement and lexicon fillability.

Both score 1.0 (keep) or 0.0 (prune, below ``prune_below``); ties keep the generator's order,
as the paper's DFS orders by proposal confidence and uses the evaluator only to prune."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from solver.lm.session import Session
from solver.node import Node
from solver.task_capabilities import Needs, no_model, require
from tasks.crosswords.parts import CandidateWords, clue_value_prompt
from verifiers.crossword import Fillability, FillLevel, fillability

LABELS = ("sure", "maybe", "impossible")


@dataclass(slots=True)
class ClueJudge:
    """For every open clue of a state, the model judges sure / maybe / impossible from the clue and
    the letters (one deterministic scoring call: the label with the highest likelihood). Any
    "impossible" prunes the state, as in the paper."""

    name: str = "clues"
    prune_below: float = 0.5
    needs: ClassVar[Needs] = Needs(model=True)  # and a crossword state (its clues)

    async def _judge(self, task: Any, node: Node[Any], model: Session) -> tuple[float, Any]:
        labels: dict[str, str] = {}
        for s in node.state.grid.open_slots():
            lps = await model.score(clue_value_prompt(node.state, s), [f" {lab}" for lab in LABELS], "value")
            if lps is None:
                continue  # a failed call is no evidence either way
            labels[s.name] = LABELS[max(range(len(LABELS)), key=lambda i: lps[i])]
        return (0.0 if "impossible" in labels.values() else 1.0), {"labels": labels}

    async def __call__(self, task: Any, nodes: Sequence[Node[Any]],
                       model: Session | None) -> list[tuple[float, Any]]:
        if model is None:
            raise no_model(f"evaluator `{self.name}`")
        return [await self._judge(task, nd, model) for nd in nodes]


@dataclass(slots=True)
class Fillable:
    """No model: 1.0 when every slot can still take a lexicon word (at ``level``), else 0.0."""

    level: FillLevel = "arc"
    name: str = "fillable"
    prune_below: float = 0.5
    needs: ClassVar[Needs] = Needs((CandidateWords,))  # the crossword's lexicon; no model
    # DFS meets the same board along different orders of the same words; judge each board once.
    _memo: dict[tuple[int, str], Fillability] = field(default_factory=dict, repr=False)

    async def __call__(self, task: Any, nodes: Sequence[Node[Any]],
                       model: Session | None) -> list[tuple[float, Any]]:
        lexicon = require(task, CandidateWords, f"evaluator `{self.name}`").lexicon
        out: list[tuple[float, Any]] = []
        for nd in nodes:
            key = (id(lexicon), nd.state.board)
            f = self._memo.get(key)
            if f is None:
                f = self._memo[key] = fillability(nd.state.grid, lexicon, self.level)
            out.append((0.0 if f.ok is False else 1.0, {"reason": f.reason} if f.reason else None))
        return out


class ClueEvaluators:
    """OwnEvaluators part of the crossword task: ``clues`` (the model judges each open slot's
    clue) and ``fillable`` (the lexicon can still fill the grid, at ``fill_level``)."""

    def __init__(self, fill_level: FillLevel) -> None:
        self.fill_level: FillLevel = fill_level

    def make_evaluator(self, name: str, settings: Any) -> Any:
        if name == "clues":
            return ClueJudge()
        if name == "fillable":
            return Fillable(self.fill_level)
        return None
