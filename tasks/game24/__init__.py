"""Game of 24 (Yao et al. 2023): four numbers, + - * /, reach 24."""

from tasks.game24.task import Game24, State24, parse_puzzle

__all__ = ["Game24", "State24", "parse_puzzle"]
