"""``python -m csl_ai``: the `csl` command line."""

from csl_ai.cli import main

if __name__ == "__main__":
    main()
