"""Start-up time of the installed ``gapverify`` command line: the best and the median of
5 runs of each command in a fresh process (docs/performance.md, "Start-up time")."""
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = (["--version"], ["--help"], ["claims"], ["predict", "softmax.kappa"])


def main(runs: int = 5) -> None:
    exe = shutil.which("gapverify") or sys.exit("gapverify is not installed (pip install -e .)")
    for args in COMMANDS:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([exe, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            times.append(time.perf_counter() - start)
        print(f"gapverify {' '.join(args)}: best {min(times):.2f} s, "
              f"median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
