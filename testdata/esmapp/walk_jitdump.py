#!/usr/bin/env python3
"""Walks a V8 jitdump (jit-PID.dump, plain or .gz) record by record, without
trusting the declared size of DEBUG_INFO records, and counts the mis-sized ones.

    python3 walk_jitdump.py [-v] [--zero-code-bytes] jit-PID.dump[.gz]

-v lists the mis-sized records. --zero-code-bytes then zeroes, in place (a
plain file only), the machine code bytes of every CODE_LOAD, as
testdata/lib.sh's zero_code_bytes does (v8inline never reads them; records,
names, sizes and timestamps stay as they are, and zeros compress to next to
nothing), but with the walk below: zero_code_bytes trusts every declared size
and loses its way at the first mis-sized DEBUG_INFO.

Independent of v8inline: a check that testdata/esmapp's recordings contain the
DEBUG_INFO records that node 26 (V8 14.6) and Deno 2.x write with a wrong
total_size when TurboFan code inlines functions of another script. V8 sizes
each entry with its own script name but writes it with the previous entry's
name, so the declared size is off by the difference in length of the first
and last entries' names, and the 0-7 padding bytes follow the wrong size.

Layout (little- or big-endian, after the magic):
  header: u32 magic, u32 version, u32 total_size (header size, 40), u32
          elf_mach, u32 pad, u32 pid, u64 timestamp, u64 flags;
  record: u32 id, u32 total_size, u64 timestamp, then the body;
  DEBUG_INFO (id 2) body: u64 code_addr, u64 nr_entry, then nr_entry entries
          {u64 addr, u32 line, u32 column, NUL-terminated name}, then 0-7
          zero bytes of padding.

Where the declared size of a DEBUG_INFO does not land on a plausible record
header (id 0..4, total_size >= 16 and within the file, timestamp at or after
the DEBUG_INFO's and within 1 s of it) nor exactly at the end of the file,
the script walks the entries and takes the first padding p = 0..7 of zero
bytes after which a plausible header (or the end of the file) starts. Every
other record is walked by its declared size. Exits 1 unless the walk ends
exactly at the end of the file.
"""
import argparse
import collections
import gzip
import struct
import sys

NAMES = {0: 'CODE_LOAD', 1: 'CODE_MOVE', 2: 'DEBUG_INFO', 3: 'CLOSE', 4: 'UNWINDING_INFO'}
SECOND = 1_000_000_000  # timestamps are nanoseconds (CLOCK_MONOTONIC)


def main():
    arguments = argparse.ArgumentParser(description='Walks a V8 jitdump.')
    arguments.add_argument('-v', '--verbose', action='store_true')
    arguments.add_argument('--zero-code-bytes', action='store_true')
    arguments.add_argument('path')
    arguments = arguments.parse_args()
    path, verbose = arguments.path, arguments.verbose
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as file:
        data = file.read()
    if data[:4] == b'DTiJ':
        order = '<'
    elif data[:4] == b'JiTD':
        order = '>'
    else:
        sys.exit(f'{path}: not a jitdump (magic {data[:4]!r})')
    version, header_size = struct.unpack_from(order + 'II', data, 4)
    pid = struct.unpack_from(order + 'I', data, 20)[0]

    def plausible(offset, timestamp):
        """A record header that may follow a record of this timestamp."""
        if offset == len(data):
            return True
        if offset + 16 > len(data):
            return False
        record_id, size, stamp = struct.unpack_from(order + 'IIQ', data, offset)
        return (record_id in NAMES and size >= 16 and offset + size <= len(data)
                and timestamp <= stamp <= timestamp + SECOND)

    def entries_end(offset):
        """Offset just past the last entry of the DEBUG_INFO at offset, and the
        entries' names."""
        count = struct.unpack_from(order + 'Q', data, offset + 24)[0]
        position = offset + 32
        names = []
        for _ in range(count):
            end = data.index(b'\0', position + 16)
            names.append(data[position + 16:end].decode('utf-8', 'replace'))
            position = end + 1
        return position, names

    code_bytes = []  # (start, end) of each CODE_LOAD's code
    by_id = collections.Counter()
    differences = collections.Counter()
    debug_info = mis_sized = cross_script = 0
    offset = header_size
    problem = None
    while offset < len(data):
        if offset + 16 > len(data):
            problem = f'{len(data) - offset} bytes left at {offset}, less than a record header'
            break
        record_id, size, timestamp = struct.unpack_from(order + 'IIQ', data, offset)
        if record_id not in NAMES or size < 16 or offset + size > len(data):
            problem = f'implausible record at {offset}: id {record_id}, total_size {size}'
            break
        by_id[NAMES[record_id]] += 1
        if record_id == 0:
            # pid, tid, vma, code_addr, code_size, code_index, name, code
            code_size = struct.unpack_from(order + 'Q', data, offset + 40)[0]
            start = data.index(b'\0', offset + 56) + 1
            code_bytes.append((start, min(offset + size, start + code_size)))
        elif record_id == 2:
            debug_info += 1
            end, names = entries_end(offset)
            if len(set(names)) > 1:
                cross_script += 1
            if not plausible(offset + size, timestamp):
                for padding in range(8):
                    if (data[end:end + padding] == bytes(padding)
                            and plausible(end + padding, timestamp)):
                        actual = end + padding - offset
                        break
                else:
                    problem = f'DEBUG_INFO at {offset}: no plausible record after its entries'
                    break
                mis_sized += 1
                differences[size - actual] += 1
                if verbose:
                    print(f'  mis-sized DEBUG_INFO at {offset}: declared {size}, actual {actual} '
                          f'({len(names)} entries, first {names[0]!r}, last {names[-1]!r})')
                size = actual
        offset += size

    print(f'{path}: jitdump version {version}, pid {pid}, {len(data)} bytes')
    print('records by id: ' + ', '.join(
        f'{record_id} {NAMES[record_id]} {by_id[NAMES[record_id]]}' for record_id in NAMES))
    print(f'DEBUG_INFO: {debug_info} ({cross_script} with entries of more than one script)')
    print(f'mis-sized DEBUG_INFO: {mis_sized}; declared - actual: '
          + (', '.join(f'{difference:+d} x{count}'
                       for difference, count in sorted(differences.items())) or 'none'))
    print(f'CODE_LOAD read: {by_id["CODE_LOAD"]}')
    if problem is None and offset == len(data):
        print(f'walk reached the end of the file exactly ({offset} bytes)')
        if arguments.zero_code_bytes:
            if path.endswith('.gz'):
                sys.exit('--zero-code-bytes: give the plain jitdump, not a .gz')
            zeroed = bytearray(data)
            for start, end in code_bytes:
                zeroed[start:end] = bytes(end - start)
            with open(path, 'wb') as file:
                file.write(zeroed)
            print(f'zeroed the code bytes of {len(code_bytes)} CODE_LOAD records '
                  f'({sum(end - start for start, end in code_bytes)} bytes)')
        return 0
    print(f'walk did NOT reach the end of the file: stopped at {offset} of {len(data)}'
          + (f' ({problem})' if problem else ''))
    return 1


if __name__ == '__main__':
    sys.exit(main())
