"""Creative Writing: four required sentences end four paragraphs, checked exactly."""

from tasks.writing.task import Writing, WritingState

__all__ = ["Writing", "WritingState"]
