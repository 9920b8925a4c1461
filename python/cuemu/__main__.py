"""``python -m cuemu ...`` and the ``cuemu`` script: the cuemu command of this package, with the same arguments."""
import os
import sys

from . import command


def main():
    path = command()
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"cuemu: the command is missing from this installation ({path})\n")
        return 2
    os.execv(path, [path] + sys.argv[1:])
    return 2


if __name__ == "__main__":
    sys.exit(main())
