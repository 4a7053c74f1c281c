"""Writes the grown bench.mjs of testdata/inlining-history (make.sh): the
same file, with scale's rarely taken branch (`// RARE BRANCH`) replaced by
one that builds a message of forty checks before it throws. The branch never
runs (no value is negative), but its bytecode counts: scale grows from 43
bytes to about 2 kB, past TurboFan's inlining budget (460 bytes).

    python3 grow.py bench.mjs > grown/bench.mjs
"""
import sys

source = open(sys.argv[1]).read()
rare = "    // RARE BRANCH\n    throw new RangeError(`negative value ${value}`);"
assert rare in source, "bench.mjs has no RARE BRANCH to grow"
checks = "\n".join(
    f"    detail.push(`check {number}: ${{value}} * ${{factor}} = ${{value * factor + {number}}}`);"
    for number in range(40)
)
grown = f"    const detail = [];\n{checks}\n    throw new RangeError(detail.join('; '));"
sys.stdout.write(source.replace(rare, grown))
