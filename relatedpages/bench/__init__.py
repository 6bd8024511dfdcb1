"""What the runs cost: the benchmarks' measuring and the figures made from them (a process's
CPU time and peak memory, Hadoop's job histories, the chain's work and its reducers' skew
predicted from the keys, the scale runs' summaries and their projection to larger crawls),
each reading pages from ``corpus`` and the chain's arithmetic from ``scoring`` and ``store``."""
