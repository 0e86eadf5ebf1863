"""``tot train TASK --data EXPORT_DIR --out ADAPTER.gguf``: a LoRA adapter for the embedded model,
trained on exact labels that ``tot export`` wrote, converted to a GGUF LoRA that the embedded
model loads (``--adapter ADAPTER.gguf``), with a manifest beside it (``ADAPTER.json``): the data
files and their sha256, the seed, the settings, the learning curve on the validation split, the
seconds each stage took, the machine, the library versions, and a check that llama.cpp with the
converted file gives the label probabilities the trained model gives.

Needs the optional ``train`` extra (``pip install 'verified-tot[train]'``: PyTorch, transformers,
PEFT, gguf); the default install does not. Runs on the CPU (2 cores: about an hour for the
shipped Game-of-24 adapter) or on a CUDA GPU where there is one. A run that is stopped keeps the
adapter of its last evaluation (its manifest says ``"complete": false``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

COMMAND = "train"
NEEDS = ("torch", "transformers", "peft", "gguf")
CHECK_PROMPTS = 24  # validation prompts scored by both llama.cpp and PyTorch after conversion


def add_parser(subparsers: Any, plugins: dict[str, Any]) -> None:
    p = subparsers.add_parser("train", help="train a LoRA adapter for the embedded model on exported exact labels",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("task", choices=sorted(plugins), help="the task the data was exported for")
    p.add_argument("--data", required=True, help="a tot export directory (with manifest.json)")
    p.add_argument("--out", required=True, help="the adapter to write (ADAPTER.gguf; ADAPTER.json beside it)")
    p.add_argument("--kinds", default="value", help="what to train: value, step or value,step (default value)")
    p.add_argument("--steps", type=int, default=1500, help="optimiser steps (default 1500)")
    p.add_argument("--batch", type=int, default=32, help="examples per step (default 32)")
    p.add_argument("--lr", type=float, default=4e-4,
                   help="peak learning rate (default 4e-4; 1e-3 diverged when the shipped adapter was trained)")
    p.add_argument("--rank", type=int, default=16, help="LoRA rank (default 16)")
    p.add_argument("--step-share", type=float, default=0.25,
                   help="with --kinds value,step: the share of step examples (default 0.25)")
    p.add_argument("--init", default=None, metavar="ADAPTER.gguf",
                   help="start from this GGUF LoRA adapter (e.g. one a task ships in tasks/TASK/adapters/) instead of "
                        "a fresh one; its rank must be --rank")
    p.add_argument("--eval-every", type=int, default=250, help="steps between held-out evaluations (default 250)")
    p.add_argument("--eval-limit", type=int, default=4000,
                   help="validation states scored at each evaluation, drawn once with the seed (default 4000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the initialisation and the draws (default 0)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("--precision", choices=["auto", "bf16", "fp32"], default="auto",
                   help="auto: bfloat16 where the CPU or GPU has it, else float32")


def _check_installed() -> None:
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(f"tot train needs {', '.join(missing)}: pip install 'verified-tot[train]' "
                         "(from a checkout: pip install -e '.[train]')")


def run(args: argparse.Namespace, plugins: dict[str, Any]) -> int:
    from solver.tools.train.data import read_export
    from solver.tools.train.lora import TrainConfig

    kinds = tuple(dict.fromkeys(k.strip() for k in args.kinds.split(",") if k.strip()))
    if not kinds or any(k not in ("value", "step") for k in kinds):
        raise ValueError("--kinds must be value, step or value,step")
    for name in ("steps", "batch", "rank", "eval_every", "eval_limit"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
    if not (0 < args.lr < 1) or not 0 <= args.step_share <= 1:
        raise ValueError("--lr must lie in (0, 1) and --step-share in [0, 1]")
    out = Path(args.out)
    if out.suffix != ".gguf":
        raise ValueError("--out must end in .gguf (the manifest is written beside it as .json)")
    splits = ("train", "val") if _has_split(args.data, "val") else ("train",)
    data = read_export(args.data, args.task, splits, kinds)  # before the slow imports: bad data fails fast
    _check_installed()
    if args.init:
        from solver.tools.train.gguf_lora import check_gguf_lora
        from solver.tools.train.lora import ARCHITECTURE

        if not Path(args.init).is_file():
            raise ValueError(f"--init {args.init}: no such file")
        check_gguf_lora(Path(args.init), ARCHITECTURE)
    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, rank=args.rank, alpha=2 * args.rank,
                      seed=args.seed, step_share=args.step_share if "step" in kinds and "value" in kinds else
                      (1.0 if kinds == ("step",) else 0.0), eval_every=args.eval_every, eval_limit=args.eval_limit,
                      threads=args.threads, precision=args.precision,
                      init=str(Path(args.init).resolve()) if args.init else None)
    out.parent.mkdir(parents=True, exist_ok=True)
    return train_adapter(args.task, data, kinds, cfg, out)


def _has_split(directory: str, split: str) -> bool:
    from solver.tools.export import read_manifest

    try:
        manifest = read_manifest(Path(directory) / "manifest.json")
    except ValueError:
        return False  # read_export, called next, says what is wrong in one line
    return split in manifest.get("splits", {})


def train_adapter(task: str, data: Any, kinds: tuple[str, ...], cfg: Any, out: Path) -> int:
    """Train, convert, check and write the adapter and its manifest (after every evaluation too)."""
    from solver.lm.adapters import file_sha256
    from solver.lm.local import model_path
    from solver.tools.train import lora

    base = model_path()
    log = _log
    log(f"tot train {task}: loading {base.name} into PyTorch ...")
    trainer = lora.Trainer(base, cfg, log)
    if cfg.init is not None:
        trainer.load_adapter(Path(cfg.init))
        log(f"starting from {cfg.init}")
    log(f"loaded in {trainer.load_seconds:.0f} s on {trainer.device} ({'bfloat16' if trainer.bf16 else 'float32'}); "
        f"{trainer.trainable():,} trainable parameters (rank {cfg.rank})")
    train = data.examples["train"]
    val = data.examples.get("val", {})
    manifest: dict[str, Any] = {
        "task": task, "trained_for": list(kinds), "default": False, "complete": False,
        "base_model": {"file": base.name, "sha256": file_sha256(base), "bytes": base.stat().st_size},
        "data": {"directory": str(data.directory), "export_held_out": data.manifest.get("held_out"),
                 "files": data.files()},
        "prompts": "the task's short prompts (TrainingPrompts)",
        "config": lora.config_dict(cfg), "seed": cfg.seed,
        "init": None if cfg.init is None else {"file": Path(cfg.init).name, "sha256": file_sha256(Path(cfg.init))},
        "machine": _machine(trainer),
        "seconds": {"load": round(trainer.load_seconds, 1)}}
    start = time.time()

    def checkpoint(curve: lora.Curve) -> None:
        manifest["curve"] = curve.points
        manifest["seconds"]["train"] = round(time.time() - start, 1)
        _write(trainer, manifest, out, log, final=False)

    curve = lora.run_training(trainer, train.get("value", []), train.get("step", []), val.get("value", []),
                              on_eval=checkpoint, val_steps=val.get("step", []))
    manifest["curve"] = curve.points
    manifest["seconds"]["train"] = round(time.time() - start, 1)
    manifest["complete"] = True
    _write(trainer, manifest, out, log, final=True, check=[ex.prompt for ex in val.get("value", [])][:CHECK_PROMPTS])
    log(f"wrote {out} and {out.with_suffix('.json')}")
    return 0


def _write(trainer: Any, manifest: dict[str, Any], out: Path, log: Any, *, final: bool,
           check: list[str] | None = None) -> None:
    """The GGUF and its manifest, each written to a temporary name and moved into place; when
    ``final``, then the conversion check, added to the manifest."""
    from solver.lm.adapters import file_sha256
    from solver.tools.train.gguf_lora import write_gguf_lora
    from solver.tools.train.lora import ARCHITECTURE

    start = time.time()
    tmp = out.with_name(out.name + ".part")
    write_gguf_lora(trainer.lora_tensors(), tmp, alpha=trainer.cfg.alpha, architecture=ARCHITECTURE,
                    blocks=trainer.model.config.num_hidden_layers, name=f"verified-tot {manifest['task']} adapter")
    os.replace(tmp, out)
    manifest["seconds"]["convert"] = round(time.time() - start, 1)
    manifest["bytes"] = out.stat().st_size
    manifest["sha256"] = file_sha256(out)
    _write_manifest(manifest, out)
    if final and check:
        manifest["conversion_check"] = c = conversion_check(trainer, out, check)
        _write_manifest(manifest, out)
        log(f"llama.cpp with the GGUF adapter against PyTorch on {c['prompts']} validation prompts: "
            f"largest difference of log p(sure) - log p(impossible) {c['max_difference']:.3f} "
            f"(the base model without the adapter differs by up to {c['max_difference_without_adapter']:.3f})")


def _write_manifest(manifest: dict[str, Any], out: Path) -> None:
    side = out.with_suffix(".json")
    tmp = side.with_name(side.name + ".part")
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, side)


def conversion_check(trainer: Any, adapter: Path, prompts: list[str]) -> dict[str, Any]:
    """log p(sure) - log p(impossible) after each prompt from the embedded model (llama.cpp) with
    the GGUF adapter, against the trained PyTorch model's; and without the adapter, which should
    differ (else the adapter would not be in use)."""
    import asyncio

    from solver.lm.adapters import read_adapter
    from solver.lm.local import LocalBackend

    torch_gaps = trainer.label_gaps(prompts)

    async def gaps(backend: LocalBackend) -> list[float]:
        try:
            out = []
            for prompt in prompts:
                lps, _ = await backend.score(prompt, [" sure", " impossible"])
                out.append(lps[0] - lps[1])
            return out
        finally:
            await backend.close()

    with_adapter = asyncio.run(gaps(LocalBackend(adapter=read_adapter(adapter), threads=trainer.cfg.threads)))
    without = asyncio.run(gaps(LocalBackend(threads=trainer.cfg.threads)))
    return {"prompts": len(prompts),
            "max_difference": round(max(abs(a - b) for a, b in zip(torch_gaps, with_adapter, strict=True)), 4),
            "max_difference_without_adapter": round(
                max(abs(a - b) for a, b in zip(torch_gaps, without, strict=True)), 4),
            "gaps": [{"prompt": p, "pytorch": round(t, 4), "llama_cpp": round(a, 4), "llama_cpp_without": round(b, 4)}
                     for p, t, a, b in zip(prompts, torch_gaps, with_adapter, without, strict=True)]}


def _machine(trainer: Any) -> dict[str, Any]:
    import peft
    import torch
    import transformers

    try:
        import gguf

        gguf_version = getattr(gguf, "__version__", None) or _dist_version("gguf")
    except ImportError:
        gguf_version = None
    return {"system": f"{platform.system()} {platform.machine()}", "processor": platform.processor() or None,
            "cpus": os.cpu_count(), "threads": torch.get_num_threads(), "device": trainer.device,
            "gpu": torch.cuda.get_device_name(0) if trainer.device == "cuda" else None,
            "precision": "bfloat16 autocast" if trainer.bf16 else "float32",
            "python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "peft": peft.__version__, "gguf": gguf_version}


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _log(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)
