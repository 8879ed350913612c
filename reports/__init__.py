"""Reports: LaTeX convergence tables and figures generated from stored results."""
