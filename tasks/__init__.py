"""Tasks: one folder per puzzle family, each binding its prompts, parsers and exact checker.

Each task package exports its task class (``Game24``, ``Sudoku``, ``Crosswords``, ``Writing``,
``Planning``) and its state type; ``tasks.datafiles`` finds the papers' data shipped with the package.
"""
