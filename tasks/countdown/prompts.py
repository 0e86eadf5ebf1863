"""Our Countdown prompts: few-shot completion style for base models (the embedded one), an
instruction line for chat models, and the short zero-shot prompts of ``tot export countdown``.

Every step in the few-shot blocks is one the gate accepts under both rule variants, and every
judgement agrees with the exact oracle (tests/test_countdown_prompts.py checks both). ``{rules}``
is the rule variant's sentence (``RULE_LINES``)."""

RULE_LINES = {
    "once": "each number used exactly once",
    "television": "each number used at most once, every result a positive whole number",
}

PROPOSE_FEWSHOT = """Reach the target with + - * /, {rules}.
Each line uses two of the numbers and lists the numbers left.

Target: 120
Input: 2 5 10 25
Possible next steps:
5 * 25 = 125 (left: 2 10 125)
10 / 2 = 5 (left: 5 5 25)
2 * 10 = 20 (left: 5 20 25)
25 - 5 = 20 (left: 2 10 20)
10 + 25 = 35 (left: 2 5 35)
2 + 5 = 7 (left: 7 10 25)

Target: 225
Input: 3 50 75
Possible next steps:
3 * 50 = 150 (left: 75 150)
75 / 3 = 25 (left: 25 50)
50 + 75 = 125 (left: 3 125)
3 * 75 = 225 (left: 50 225)

Target: 700
Input: 7 100
Possible next steps:
7 * 100 = 700 (left: 700)
100 - 7 = 93 (left: 93)

Target: {target}
Input: {numbers}
Possible next steps:
"""

SAMPLE_FEWSHOT = """Reach the target with + - * /, {rules}. Use two of the numbers and write the numbers left.

Target: 120
Input: 2 5 10 25
Next step: 5 * 25 = 125 (left: 2 10 125)

Target: 225
Input: 3 50 75
Next step: 3 * 50 = 150 (left: 75 150)

Target: 700
Input: 7 100
Next step: 7 * 100 = 700 (left: 700)

Target: {target}
Input: {numbers}
Next step:"""

VALUE_FEWSHOT = """Can the numbers reach the target with + - * /, {rules}? Answer sure, likely or impossible.

Numbers: 4 6
Target: 24
4 * 6 = 24
Judgement: sure

Numbers: 1 2 3
Target: 100
(1 + 2) * 3 = 9, 1 + 2 * 3 = 7, far too small
Judgement: impossible

Numbers: 2 10 50
Target: 120
50 + 10 = 60, 60 * 2 = 120
Judgement: sure

Numbers: 2 5 10 25
Target: 120
5 * 25 = 125, close to 120
Judgement: likely

Numbers: 3 7 25
Target: 200
25 * 7 = 175, 25 * (7 + 3) = 250, 25 * 7 + 3 = 178, no way to 200
Judgement: impossible

Numbers: {numbers}
Target: {target}
Judgement:"""

VOTE_FEWSHOT = """Which list of numbers can most easily reach {target} with + - * /, {rules}?

{choices}
The best choice is"""

CHOICE_FEWSHOT = """Pick the step that leads to the target.

Target: 120
Numbers: 2 5 10 25
1. 2 + 5 = 7 (left: 7 10 25)
2. 5 * 25 = 125 (left: 2 10 125)
3. 10 + 25 = 35 (left: 2 5 35)
Best step: 2

Target: 700
Numbers: 7 100
1. 100 - 7 = 93 (left: 93)
2. 7 * 100 = 700 (left: 700)
Best step: 2

Target: {target}
Numbers: {numbers}
{options}
Best step:"""

CHAT_PREFIX = ("You are playing Countdown: reach the target with + - * /, {rules}. Combine two of the numbers "
               "per step. Write each step exactly as 'a op b = c (left: remaining numbers)'.\n\n")

# ---- short zero-shot prompts (TrainingPrompts): exported training data and adapters trained on it

TRAIN_VALUE = "Numbers: {numbers}\nTarget: {target}\nCan they reach it? Answer:"
TRAIN_STEP = "Numbers: {numbers}\nTarget: {target}\nNext step:\n"

# ---- baselines (IO, CoT, refinement); every example is checked by tests/test_countdown_prompts.py

IO_FEWSHOT = """Reach the target with + - * / and brackets, {rules}.

Numbers: 2 5 10 25
Target: 120
Answer: 5 * 25 - 10 / 2 = 120

Numbers: 3 50 75
Target: 225
Answer: 3 * 50 + 75 = 225

Numbers: 25 50 75 100 3 6
Target: 952
Answer: ((100 + 6) * 3 * 75 - 50) / 25 = 952

Numbers: {numbers}
Target: {target}
Answer:"""

COT_FEWSHOT = """Reach the target with + - * / and brackets, {rules}. Combine two numbers per step, list the
numbers left, then write the answer.

Numbers: 2 5 10 25
Target: 120
Steps:
5 * 25 = 125 (left: 2 10 125)
10 / 2 = 5 (left: 5 125)
125 - 5 = 120 (left: 120)
Answer: 5 * 25 - 10 / 2 = 120

Numbers: 3 50 75
Target: 225
Steps:
3 * 50 = 150 (left: 75 150)
75 + 150 = 225 (left: 225)
Answer: 3 * 50 + 75 = 225

Numbers: {numbers}
Target: {target}
Steps:
"""

REFINE_FEWSHOT = """Reach the target with + - * / and brackets, {rules}.
A checker reads each attempt; write a corrected answer.

Numbers: 2 5 10 25
Target: 120
Attempt: 5 * 25 - 5 = 120
Checker: uses numbers [5 25 5] but the puzzle has [2 5 10 25]
Answer: 5 * 25 - 10 / 2 = 120

Numbers: 3 50 75
Target: 225
Attempt: 3 * 75 = 225
Checker: uses numbers [3 75] but the puzzle has [3 50 75]
Answer: 3 * 50 + 75 = 225

Numbers: {numbers}
Target: {target}
Attempt: {attempt}
Checker: {feedback}
Answer:"""

ANSWER_CHAT_PREFIX = ("You are playing Countdown: reach the target with + - * / and brackets, {rules}. "
                      "End with one line 'Answer: <expression> = <target>'.\n\n")

# Base models run on past the answer into a new example; these end a completion there.
BASELINE_STOP = ("\nNumbers:", "\n\n")
