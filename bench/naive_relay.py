"""The floor any stdio proxy pays: start the command given, pass every line from our stdin to its
stdin and every line from its stdout to our stdout, nothing else (no parsing, no policy).

    python bench/naive_relay.py node server-everything/dist/index.js stdio
"""

import subprocess
import sys
import threading


def pipe(src, dst) -> None:
    for line in iter(src.readline, b""):
        dst.write(line)
        dst.flush()
    dst.close()


def main() -> None:
    child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    up = threading.Thread(target=pipe, args=(sys.stdin.buffer, child.stdin), daemon=True)
    up.start()
    pipe(child.stdout, sys.stdout.buffer)
    child.wait()


if __name__ == "__main__":
    main()
