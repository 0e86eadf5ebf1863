"""The command line and the analysis tools built on the search core: ``tot`` itself (``cli``),
benchmarks (``bench``, ``report``; the baselines they run are the core's
``solver.baselines``), the false-prune audit (``audit``, ``truth``,
``counterfactual``), trace viewers (``tree``, ``show``), trace certificates (``verify_trace``)."""
