"""Analysis of recorded expert routing: the load table and the skew report."""
