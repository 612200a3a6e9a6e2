#!/usr/bin/env python3
"""measured.py OUT CMD...: runs CMD (stdin, stdout and stderr inherited) and writes one line to OUT:
"<max RSS KiB> <user s> <sys s> <start ns> <end ns>". CPU comes from the child's rusage at
microsecond resolution (GNU time prints hundredths of a second, too coarse for the streaming
benchmark's short runs); the wall clock is read just before the fork and just after the child is
reaped, so Python's own start is not counted.
Exits with the command's status."""
import os
import sys
import time


def main() -> int:
    out, cmd = sys.argv[1], sys.argv[2:]
    start = time.time_ns()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    end = time.time_ns()
    with open(out, "w") as f:
        f.write(f"{usage.ru_maxrss} {usage.ru_utime:.6f} {usage.ru_stime:.6f} {start} {end}\n")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
