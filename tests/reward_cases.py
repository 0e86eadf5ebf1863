"""What the rewards read: each case a completion, its puzzle and the reward it must get, with why.
tests/test_reward_answers.py checks every case, and that docs/rewards.md shows exactly this table
(``python -m tests.reward_cases`` prints it). Puzzle of every Game-of-24 case: 4 9 10 13, whose
answer (10 - 4) * (13 - 9) is 24 (6 * 4), unless the case names another; Sudoku: the 3x3 board
*2*|*32|*13 under Latin-square rules (``latin=True``: rows and columns; 3x3 has no boxes); Countdown:
25 50 75 100 3 6 -> 952, each number once."""

from __future__ import annotations

E = "(10 - 4) * (13 - 9)"
G, S = "4 9 10 13", "*2*|*32|*13"
C, CE = "25 50 75 100 3 6 -> 952", "((100 + 6) * 3 * 75 - 50) / 25"
ROWS = ["321", "132", "213"]  # the one completion of *2*|*32|*13 (Latin: rows and columns)

# (task, puzzle, completion, reward, why)
CASES: list[tuple[str, str, str, float, str]] = [
    ("game24", G, f"Answer: {E}", 1.0, "an `Answer:` line"),
    ("game24", G, f"**Final answer:** {E} = 24.", 1.0, "markdown around the marker, `= 24` and a full stop after"),
    ("game24", G, f"<answer>{E}</answer>\nCheck: 8 * 3 = 24", 1.0, "`<answer>` tags; what follows them is not read"),
    ("game24", G, f"<think>4 * 6 = 24?</think>\n<answer>\n{E}\n</answer>", 1.0, "`<think>` is never the answer"),
    ("game24", G, "$\\boxed{(10 - 4) \\times (13 - 9)}$", 1.0, "`\\boxed{}`, TeX's `\\times`"),
    ("game24", G, f"4 + 9 = 13, no.\n{E} = 24", 1.0, "unmarked: the last line of arithmetic"),
    ("game24", G, f"- {E} = 24.0", 1.0, "a list mark `- `; `= 24.0` equals 24"),
    ("game24", G, f"{E} == 24", 1.0, "`==`"),
    ("game24", "3 3 8 8", "8:(3-8:3)", 1.0, "`:` is division, as in the checker (puzzle 3 3 8 8)"),
    ("game24", G, f"{E}^2", 0.0, "a power: outside the notation"),
    ("game24", G, f"{E}\u00b2", 0.0, "a superscript power"),
    ("game24", G, f"{E}!", 0.0, "a factorial"),
    ("game24", G, f"sqrt({E})", 0.0, "a function"),
    ("game24", G, f"{E} mod 5", 0.0, "`mod`"),
    ("game24", G, f"{E} % 5", 0.0, "`%`"),
    ("game24", G, f"Answer: not {E}", 0.0, "a word on the answer"),
    ("game24", G, f"So {E} = 24", 0.0, "unmarked, a word on the last line of arithmetic"),
    ("game24", G, f"2 *\n{E}", 0.0, "the answer goes on from the line before"),
    ("game24", G, f"Answer: {E}\n^2", 0.0, "the answer goes on to the next line"),
    ("game24", G, f"<answer>{E}\n/ 5</answer>", 0.0, "inside tags every line is the answer"),
    ("game24", G, f"<answer>{E}", 0.0, "a tag never closed: no answer"),
    ("game24", G, f"<think>{E}</think>", 0.0, "only thinking: no answer"),
    ("game24", G, f"Answer: {E}\nAnswer: 4 * 6", 0.0, "the last marked answer counts"),
    ("game24", G, "4 * 6 = 24", 0.0, "not the puzzle's numbers"),
    ("countdown", C, f"<answer>{CE}</answer>", 1.0, "`<answer>` tags, as TinyZero's prompts ask"),
    ("countdown", C, f"Answer: {CE} = 952", 1.0, "the stated result is the target"),
    ("countdown", C, f"<answer>{CE} = 953</answer>", 0.0, "a wrong stated result around a correct expression"),
    ("countdown", C, f"Answer: {CE} + 1", 0.0, "an operation more, on a correct expression"),
    ("countdown", C, "Answer: 100 * 9 + 50 + 2", 0.0, "numbers not in the puzzle"),
    ("countdown", C, "Answer: 952", 0.0, "the target alone"),
    ("sudoku", S, "<answer>" + "\n".join(ROWS) + "</answer>", 1.0, "tags sharing lines with the first and last rows"),
    ("sudoku", S, "Answer: " + "|".join(ROWS), 1.0, "one line, rows split by `|`"),
    ("sudoku", S, "Answer:\n" + "\n".join(" ".join(r) for r in ROWS), 1.0, "one row a line after `Answer:`"),
    ("sudoku", S, "Here:\n```\n" + "\n".join(ROWS) + "\n```", 1.0, "unmarked: the last board"),
    ("sudoku", S, "<answer>" + "\n".join(ROWS) + "\nDone.</answer>", 0.0, "a word inside the tags"),
    ("sudoku", S, "Answer: " + "|".join(ROWS[::-1]), 0.0, "a given changed"),
]



def _cell(text: str) -> str:
    return "`" + text.replace("\n", "⏎").replace("|", "\\|").replace("`", "'") + "`"


def table() -> str:
    lines = ["| task | puzzle | completion (⏎ a line break) | reward | why |", "|---|---|---|---|---|"]
    lines += [f"| {task} | {_cell(puzzle)} | {_cell(text)} | {reward} | {why.replace('|', chr(92) + '|')} |"
              for task, puzzle, text, reward, why in CASES]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
