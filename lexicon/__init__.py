"""English lexicon for crosswords (wordfreq frequencies, several word sources, pattern queries)."""
