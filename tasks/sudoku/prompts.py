"""Sudoku prompts: completion style with worked examples for base models, an instruction for chat.

Boards are written in the board syntax (``3*1|*2*|1**``) and answers as JSON rows, as in Long
(2023), whose model answered with the next partial board in JSON.
"""

from __future__ import annotations

RULES = ("Fill the blanks (*) of a {n}x{n} board with digits 1 to {n} so that every row and every "
         "column holds each digit exactly once{boxes}. Rows are separated by |.")
BOXES = ", and so does every {h}x{w} box"

# One step: copy the board and fill one more cell. Examples of sizes 3 and 4.
STEP_EXAMPLES = """Board: *2*|*32|*13
Next board: {"rows": ["32*", "*32", "*13"]}

Board: 32*|*32|*13
Next board: {"rows": ["321", "*32", "*13"]}

Board: **2*|3241|*4*2|***4
Next board: {"rows": ["**2*", "3241", "14*2", "***4"]}

"""

STEP = """{rules}
Each step copies the board and fills one more blank cell.

{examples}Board: {board}
Next board:"""

VALUE = """{rules}
Can the board still be completed? Answer sure, likely or impossible.

Board: 321|*32|*13
Judgement: sure

Board: 12*|*32|*13
Judgement: impossible

Board: 1***|**2*|****|***3
Judgement: likely

Board: {board}
Judgement:"""

VOTE = """{rules}
Which board is easiest to complete?

{choices}
The best choice is"""

# Baselines: ask for the whole solution at once.
SOLUTION_EXAMPLES = (
    ("*2*|*32|*13", '{"rows": ["321", "132", "213"]}'),
    ("**2*|3241|*4*2|***4", '{"rows": ["4123", "3241", "1432", "2314"]}'),
    ("1254*|5*3**|4*1**|3*2*1|**4*5", '{"rows": ["12543", "51324", "45132", "34251", "23415"]}'),
)

SOLUTION = """{rules}
Answer with the solved board as JSON rows.

{examples}Board: {board}
Solution:"""

# Short zero-shot prompts (TrainingPrompts): ``tot export sudoku`` data and the adapters trained on
# it. {rules}: "boxes" where the board has boxes under the rules in use, else "no boxes". A step is
# the next board in the board syntax, one more cell filled, on its own line.
TRAIN_VALUE = "Board ({n}x{n}, {rules}): {board}\nCan it be completed? Answer:"
TRAIN_STEP = "Board ({n}x{n}, {rules}): {board}\nNext board:\n"

CHAT_PREFIX = "You are solving a Sudoku-like puzzle. Reply with JSON only.\n\n"
