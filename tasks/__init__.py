"""Tasks: one folder per puzzle family, each binding its prompts, parsers and exact checker."""
