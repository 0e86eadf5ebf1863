"""Exact checkers and oracles. Nothing in this package ever calls a language model."""
