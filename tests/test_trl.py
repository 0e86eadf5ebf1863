"""TRL end to end, on the embedded model's architecture and tokenizer at toy size.

``GRPOTrainer`` trains 2 steps with the project's reward (``verifiers.rewards.game24``, called by
the trainer as TRL calls any reward function), and ``SFTTrainer`` 2 steps on the JSON lines ``tot
export`` writes, loaded by ``datasets.load_dataset("json", ...)``. The model is Gemma 3 (the
embedded model's architecture and its 262,144-token vocabulary) with two tiny layers, initialised at
random from a config; the tokenizer is read from the embedded model's GGUF. Nothing is downloaded:
any attempt to open a network connection fails the test. The pieces (tokenizer, tiny model, the
GRPO dataset and config, the stop at a blank line) are examples/grpo_game24.py's own.

Needs the ``train`` extra (TRL with it): skipped without it, and a failure without it under ``CI``
(.ci/run installs it), as tests/test_train.py does.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_MISSING = [m for m in ("torch", "transformers", "datasets", "trl") if importlib.util.find_spec(m) is None]
if _MISSING and os.environ.get("CI") and sys.version_info >= (3, 11):  # the train extra has no trl on 3.10
    pytest.fail(f"CI installs the train extra, but {', '.join(_MISSING)} did not import", pytrace=False)
if _MISSING:
    pytest.skip(f"the train extra is not installed ({', '.join(_MISSING)}); CI installs it", allow_module_level=True)

import torch  # noqa: E402
from datasets import load_dataset  # noqa: E402

from solver.tools.cli import main as tot  # noqa: E402
from verifiers.rewards import game24  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The example's IO prompt without its five solved examples: TRL's loss projects every prompt token
# through the 262,144-word head, so the full prompt (about 200 tokens) takes several times as long.
SHORT_PROMPT = "Input: {numbers}\nAnswer:"

# Ranks 1 and 2 of the paper's 24.csv (training puzzles), each with a known answer.
SOLVED = {"1 1 4 6": "4 * 6 * (1 * 1)", "1 1 11 11": "(11 + 1) + (11 + 1)"}


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("grpo_game24", ROOT / "examples" / "grpo_game24.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["grpo_game24"] = module
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()


@pytest.fixture(scope="module")
def offline() -> Iterator[list[Any]]:
    """Every attempt to connect an internet socket, refused and recorded (asserted empty after)."""
    tried: list[Any] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            tried.append(address)
            raise OSError(f"tests/test_trl.py: no network (tried {address!r})")
        return real(self, address)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", connect)
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield tried
    assert tried == [], f"something tried the network: {tried}"


@pytest.fixture(scope="module")
def tokenizer(offline: list[Any]) -> Any:
    tok = EXAMPLE.load_tokenizer()  # from the GGUF: transformers converts its vocabulary (tens of seconds)
    assert len(tok) == 262_144 and tok.eos_token == "<eos>"
    return tok


def _params(model: Any) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def _changed(before: dict[str, torch.Tensor], model: Any) -> list[str]:
    return [k for k, v in model.named_parameters() if not torch.equal(before[k], v.detach())]


def _puzzle_of(prompt: str) -> str:
    """The puzzle a prompt asks about (its last ``Input:`` line), read from its text."""
    found = re.findall(r"^Input: (.+)$", prompt, re.M)
    return str(found[-1])


def test_grpo_trains_two_steps_on_the_exact_reward(tokenizer: Any, offline: list[Any], tmp_path: Path) -> None:
    from trl import GRPOTrainer

    calls: list[dict[str, Any]] = []

    def game24_half_solved(prompts: Any = None, completions: Any = None, **columns: Any) -> list[float]:
        """game24 on the model's completions with every other one replaced by a known answer to
        the puzzle its prompt names (so each group's rewards differ and GRPO has a gradient)."""
        own = game24(prompts=prompts, completions=completions, **columns)
        shown = [f"{SOLVED[_puzzle_of(p)]} = 24" if i % 2 == 0 else c
                 for i, (p, c) in enumerate(zip(prompts, completions, strict=True))]
        got = game24(prompts=prompts, completions=shown, **columns)
        calls.append({"prompts": list(prompts), "completions": list(completions), "columns": columns, "own": own,
                      "got": got})
        return got

    data = EXAMPLE.dataset(limit=2, template=SHORT_PROMPT)
    assert data["puzzle"] == list(SOLVED)
    model = EXAMPLE.tiny_model(tokenizer)
    stops = EXAMPLE.stop_at_blank_line(model, tokenizer)
    before = _params(model)
    args = EXAMPLE.grpo_config(str(tmp_path / "grpo"), steps=2, generations=4, max_completion=8, learning_rate=1e-3,
                               disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[game24, game24_half_solved], train_dataset=data,
                          processing_class=tokenizer, args=args)
    assert trainer.eos_token_ids == stops
    trainer.train()

    assert trainer.state.global_step == 2 and len(calls) == 2  # one generation, one reward call, per step
    assert {_puzzle_of(c["prompts"][0]) for c in calls} == set(SOLVED)  # both puzzles, one a step
    for call in calls:
        columns, n = call["columns"], len(call["completions"])
        assert n == 4
        # every dataset column but the prompt arrives by keyword, one entry per completion, in order
        assert columns["puzzle"] == [_puzzle_of(p) for p in call["prompts"]]
        assert columns["rank"] == [list(SOLVED).index(p) + 1 for p in columns["puzzle"]]
        assert {"completion_ids", "trainer_state"} <= set(columns)
        # a known answer scores 1.0 inside the trainer's call; a random model's text scores 0.0
        assert call["got"][0::2] == [1.0, 1.0]
        assert call["own"] == [0.0] * n and call["got"][1::2] == [0.0, 0.0]
    steps = [row for row in trainer.state.log_history if "reward" in row]
    assert len(steps) == 2
    for row, call in zip(steps, calls, strict=True):  # what the trainer logged is what the reward returned
        assert row["rewards/game24/mean"] == pytest.approx(sum(call["own"]) / 4)
        assert row["rewards/game24_half_solved/mean"] == pytest.approx(0.5)
        assert row["reward"] == pytest.approx(0.5)
        assert row["frac_reward_zero_std"] == 0.0 and row["grad_norm"] > 0
    assert _changed(before, model)  # the rewards moved the weights


def test_sft_trains_two_steps_on_an_export(tokenizer: Any, offline: list[Any], tmp_path: Path) -> None:
    from trl import SFTConfig, SFTTrainer

    out = tmp_path / "export"
    assert tot(["export", "game24", "--out", str(out), "--splits", "train", "--formats", "value", "--limit", "10"]) == 0
    path = out / "train-value.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    data = load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "datasets"))
    assert data.to_list() == records  # every field as written, nulls included
    assert set(data["completion"]) == {" sure", " impossible"}

    model = EXAMPLE.tiny_model(tokenizer)
    before = _params(model)
    args = SFTConfig(output_dir=str(tmp_path / "sft"), max_steps=2, per_device_train_batch_size=4, learning_rate=1e-3,
                     logging_steps=1, report_to=[], save_strategy="no", seed=0, disable_tqdm=True,
                     use_cpu=not torch.cuda.is_available())
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    # the loss is on the label alone: the tokens not masked out are the record's completion and the end
    for row, record in zip(trainer.train_dataset, records, strict=True):
        assert tokenizer.decode([t for t in row["labels"] if t != -100]) == record["completion"] + tokenizer.eos_token
    trainer.train()

    assert trainer.state.global_step == 2
    losses = [row["loss"] for row in trainer.state.log_history if "loss" in row]
    assert len(losses) == 2 and all(math.isfinite(x) and x > 0 for x in losses)
    assert _changed(before, model)
