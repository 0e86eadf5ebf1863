"""Fine-tune a LoRA adapter for the embedded model on exported examples (transformers + PEFT).

The base model is the very GGUF file the embedded model runs (``solver.lm.local.model_path``),
dequantised by transformers, so the adapter learns against the weights it will be used with.
Examples are batched left-padded, so that every completion ends at the last position and only
the last few positions' logits are computed (a value label is one token: one position); the loss
is the cross-entropy of the completion's tokens. Value examples are drawn balanced: each depth
in turn, then a solvable or an unsolvable state with equal chance, so that the model cannot
learn the share of labels or the number of items in a state instead of the verdict.

Runs on the CPU (bfloat16 autocast where the CPU has bfloat16 instructions, else float32) or on
a CUDA GPU where one is present. Needs the ``train`` extra: ``pip install '.[train]'``.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from solver.tools.train.data import Example

__all__ = ["LABELS", "Curve", "TrainConfig", "Trainer", "auc"]

# The value labels the likelihood evaluator renormalises over, with its scale (solver.task.ValueScale).
LABELS = {" sure": 20.0, " likely": 1.0, " impossible": 0.001}
ARCHITECTURE = "gemma3"  # the embedded model's, as GGUF names it (adapters are written and read for it)
STEP_EVAL_LIMIT = 500  # held-out step examples scored at each evaluation (their completions are long)
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(slots=True)
class TrainConfig:
    """What a training run does; recorded in the adapter's manifest."""

    steps: int = 1500
    batch: int = 32
    lr: float = 4e-4
    warmup: int = 50
    rank: int = 16
    alpha: int = 32
    targets: tuple[str, ...] = TARGETS
    seed: int = 0
    balance: float = 0.5  # the share of solvable states among value examples drawn
    step_share: float = 0.0  # the share of step examples, where step examples are trained
    min_depth: int = 1  # value examples below this depth are never scored by a search (the root): not trained
    eval_every: int = 250
    eval_limit: int = 4000  # value (and step) examples of the validation split scored at each evaluation
    init: str | None = None  # a GGUF LoRA adapter to start from (None: PEFT's initialisation)
    threads: int | None = None
    precision: str = "auto"  # auto, bf16 or fp32


@dataclass(slots=True)
class Curve:
    """The learning curve: at each evaluation, examples seen, mean training loss since the last
    evaluation and held-out figures (AUC of the value score by depth, over every validation state
    and over those never trained on)."""

    points: list[dict[str, Any]] = field(default_factory=list)


def auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """The chance that a random positive scores above a random negative (ties count half);
    None without both."""
    if not pos or not neg:
        return None
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # 1-based mean rank of the tie group
        rank_sum += mid * sum(lab for _, lab in ranked[i:j])
        i = j
    n1, n0 = len(pos), len(neg)
    return (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)


class Trainer:
    """A PEFT LoRA model on the embedded model's weights, its tokenizer and its optimiser."""

    def __init__(self, base: Path, cfg: TrainConfig, log: Callable[[str], None] = print) -> None:
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.cfg, self.log = cfg, log
        torch.manual_seed(cfg.seed)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cpu" and cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.bf16 = cfg.precision == "bf16" or (cfg.precision == "auto" and _bf16_fast(self.device))
        start = time.time()
        self.tok = AutoTokenizer.from_pretrained(str(base.parent), gguf_file=base.name)
        model = AutoModelForCausalLM.from_pretrained(str(base.parent), gguf_file=base.name, dtype=torch.float32)
        self.load_seconds = time.time() - start
        lora = LoraConfig(r=cfg.rank, lora_alpha=cfg.alpha, target_modules=list(cfg.targets), lora_dropout=0.0,
                          bias="none")
        self.model = get_peft_model(model, lora).to(self.device)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=cfg.lr, weight_decay=0.0)
        self.label_ids = [self._one_token(lab) for lab in LABELS]
        self.examples_seen = 0

    def load_adapter(self, path: Path) -> None:
        """Start from the GGUF LoRA adapter at ``path`` (e.g. the shipped one) instead of PEFT's
        initialisation; ValueError (one line) when its rank, alpha or weights do not fit this
        configuration."""
        import torch
        from peft import get_peft_model_state_dict, set_peft_model_state_dict

        from solver.tools.train.gguf_lora import read_gguf_lora

        own = get_peft_model_state_dict(self.model)
        tensors, alpha = read_gguf_lora(path, list(own), architecture=ARCHITECTURE,
                                        blocks=self.model.config.num_hidden_layers)
        if alpha != self.cfg.alpha:
            raise ValueError(f"{path} has LoRA alpha {alpha:g}, this run {self.cfg.alpha} (give --rank {alpha / 2:g})")
        for key, value in tensors.items():
            if tuple(value.shape) != tuple(own[key].shape):
                raise ValueError(f"{path}: {key} is {tuple(value.shape)}, this run's is {tuple(own[key].shape)} "
                                 f"(another rank?)")
        set_peft_model_state_dict(self.model, {k: torch.from_numpy(v).to(self.device) for k, v in tensors.items()})

    def _one_token(self, label: str) -> int:
        ids = self.tok(label, add_special_tokens=False).input_ids
        if len(ids) != 1:
            raise ValueError(f"the value label {label!r} is {len(ids)} tokens for this tokenizer, not one")
        return int(ids[0])

    def trainable(self) -> int:
        return sum(p.numel() for p in self.params)

    def _encode(self, batch: Sequence[Example]) -> tuple[Any, Any, Any, int]:
        """Left-padded ids, attention mask and labels (-100 outside completions), and how many
        final positions hold a completion token. Prompt and completion are tokenised together and
        split where their tokens part, as the embedded model's scoring does."""
        import torch

        rows, comps = [], []
        for ex in batch:
            prompt = self.tok(ex.prompt).input_ids
            full = self.tok(ex.prompt + ex.completion).input_ids
            cut = 0
            while cut < min(len(prompt), len(full)) and prompt[cut] == full[cut]:
                cut += 1
            cut = max(cut, 1)
            rows.append(full)
            comps.append(len(full) - cut)
        width = max(len(r) for r in rows)
        keep = max(comps)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        labels = torch.full((len(rows), keep), -100, dtype=torch.long)
        for i, (r, c) in enumerate(zip(rows, comps, strict=True)):
            ids[i, width - len(r):] = torch.tensor(r)
            mask[i, width - len(r):] = 1
            if c:
                labels[i, keep - c:] = torch.tensor(r[len(r) - c:])
        return ids.to(self.device), mask.to(self.device), labels.to(self.device), keep

    def _logits(self, ids: Any, mask: Any, keep: int) -> Any:
        import torch

        with torch.autocast(self.device, dtype=torch.bfloat16, enabled=self.bf16):
            # logits_to_keep=keep+1: the positions that predict the last ``keep`` tokens
            out = self.model(input_ids=ids, attention_mask=mask, logits_to_keep=keep + 1)
        return out.logits[:, :-1, :].float()

    def step(self, batch: Sequence[Example], lr: float) -> float:
        import torch

        ids, mask, labels, keep = self._encode(batch)
        logits = self._logits(ids, mask, keep)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                 ignore_index=-100)
        for g in self.opt.param_groups:
            g["lr"] = lr
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.examples_seen += len(batch)
        return float(loss.detach())

    def value_scores(self, examples: Sequence[Example], batch: int = 64) -> list[float]:
        """The likelihood evaluator's score of each value example's prompt: the label
        probabilities renormalised over the three labels, times the value scale."""
        import torch

        scale = torch.tensor(list(LABELS.values()))
        out: list[float] = []
        self.model.eval()
        with torch.no_grad():
            for i in range(0, len(examples), batch):
                chunk = examples[i:i + batch]
                enc = self.tok([ex.prompt for ex in chunk], return_tensors="pt", padding=True,
                               padding_side="left").to(self.device)
                with torch.autocast(self.device, dtype=torch.bfloat16, enabled=self.bf16):
                    logits = self.model(**enc, logits_to_keep=1).logits[:, -1, :].float()
                p = torch.softmax(logits[:, self.label_ids], dim=-1).cpu()
                out.extend((p * scale).sum(dim=-1).tolist())
        self.model.train()
        return out

    def completion_loss(self, examples: Sequence[Example], batch: int = 32) -> float | None:
        """Mean cross-entropy a completion token (e.g. of held-out steps), None without examples."""
        import torch

        total, tokens = 0.0, 0
        self.model.eval()
        with torch.no_grad():
            for i in range(0, len(examples), batch):
                ids, mask, labels, keep = self._encode(examples[i:i + batch])
                logits = self._logits(ids, mask, keep)
                total += float(torch.nn.functional.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100, reduction="sum"))
                tokens += int((labels != -100).sum())
        self.model.train()
        return total / tokens if tokens else None

    def label_gaps(self, prompts: Sequence[str]) -> list[float]:
        """log p(sure) - log p(impossible) after each prompt (to compare with llama.cpp's)."""
        import torch

        out = []
        self.model.eval()
        with torch.no_grad():
            for prompt in prompts:
                enc = self.tok([prompt], return_tensors="pt").to(self.device)
                logits = self.model(**enc, logits_to_keep=1).logits[0, -1, :].float()
                lp = torch.log_softmax(logits, dim=-1)
                out.append(float(lp[self.label_ids[0]] - lp[self.label_ids[2]]))
        self.model.train()
        return out

    def lora_tensors(self) -> dict[str, Any]:
        """The adapter's A and B matrices by their transformers name, as float32 numpy arrays."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().float().cpu().numpy() for k, v in get_peft_model_state_dict(self.model).items()}


def _bf16_fast(device: str) -> bool:
    """Whether bfloat16 autocast is worth it here: a CUDA GPU that has it, or a CPU with
    bfloat16 instructions (AVX512-BF16 or AMX); elsewhere float32 (bfloat16 is emulated slowly)."""
    import torch

    if device == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class Sampler:
    """Draws training batches: step examples with chance ``step_share``, else value examples,
    each depth equally often and solvable with chance ``balance`` (see the module's docstring)."""

    def __init__(self, values: Sequence[Example], steps: Sequence[Example], cfg: TrainConfig) -> None:
        self.rng = random.Random(cfg.seed)
        self.cfg = cfg
        self.groups: dict[int, tuple[list[Example], list[Example]]] = {}
        for ex in values:
            if ex.depth < cfg.min_depth:
                continue
            pos, neg = self.groups.setdefault(ex.depth, ([], []))
            (pos if ex.label else neg).append(ex)
        self.depths = sorted(d for d, (p, n) in self.groups.items() if p or n)
        self.steps = list(steps)  # every depth: the root is where a search's first step is proposed
        if not self.depths and not self.steps:
            raise ValueError("no training examples at the trained depths")

    def batch(self) -> list[Example]:
        out = []
        for _ in range(self.cfg.batch):
            if self.steps and (not self.depths or self.rng.random() < self.cfg.step_share):
                out.append(self.rng.choice(self.steps))
                continue
            pos, neg = self.groups[self.rng.choice(self.depths)]
            pick = pos if (pos and (not neg or self.rng.random() < self.cfg.balance)) else neg
            out.append(self.rng.choice(pick))
        return out


def learning_rate(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up, then cosine decay to a tenth."""
    if step <= cfg.warmup:
        return cfg.lr * step / max(1, cfg.warmup)
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def held_out_figures(trainer: Trainer, val: Sequence[Example], trained_keys: set[str]) -> dict[str, Any]:
    """AUC of the value score by depth on the validation examples, over all of them and over
    those whose state was never trained on, and the share ranked right at p(sure) > p(impossible)."""
    scores = trainer.value_scores(val)
    out: dict[str, Any] = {}
    for depth in sorted({ex.depth for ex in val}):
        rows = [(ex, s) for ex, s in zip(val, scores, strict=True) if ex.depth == depth]
        unseen = [(ex, s) for ex, s in rows if ex.key not in trained_keys]
        out[f"depth{depth}"] = {
            "states": len(rows), "solvable": sum(ex.label for ex, _ in rows),
            "auc": _round(auc([s for ex, s in rows if ex.label], [s for ex, s in rows if not ex.label])),
            "unseen_states": len(unseen),
            "unseen_auc": _round(auc([s for ex, s in unseen if ex.label], [s for ex, s in unseen if not ex.label])),
            "accuracy": _round(sum((s > 1.0) == ex.label for ex, s in rows) / len(rows)) if rows else None}
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def run_training(trainer: Trainer, train_values: Sequence[Example], train_steps: Sequence[Example],
                 val_values: Sequence[Example], on_eval: Callable[[Curve], None] | None = None,
                 val_steps: Sequence[Example] = ()) -> Curve:
    """The training loop with held-out evaluations every ``eval_every`` steps and at the end
    (``on_eval`` is called after each, e.g. to keep the adapter so far); a run that starts from an
    adapter (``init``) is evaluated once before its first step too."""
    cfg = trainer.cfg
    sampler = Sampler(train_values, train_steps, cfg)
    keys = {ex.key for ex in train_values} | {ex.key for ex in train_steps}
    rng = random.Random(cfg.seed + 1)
    val = [ex for ex in val_values if ex.depth >= cfg.min_depth]
    if len(val) > cfg.eval_limit:
        val = rng.sample(val, cfg.eval_limit)
    steps_val = list(val_steps) if train_steps else []
    if len(steps_val) > STEP_EVAL_LIMIT:
        steps_val = rng.sample(steps_val, STEP_EVAL_LIMIT)
    curve = Curve()
    losses: list[float] = []
    start = last_log = time.time()

    def evaluate(step: int) -> None:
        point = {"step": step, "examples": trainer.examples_seen, "seconds": round(time.time() - start, 1),
                 "train_loss": round(sum(losses) / len(losses), 4) if losses else None,
                 "held_out": held_out_figures(trainer, val, keys) if val else {}}
        if steps_val:
            point["held_out_step_loss"] = _round(trainer.completion_loss(steps_val))
        curve.points.append(point)
        losses.clear()
        trainer.log(_curve_line(point))

    if cfg.init is not None:
        evaluate(0)
    for step in range(1, cfg.steps + 1):
        losses.append(trainer.step(sampler.batch(), learning_rate(cfg, step)))
        now = time.time()
        # every 50 steps, and at least every 2 minutes when steps are slow (long prompts, shared cores)
        if (step % 50 == 0 or now - last_log >= 120) and step % cfg.eval_every and step != cfg.steps:
            trainer.log(f"step {step}/{cfg.steps}: {(now - start) / step:.2f} s a step")
            last_log = now
        if step % cfg.eval_every == 0 or step == cfg.steps:
            evaluate(step)
            last_log = time.time()
            if on_eval is not None and step < cfg.steps:
                on_eval(curve)
    return curve


def _curve_line(point: dict[str, Any]) -> str:
    loss = point["train_loss"]
    parts = [f"step {point['step']}", f"examples {point['examples']:,}",
             f"loss {'-' if loss is None else f'{loss:.3f}'}"]
    if "held_out_step_loss" in point:
        parts.append(f"held-out step loss {point['held_out_step_loss']}")
    for depth, f in point["held_out"].items():
        a, u = f["auc"], f["unseen_auc"]
        parts.append(f"{depth} AUC {a if a is not None else '-'} (unseen {u if u is not None else '-'})")
    parts.append(f"{point['seconds']:.0f} s")
    return "; ".join(parts)


def config_dict(cfg: TrainConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d["targets"] = list(cfg.targets)
    return d
