"""Sudoku after Long (2023): boards proposed as JSON, gated by the exact checker."""
