#!/usr/bin/env python3
"""How v8inline --ticks names native frames compared with node --prof-process.

Run from the repository root after `cargo build --release`. For the bundled
--prof logs of node 18-26, counts the ticks whose whole stack (inlined frames
dropped, names normalized: no parameters, return types, symbol versions or
[clone] suffixes) is the same in both tools; those where the only differences
are frames the tick processor left unknown ([unknown] or just the library
name) and v8inline named; and the rest.
"""
import collections
import glob
import gzip
import re
import subprocess

TAGS = ("JS:", "LazyCompile:", "Function:", "Eval:", "Script:")


def javascript(name):
    return name.lstrip("~^+*o'")


def without_parameters_and_return_type(name):
    depth = 0
    for index, character in enumerate(name):
        if character == "<":
            depth += 1
        elif character == ">":
            depth -= 1
        elif character == "(" and depth == 0 and index > 0:
            name = name[:index]
            break
    depth, last_space = 0, None
    for index, character in enumerate(name):
        if character in "<(":
            depth += 1
        elif character in ">)":
            depth -= 1
        elif character == " " and depth == 0:
            last_space = index
    return name if last_space is None else name[last_space + 1:]


def tick_processor_frame(frame):
    if frame == "?":
        return "[unknown]"
    kind, _, rest = frame.partition(":")
    code_kind, _, name = rest.partition(":")
    if kind == "JS":
        return javascript(name)
    if kind == "SHARED_LIB":
        return "[" + name.rsplit("/", 1)[-1] + "]"
    if kind == "CODE":
        return "Builtins_" + name if code_kind == "Builtin" else name
    name = re.sub(r"@@?[A-Z_.0-9]+$", "", name)
    name = re.sub(r" \[clone [^\]]*\]", "", name)
    return without_parameters_and_return_type(name)


def v8inline_frame(frame):
    for tag in TAGS:
        if frame.startswith(tag):
            return javascript(frame[len(tag):])
    return re.sub(r"@@?[A-Z_.0-9]+$", "", frame)


def compatible(ours, theirs):
    return ours == theirs or theirs == "[unknown]" or (theirs.startswith("[") and theirs.endswith("]"))


total = identical = named_more = 0
for version in [18, 20, 22, 24, 26]:
    log = glob.glob(f"testdata/node{version}/prof/prof-*.log.gz")[0]
    folded = subprocess.run(
        ["target/release/v8inline", "--ticks", log, "--annotate-inline"], capture_output=True, text=True, check=True
    ).stdout
    ours, theirs = collections.Counter(), collections.Counter()
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = [v8inline_frame(frame) for frame in stack.split(";")[1:] if not frame.endswith("_[i]")]
        ours[tuple(frames)] += int(count)
    with gzip.open(f"testdata/node{version}/prof/prof-process.folded.gz", "rt") as file:
        for line in file:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            theirs[tuple(tick_processor_frame(frame) for frame in stack.split(";"))] += int(count)
    common = ours & theirs
    identical += sum(common.values())
    unmatched = list((ours - common).elements())
    for stack in (theirs - common).elements():
        for index, candidate in enumerate(unmatched):
            if len(candidate) == len(stack) and all(map(compatible, candidate, stack)):
                named_more += 1
                del unmatched[index]
                break
    total += sum(theirs.values())
print(f"{total} ticks: {identical} identical stacks, {named_more} where v8inline names frames the tick processor "
      f"left unknown, {total - identical - named_more} different")
