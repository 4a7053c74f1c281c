#!/usr/bin/env python3
"""Builds the seed corpus of the fuzz targets from the real recordings in
testdata/ (testdata/node*/*.gz and node*/prof/, testdata/native/perf.script.gz,
the perf.data of testdata/perf-data, perf-data-z and realapp, the builds of
testdata/sourcemaps, perf inject's jitted files in testdata/debuginfo and
fuzz/seeds/jitted_elf).

Usage: python3 fuzz/build-seed-corpus.py [CORPUS_DIR]   (default: fuzz/corpus)

Seeds are kept small (a few KB: libFuzzer mutates small inputs much faster):

- code_log:    runs of consecutive log lines, about 2 KB each; long
               script-source lines are cut to 1 KB.
- jitdump:     the real header followed by runs of consecutive records
               (about 2 KB), plus the header alone and byte-swapped; from
               testdata/esmapp (node 26, Deno) also each DEBUG_INFO record
               that V8 mis-sized with the records around it, alone and with
               a later DEBUG_INFO's size damaged.
- perf_script: a flags byte (0), then runs of at most 4 consecutive
               samples, at most 4 KB unless one sample is longer, each stack
               cut to 12 lines (the first 3, the last 3 and 6 from the middle,
               JIT frames first).
- perf_data:   a flags byte (0), then small perf.data files cut from the
               real ones (testdata/perf-data, perf-data-z with its killed
               recording, realapp): the header and attributes, then the
               first non-sample records (about 2 KB) and a run of 4
               consecutive sample records, data size set, no feature
               sections; the -z one with its first compressed record only
               (the whole records expand to 85 KB); plus a killed-style one
               (data size 0). And compressed records made here: the
               records of a seed of testdata/perf-data in zstd raw blocks
               (one frame over two PERF_RECORD_COMPRESSED records, and as
               PERF_RECORD_COMPRESSED2), and a decompression bomb (RLE
               blocks expanding 2 MiB from 70 bytes, which the reader
               refuses). And the first 8 KB of the pipe-mode perf.data
               (testdata/perf-data-pipe), which the reader refuses.
- ticks:       coherent pieces of the --prof logs (testdata/node*/prof): the
               shared-library lines (paths moved under /nonexistent, so no
               binary is read from disk), 4 consecutive ticks and the
               code-creation and code-source-info lines of the code objects
               their addresses fall in.
- source_map:  the maps of testdata/sourcemaps/build (tsc's per module,
               esbuild's linked bundle map, the minified bundle's inline one
               decoded) each with its script, and an index map of tsc's two
               as sections of its two scripts one after the other, laid out
               as the target reads them (u32 map length, map, script); the
               minified bundle also with no map before it (its data: URL is
               then followed), and each map with an empty script.
- elf_symbols: this machine's vDSO (a small ELF with dynamic function
               symbols, read from the running interpreter's memory) and
               /bin/true when it is under 64 KB.
- jitted_elf:  jitted-PID-N.so files of the esmapp node 26 recording
               (testdata/debuginfo's and those of fuzz/seeds/jitted_elf: as
               perf inject -j wrote them, with and without its .debug_line,
               and two as v8inline debuginfo rewrote them), laid out as the
               target reads them (u32 ELF length, ELF), each followed by no
               info bytes (an empty info) and by 128 and 512 bytes of a fixed
               pseudo-random stream (an info with files, calls and rows).
- pipeline:    coherent triples: 3 samples with JIT frames (stacks cut as
               for perf_script), the (at most 4)
               jitdump CODE_LOADs covering their addresses, the log lines of those
               code objects (code-creation, code-source-info, the creations of
               the functions they inline, their scripts' sources when under 4 KB),
               laid out as the pipeline target reads them, with every value
               of the flags byte in turn.
"""

import base64
import gzip
import hashlib
import json
import os
import re
import struct
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
TESTDATA = REPOSITORY / "testdata"
CHUNK_BYTES = 2 * 1024
LONG_LINE_BYTES = 1024
MAX_SEEDS_PER_FILE = 60


def write_seed(directory, data):
    """Writes one seed named by its hash (as libFuzzer names corpus files)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def evenly(items, count):
    """At most `count` items, spread over the whole list."""
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(index * step)] for index in range(count)]


def recordings():
    # testdata/node18 ... node26 (not no-log-code).
    return sorted(path for path in TESTDATA.glob("node[0-9]*") if path.is_dir())


def one(directory, pattern):
    matches = sorted(directory.glob(pattern))
    return matches[0] if matches else None


# --- code log -----------------------------------------------------------------


def log_chunks(log):
    chunks, current = [], b""
    for line in log.split(b"\n"):
        line = line[:LONG_LINE_BYTES] + b"\n"
        if current and len(current) + len(line) > CHUNK_BYTES:
            chunks.append(current)
            current = b""
        current += line
    if current:
        chunks.append(current)
    return chunks


# --- jitdump ------------------------------------------------------------------


def plausible_record(dump, offset, after_timestamp):
    """Whether a record that may follow a DEBUG_INFO starts at offset."""
    if offset + 16 > len(dump):
        return False
    record_id, total_size, timestamp = struct.unpack_from("<IIQ", dump, offset)
    return record_id <= 4 and total_size >= 16 and 0 <= timestamp - after_timestamp <= 10**9


def written_debug_info_size(dump, offset):
    """The bytes V8 really wrote for the DEBUG_INFO at offset when it
    mis-sized it (node 26, Deno: see src/formats/jitdump/v8_mis_sized.rs),
    else None."""
    _, total_size, timestamp = struct.unpack_from("<IIQ", dump, offset)
    if offset + total_size == len(dump) or plausible_record(dump, offset + total_size, timestamp):
        return None
    end = offset + 32
    for _ in range(struct.unpack_from("<Q", dump, offset + 24)[0]):
        name_end = dump.find(b"\0", end + 16)
        if name_end < 0:
            return None
        end = name_end + 1
    for padding in range(8):
        if any(dump[end : end + padding]):
            return None
        if plausible_record(dump, end + padding, timestamp):
            return end + padding - offset
    return None


def jitdump_records(dump):
    """(offset, id, bytes) of each record of a little-endian jitdump, V8's
    mis-sized DEBUG_INFO records by the bytes really written."""
    header_size = struct.unpack_from("<I", dump, 8)[0]
    records, offset = [], header_size
    while offset + 16 <= len(dump):
        record_id, total_size = struct.unpack_from("<II", dump, offset)
        if record_id == 2:
            total_size = written_debug_info_size(dump, offset) or total_size
        if total_size < 16 or offset + total_size > len(dump):
            break
        records.append((offset, record_id, dump[offset : offset + total_size]))
        offset += total_size
    return dump[:header_size], records


def mis_sized_seeds(dump):
    """Each mis-sized DEBUG_INFO of a jitdump with the records around it, then
    the same with a DEBUG_INFO after it damaged (its size off by 3): V8's
    defect beside real damage."""
    header, records = jitdump_records(dump)
    seeds = []
    for index, (offset, record_id, record) in enumerate(records):
        if record_id != 2 or struct.unpack_from("<I", record, 4)[0] == len(record):
            continue
        run = [r for _, _, r in records[max(0, index - 1) : index + 6] if len(r) <= CHUNK_BYTES]
        seeds.append(header + b"".join(run))
        damaged = [bytearray(r) for r in run]
        for later in damaged[2:]:
            if struct.unpack_from("<I", later, 0)[0] == 2:
                struct.pack_into("<I", later, 4, struct.unpack_from("<I", later, 4)[0] + 3)
                break
        seeds.append(header + b"".join(damaged))
    return evenly(seeds, MAX_SEEDS_PER_FILE)


def byte_swapped_header(header):
    fields = struct.unpack_from("<IIIIIIQQ", header, 0)
    return struct.pack(">IIIIIIQQ", *fields) + header[40:]


def jitdump_chunks(dump):
    header, records = jitdump_records(dump)
    chunks, current = [], b""
    for _, _, record in records:
        if len(record) > CHUNK_BYTES:
            continue
        if current and len(current) + len(record) > CHUNK_BYTES:
            chunks.append(header + current)
            current = b""
        current += record
    if current:
        chunks.append(header + current)
    return [header, byte_swapped_header(header)] + evenly(chunks, MAX_SEEDS_PER_FILE)


# --- perf script --------------------------------------------------------------


def samples_of(script):
    return [sample + b"\n\n" for sample in script.split(b"\n\n") if sample.strip()]


JIT_FRAME = re.compile(rb"perf-\d+\.map|jitted-\d+-\d+\.so|\[unknown\]|JS:|LazyCompile:|Function:")
STACK_LINES = 12
RUN_BYTES = 4 * 1024


def cut_stack(sample):
    """The sample with at most STACK_LINES stack lines: the first and last
    3 (leaf, kernel entry, `main` and the loader) and 6 from the middle,
    JIT frames first, in their order."""
    lines = sample.rstrip(b"\n").split(b"\n")
    header, stack = lines[0], lines[1:]
    if len(stack) <= STACK_LINES:
        return sample
    middle = list(range(3, len(stack) - 3))
    jit = [index for index in middle if JIT_FRAME.search(stack[index])]
    chosen = (jit + [index for index in middle if index not in jit])[: STACK_LINES - 6]
    kept = list(range(3)) + sorted(chosen) + list(range(len(stack) - 3, len(stack)))
    return b"\n".join([header] + [stack[index] for index in kept]) + b"\n\n"


def sample_runs(samples, per_run):
    """Runs of `per_run` consecutive samples, cut to RUN_BYTES (at least
    one sample each)."""
    runs = []
    for start in range(0, len(samples), per_run):
        run = samples[start : start + per_run]
        while len(run) > 1 and sum(map(len, run)) > RUN_BYTES:
            run = run[:-1]
        runs.append(b"".join(run))
    return runs


# --- perf.data ----------------------------------------------------------------

PERF_SAMPLE = 9


def perf_data_records(data):
    """(header, records) of a little-endian perf.data: the bytes before its
    data section and the (type, bytes) of each whole record in it (up to the
    file's end when the data size is 0, as a killed perf leaves it)."""
    data_offset, data_size = struct.unpack_from("<QQ", data, 40)
    end = data_offset + data_size if data_size else len(data)
    records, offset = [], data_offset
    while offset + 8 <= end:
        record_type, _misc, size = struct.unpack_from("<IHH", data, offset)
        if size < 8 or offset + size > end:
            break
        records.append((record_type, data[offset : offset + size]))
        offset += size
    return data[:data_offset], records


def small_perf_data(header, records, data_size_zero=False):
    """A perf.data of `header` and `records`: data size set (or 0), no
    feature sections."""
    body = b"".join(record for _, record in records)
    header = bytearray(header)
    struct.pack_into("<Q", header, 48, 0 if data_size_zero else len(body))
    header[72:104] = bytes(32)
    return bytes(header) + body


def perf_data_seeds(path):
    header, records = perf_data_records(gzip.decompress(path.read_bytes()))
    setup, size = [], 0
    for record in records:
        if record[0] != PERF_SAMPLE and size + len(record[1]) <= CHUNK_BYTES:
            setup.append(record)
            size += len(record[1])
    samples = [record for record in records if record[0] == PERF_SAMPLE]
    runs = [samples[start : start + 4] for start in range(0, len(samples), 4)]
    seeds = [small_perf_data(header, setup + run) for run in evenly(runs, MAX_SEEDS_PER_FILE // 2)]
    if not samples:
        # Compressed: the records up to the first compressed one (a zstd
        # frame goes on over them all; the whole ones expand to 85 KB).
        first = next(index for index, record in enumerate(records) if record[0] in COMPRESSED_TYPES)
        seeds.append(small_perf_data(header, records[: first + 1] + [FINISHED_ROUND_RECORD]))
    seeds.append(small_perf_data(header, setup + samples[:4], data_size_zero=True))
    return seeds


PERF_RECORD_FINISHED_ROUND = 68
PERF_RECORD_COMPRESSED = 81
PERF_RECORD_COMPRESSED2 = 83
COMPRESSED_TYPES = (PERF_RECORD_COMPRESSED, PERF_RECORD_COMPRESSED2)
FINISHED_ROUND_RECORD = (PERF_RECORD_FINISHED_ROUND, struct.pack("<IHH", PERF_RECORD_FINISHED_ROUND, 0, 8))
# A zstd frame header: magic, no content size, no checksum, a window of 128 KiB.
ZSTD_FRAME_START = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x38])


def zstd_block(block_type, size, content, last=False):
    """A zstd block: its 3-byte header (last flag, type: 0 raw, 1 RLE;
    size) and content."""
    return struct.pack("<I", size << 3 | block_type << 1 | int(last))[:3] + content


def compressed_record(data, version=1):
    """PERF_RECORD_COMPRESSED with zstd data `data`, or
    PERF_RECORD_COMPRESSED2 (the data's size first, padded to 8 bytes)."""
    if version == 1:
        return (PERF_RECORD_COMPRESSED, struct.pack("<IHH", PERF_RECORD_COMPRESSED, 0, 8 + len(data)) + data)
    body = struct.pack("<Q", len(data)) + data
    body += bytes(-len(body) % 8)
    return (PERF_RECORD_COMPRESSED2, struct.pack("<IHH", PERF_RECORD_COMPRESSED2, 0, 8 + len(body)) + body)


def compressed_seeds(path):
    """The setup records and 4 samples of `path` (uncompressed) in raw
    zstd blocks: one frame over two compressed records with a round between
    them, and the same as PERF_RECORD_COMPRESSED2; and a bomb: 16 RLE
    blocks of 128 KiB (2 MiB from 70 bytes, past what the reader accepts)."""
    header, records = perf_data_records(gzip.decompress(path.read_bytes()))
    setup_records, size = [], 0
    for record_type, record in records:
        if record_type != PERF_SAMPLE and size + len(record) <= CHUNK_BYTES:
            setup_records.append(record)
            size += len(record)
    samples = [record for record_type, record in records if record_type == PERF_SAMPLE][:4]
    first = ZSTD_FRAME_START + zstd_block(0, size, b"".join(setup_records))
    second = zstd_block(0, sum(map(len, samples)), b"".join(samples), last=True)
    seeds = []
    for version in (1, 2):
        seeds.append(
            small_perf_data(
                header,
                [compressed_record(first, version), FINISHED_ROUND_RECORD, compressed_record(second, version)],
            )
        )
    bomb = ZSTD_FRAME_START + b"".join(zstd_block(1, 128 * 1024, b"\x10") for _ in range(16))
    seeds.append(small_perf_data(header, [compressed_record(bomb), FINISHED_ROUND_RECORD]))
    return seeds


# --- tick logs ----------------------------------------------------------------


def tick_addresses(line):
    """The addresses of a tick line: pc, top of stack, return addresses."""
    fields = line.split(b",")
    addresses = []
    for index, field in enumerate(fields[1:], start=1):
        if index in (2, 3, 5) or field == b"overflow":
            continue  # time, external-callback flag, VM state
        try:
            addresses.append(int(field, 16))
        except ValueError:
            pass
    return addresses


def tick_seeds(path):
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    libraries = [
        line.replace(b"shared-library,/", b"shared-library,/nonexistent/", 1)
        for line in lines
        if line.startswith(b"shared-library,")
    ]
    ticks = [index for index, line in enumerate(lines) if line.startswith(b"tick,")]
    seeds = []
    for start in range(0, len(ticks), 4):
        window = ticks[start : start + 4]
        addresses = {address for index in window for address in tick_addresses(lines[index])}
        # The last code-creation before the window covering each address.
        covering = {}
        for index in range(window[0]):
            fields = lines[index].split(b",")
            if fields[0] != b"code-creation" or len(fields) < 7:
                continue
            try:
                code_start, code_size = int(fields[4], 16), int(fields[5])
            except ValueError:
                continue
            for address in addresses:
                if code_start <= address < code_start + code_size:
                    covering[address] = index
        chosen = sorted(set(covering.values()))[:8]
        starts = {lines[index].split(b",")[4] for index in chosen}
        source_infos = [
            index
            for index in range(window[0])
            if lines[index].startswith(b"code-source-info,") and lines[index].split(b",")[1] in starts
        ]
        picked = sorted(set(chosen + source_infos))
        text = b"\n".join(libraries + [lines[index] for index in picked] + [lines[index] for index in window])
        seeds.append(text + b"\n")
    return evenly(seeds, MAX_SEEDS_PER_FILE)


# --- source maps --------------------------------------------------------------

DATA_URL = re.compile(rb"//# sourceMappingURL=data:application/json;base64,([A-Za-z0-9+/=]+)\s*$")


def source_map_seeds():
    """(map, script) pairs of testdata/sourcemaps/build, laid out for the
    source_map target."""
    build = TESTDATA / "sourcemaps" / "build"
    pairs = []
    for script in sorted(build.rglob("*.js")):
        text = script.read_bytes()
        linked = script.with_name(script.name + ".map")
        if linked.exists():
            pairs.append((linked.read_bytes(), text))
        inline = DATA_URL.search(text)
        if inline:
            pairs.append((base64.b64decode(inline.group(1)), text))
            pairs.append((b"", text))
    # An index map: the tsc maps as sections of the two scripts one after
    # the other.
    server, parse = build / "tsc" / "server.js", build / "tsc" / "http" / "parse.js"
    server_text = server.read_bytes()
    sections = [
        {"offset": {"line": 0, "column": 0}, "map": json.loads(server.with_name("server.js.map").read_bytes())},
        {"offset": {"line": server_text.count(b"\n"), "column": 0},
         "map": json.loads(parse.with_name("parse.js.map").read_bytes())},
    ]
    index_map = json.dumps({"version": 3, "sections": sections}).encode()
    pairs.append((index_map, server_text + parse.read_bytes()))
    seeds = []
    for source_map, text in pairs:
        seeds.append(struct.pack("<I", len(source_map)) + source_map + text)
        if source_map:
            seeds.append(struct.pack("<I", len(source_map)) + source_map)
    return seeds


# --- pipeline -----------------------------------------------------------------

RAW_FRAME = re.compile(rb"^\s*([0-9a-f]+) .*\((/tmp/perf-\d+\.map|\[unknown\])\)$")
INJECTED_FRAME = re.compile(rb"^\s*[0-9a-f]+ .*\(.*jitted-\d+-(\d+)\.so\)$")


def jit_references(samples):
    """Raw addresses and injected code indexes in the stack lines."""
    addresses, code_indexes = set(), set()
    for sample in samples:
        for line in sample.split(b"\n")[1:]:
            raw = RAW_FRAME.match(line)
            if raw:
                addresses.add(int(raw.group(1), 16))
            injected = INJECTED_FRAME.match(line)
            if injected:
                code_indexes.add(int(injected.group(1)))
    return addresses, code_indexes


def code_loads(records):
    """(record bytes, code address, code size, code index) of each CODE_LOAD."""
    loads = []
    for _, record_id, record in records:
        if record_id == 0 and len(record) >= 56:
            _pid, _tid, _vma, code_address, code_size, code_index = struct.unpack_from("<IIQQQQ", record, 16)
            loads.append((record, code_address, code_size, code_index))
    return loads


def log_subset(log_lines, keys):
    """The log lines describing the code objects at (address, size) `keys`."""
    chosen, wanted_sfis, wanted_scripts = [], set(), set()
    pending_address = None
    for line in log_lines:
        fields = line.split(b",")
        if fields[0] == b"code-creation" and len(fields) >= 7:
            try:
                key = (int(fields[4], 16), int(fields[5]))
            except ValueError:
                continue
            if key in keys:
                chosen.append(line)
                pending_address = key[0]
        elif fields[0] == b"code-source-info" and len(fields) == 8 and pending_address is not None:
            if int(fields[1], 16) == pending_address:
                chosen.append(line)
                wanted_sfis.update(int(sfi, 16) for sfi in re.findall(rb"S(0x[0-9a-f]+)", fields[7]))
                wanted_scripts.add(fields[2])
                pending_address = None
    extra = []
    for line in log_lines:
        fields = line.split(b",")
        if fields[0] == b"code-creation" and len(fields) == 9 and line not in chosen:
            try:
                if int(fields[7], 16) in wanted_sfis:
                    extra.append(line)
                    wanted_sfis.discard(int(fields[7], 16))
            except ValueError:
                pass
        elif fields[0] == b"script-source" and len(fields) >= 4 and fields[1] in wanted_scripts:
            if len(line) <= 4 * 1024:
                extra.append(line)
    # Functions and scripts first, as V8 logs them before the code.
    return b"\n".join(extra + chosen) + b"\n"


def pipeline_seeds(directory):
    log = gzip.decompress(one(directory, "codspeed-v8-*.log.gz").read_bytes())
    dump = gzip.decompress(one(directory, "jit-*.dump.gz").read_bytes())
    header, records = jitdump_records(dump)
    loads = code_loads(records)
    log_lines = log.split(b"\n")
    seeds = []
    for script_name in ["perf.script.gz", "perf-inject.script.gz"]:
        samples = [cut_stack(sample) for sample in samples_of(gzip.decompress((directory / script_name).read_bytes()))]
        with_jit = [sample for sample in samples if any(jit_references([sample]))]
        for start in range(0, min(len(with_jit), 90), 3):
            run = with_jit[start : start + 3]
            addresses, code_indexes = jit_references(run)
            chosen = [
                load
                for load in loads
                if load[3] in code_indexes
                or any(load[1] <= address < load[1] + load[2] for address in addresses)
            ][:4]
            jitdump = header + b"".join(load[0] for load in chosen)
            log_text = log_subset(log_lines, {(load[1], load[2]) for load in chosen})
            script = b"".join(run)
            # Every option combination over the seeds (see fuzz_targets/pipeline.rs).
            flags = bytes([len(seeds) % 128])
            seeds.append(struct.pack("<II", len(log_text), len(jitdump)) + flags + log_text + jitdump + script)
    return seeds


def elf_seeds():
    """Small ELF files of this machine for the elf_symbols target."""
    seeds = []
    try:
        with open("/proc/self/maps") as maps:
            line = next(line for line in maps if line.rstrip().endswith("[vdso]"))
        start, end = (int(part, 16) for part in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as memory:
            memory.seek(start)
            seeds.append(memory.read(end - start))
    except (OSError, StopIteration, ValueError):
        pass
    true = Path("/bin/true")
    if true.is_file() and true.stat().st_size < 65536:
        seeds.append(true.read_bytes())
    return seeds


def jitted_elf_seeds():
    """(u32 ELF length, ELF, info bytes) for each jitted file. The files are
    committed (fuzz/seeds/jitted_elf/README.md): making them takes perf
    inject and a built v8inline."""
    files = [TESTDATA / "debuginfo" / "jitted-17052-6378.so"]
    files += sorted((REPOSITORY / "fuzz" / "seeds" / "jitted_elf").glob("*.so"))
    stream = b"".join(hashlib.sha256(b"jitted_elf %d" % index).digest() for index in range(16))
    seeds = []
    for path in files:
        elf = path.read_bytes()
        for info in (b"", stream[:128], stream[:512]):
            seeds.append(struct.pack("<I", len(elf)) + elf + info)
    return seeds


def side_directory_seed(side, schedule_kept, lines=6):
    """A side directory of `v8inline bench` as the compare target takes it
    (fuzz_targets/compare.rs): 3, its runs.json (with its schedule, or none
    as before duets), 0xFE, then up to three runs split at 0xFD, each
    benchmarks.json (its first benchmark, at directory `b`), recording.json,
    an empty whole-run profile and the benchmark's first `lines` stacks,
    split at 0xFF."""
    runs_file = json.loads((side / "runs.json").read_text())
    runs_file["runs"] = runs_file["runs"][:3]
    if not schedule_kept:
        runs_file.pop("schedule", None)
    parts = []
    for run in runs_file["runs"]:
        directory = side / run["directory"]
        benchmarks = json.loads((directory / "benchmarks.json").read_text())
        first = benchmarks["benchmarks"][0]
        folded = gzip.decompress((directory / first["directory"] / "profile.folded.gz").read_bytes())
        first["directory"] = "b"
        benchmarks["benchmarks"] = [first]
        parts.append(b"\xff".join([
            json.dumps(benchmarks).encode(),
            (directory / "recording.json").read_bytes(),
            b"",
            b"\n".join(folded.split(b"\n")[:lines]) + b"\n",
        ]))
    return b"\x03" + json.dumps(runs_file).encode() + b"\xfe" + b"\xfd".join(parts)


def compare_seeds():
    """Base against head of two of bench46's kept comparisons: duets (runs
    paired by round) and interleaved runs (runs.json without a schedule)."""
    seeds = []
    for comparison, schedule_kept in [
        (TESTDATA / "bench46" / "duet" / "results" / "duet-slower25-01", True),
        (TESTDATA / "bench46" / "results" / "unchanged-01", False),
    ]:
        base = side_directory_seed(comparison / "base", schedule_kept)
        head = side_directory_seed(comparison / "head", schedule_kept)
        seeds.append(len(base).to_bytes(4, "little") + base + head)
    return seeds


def main():
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else REPOSITORY / "fuzz" / "corpus"
    counts = {}
    for directory in recordings():
        for chunk in evenly(log_chunks(gzip.decompress(one(directory, "codspeed-v8-*.log.gz").read_bytes())), MAX_SEEDS_PER_FILE):
            write_seed(corpus / "code_log", chunk)
        for chunk in jitdump_chunks(gzip.decompress(one(directory, "jit-*.dump.gz").read_bytes())):
            write_seed(corpus / "jitdump", chunk)
        for seed in pipeline_seeds(directory):
            write_seed(corpus / "pipeline", seed)
    # node 26 and Deno jitdumps with DEBUG_INFO records V8 mis-sized.
    for directory in sorted((TESTDATA / "esmapp").iterdir()):
        if directory.is_dir():
            dump = gzip.decompress(one(directory, "jit-*.dump.gz").read_bytes())
            for chunk in jitdump_chunks(dump) + mis_sized_seeds(dump):
                write_seed(corpus / "jitdump", chunk)
    scripts = [path for directory in recordings() for path in sorted(directory.glob("perf*.script.gz"))]
    scripts.append(TESTDATA / "native" / "perf.script.gz")
    for path in scripts:
        runs = sample_runs([cut_stack(sample) for sample in samples_of(gzip.decompress(path.read_bytes()))], 4)
        for run in evenly(runs, MAX_SEEDS_PER_FILE):
            write_seed(corpus / "perf_script", b"\x00" + run)
    perf_data_files = [
        TESTDATA / "perf-data" / "perf.data.gz",
        TESTDATA / "perf-data-z" / "perf.data.gz",
        TESTDATA / "perf-data-z" / "killed" / "perf.data.gz",
        TESTDATA / "realapp" / "perf.data.gz",
    ]
    for path in perf_data_files:
        for seed in perf_data_seeds(path):
            write_seed(corpus / "perf_data", b"\x00" + seed)
    for seed in compressed_seeds(perf_data_files[0]):
        write_seed(corpus / "perf_data", b"\x00" + seed)
    # A pipe-mode perf.data (perf record -o -), its first 8 KB: refused by its header.
    pipe = gzip.decompress((TESTDATA / "perf-data-pipe" / "perf.data.gz").read_bytes())
    write_seed(corpus / "perf_data", b"\x00" + pipe[:8191])
    for directory in recordings():
        for path in sorted((directory / "prof").glob("prof-*.log.gz")):
            for seed in tick_seeds(path):
                write_seed(corpus / "ticks", seed)
    for seed in source_map_seeds():
        write_seed(corpus / "source_map", seed)
    for seed in elf_seeds():
        write_seed(corpus / "elf_symbols", seed)
    for seed in jitted_elf_seeds():
        write_seed(corpus / "jitted_elf", seed)
    for seed in compare_seeds():
        write_seed(corpus / "compare", seed)
    targets = ["code_log", "jitdump", "perf_script", "pipeline", "perf_data", "ticks", "source_map", "elf_symbols", "compare"]
    for target in targets + ["jitted_elf"]:
        counts[target] = len(os.listdir(corpus / target))
    print(" ".join(f"{target}: {count} seeds" for target, count in counts.items()))


if __name__ == "__main__":
    main()
