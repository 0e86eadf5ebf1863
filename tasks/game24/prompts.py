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
