"""Our Game-of-24 prompts: few-shot completion style for base models, instructions for chat."""

PROPOSE_FEWSHOT = """Each line uses two of the numbers with + - * / and lists the numbers left.

Input: 3 5 8 11
Possible next steps:
3 + 5 = 8 (left: 8 8 11)
11 - 3 = 8 (left: 5 8 8)
5 * 8 = 40 (left: 3 11 40)
11 - 8 = 3 (left: 3 3 5)
8 / 3 = 8/3 (left: 5 8/3 11)
3 * 11 = 33 (left: 5 8 33)

Input: 2 6 7
Possible next steps:
6 - 2 = 4 (left: 4 7)
7 * 2 = 14 (left: 6 14)
6 / 2 = 3 (left: 3 7)
7 - 6 = 1 (left: 1 2)
2 + 7 = 9 (left: 6 9)

Input: 4 6
Possible next steps:
4 * 6 = 24 (left: 24)
6 - 4 = 2 (left: 2)
4 + 6 = 10 (left: 10)

Input: {numbers}
Possible next steps:
"""

SAMPLE_FEWSHOT = """Use two of the numbers with + - * / and write the numbers left.

Input: 3 5 8 11
Next step: 11 - 8 = 3 (left: 3 3 5)

Input: 2 6 7
Next step: 7 * 2 = 14 (left: 6 14)

Input: 4 6
Next step: 4 * 6 = 24 (left: 24)

Input: {numbers}
Next step:"""

VALUE_FEWSHOT = """Can the numbers reach 24 with + - * /, each used once? Answer sure, likely or impossible.

Numbers: 4 6
4 * 6 = 24
Judgement: sure

Numbers: 1 2 3
1 + 2 = 3, 3 * 3 = 9, too small
Judgement: impossible

Numbers: 2 10 12
12 + 10 + 2 = 24
Judgement: sure

Numbers: 5 7 8
5 + 7 + 8 = 20, (8 - 5) * 7 = 21, close
Judgement: likely

Numbers: 1 1 3
1 + 1 + 3 = 5, all too small
Judgement: impossible

Numbers: {numbers}
Judgement:"""

VOTE_FEWSHOT = """Which list of numbers can most easily reach 24 with + - * /, each used once?

{choices}
The best choice is"""

CHAT_PREFIX = ("You are playing the Game of 24. Combine two of the numbers with + - * / per step. "
               "Write each step exactly as 'a op b = c (left: remaining numbers)'.\n\n")

CHOICE_FEWSHOT = """Pick the step that leads to 24.

Numbers: 4 6 7
1. 4 + 6 = 10 (left: 7 10)
2. 7 - 4 = 3 (left: 3 6)
3. 6 * 7 = 42 (left: 4 42)
Best step: 2

Numbers: 2 3 8 9
1. 2 + 3 = 5 (left: 5 8 9)
2. 9 - 8 = 1 (left: 1 2 3)
3. 2 * 9 = 18 (left: 3 8 18)
4. 3 * 8 = 24 (left: 2 9 24)
Best step: 3

Numbers: {numbers}
{options}
Best step:"""

# ---- short zero-shot prompts (TrainingPrompts): exported training data and the adapters trained on it

TRAIN_VALUE = "Numbers: {numbers}\nCan they reach 24? Answer:"
TRAIN_STEP = "Numbers: {numbers}\nNext step:\n"

# ---- baselines (IO, CoT, refinement); every example below is checked by tests/test_baselines_game24.py

IO_FEWSHOT = """Use the four numbers and + - * / to make 24. Each number is used exactly once.

Input: 4 4 6 8
Answer: (4 + 8) * (6 - 4) = 24

Input: 2 9 10 12
Answer: 2 * 12 * (10 - 9) = 24

Input: 4 9 10 13
Answer: (13 - 9) * (10 - 4) = 24

Input: 1 4 8 8
Answer: (8 / 4 + 1) * 8 = 24

Input: 5 5 5 9
Answer: 5 + 5 + 5 + 9 = 24

Input: {numbers}
Answer:"""

COT_FEWSHOT = """Use the four numbers and + - * / to make 24. Combine two numbers per step, list the numbers
left, then write the answer.

Input: 4 4 6 8
Steps:
4 + 8 = 12 (left: 4 6 12)
6 - 4 = 2 (left: 2 12)
2 * 12 = 24 (left: 24)
Answer: (6 - 4) * (4 + 8) = 24

Input: 2 9 10 12
Steps:
12 * 2 = 24 (left: 9 10 24)
10 - 9 = 1 (left: 1 24)
24 * 1 = 24 (left: 24)
Answer: (12 * 2) * (10 - 9) = 24

Input: 4 9 10 13
Steps:
13 - 10 = 3 (left: 3 4 9)
9 - 3 = 6 (left: 4 6)
4 * 6 = 24 (left: 24)
Answer: 4 * (9 - (13 - 10)) = 24

Input: {numbers}
Steps:
"""

REFINE_FEWSHOT = """Use the four numbers and + - * / to make 24. Each number is used exactly once.
A checker reads each attempt; write a corrected answer.

Input: 4 4 6 8
Attempt: (4 + 8) * (6 - 4) + 4
Checker: uses numbers [4 8 6 4 4] but the puzzle has [4 4 6 8]
Answer: (4 + 8) * (6 - 4) = 24

Input: 1 4 8 8
Attempt: 8 * 4 - 8 - 1
Checker: evaluates to 23, not 24
Answer: (8 / 4 + 1) * 8 = 24

Input: 4 9 10 13
Attempt: 4 * 9 - 13 + 10
Checker: evaluates to 33, not 24
Answer: (13 - 9) * (10 - 4) = 24

Input: {numbers}
Attempt: {attempt}
Checker: {feedback}
Answer:"""

ANSWER_CHAT_PREFIX = ("You are playing the Game of 24: use each of the four numbers exactly once with + - * / "
                      "to make 24. End with one line 'Answer: <expression> = 24'.\n\n")

# Base models run on past the answer into a new example; these end a completion there.
BASELINE_STOP = ("\nInput:", "\n\n")
