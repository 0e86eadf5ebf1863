"""5x5 mini crosswords (Yao et al. 2023): fill the grid from ten clues, h1-h5 and v1-v5."""

from tasks.crosswords.task import Crosswords, CrosswordState, parse_thought

__all__ = ["Crosswords", "CrosswordState", "parse_thought"]
