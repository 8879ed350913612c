"""Exit codes: what a run's verdicts (and the ways a command can end) mean to a shell
or a CI job. The command line exits with them; :func:`gapverify.verify` returns the same
code in ``Run.exit_code``."""

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away
