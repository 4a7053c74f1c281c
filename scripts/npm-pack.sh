#!/usr/bin/env bash
# Builds the npm packages of v8inline into target/npm/:
#
#   target/npm/v8inline-VERSION.tgz                  the launcher (npm/v8inline/)
#   target/npm/v8inline-linux-x64-gnu-VERSION.tgz    @v8inline/linux-x64-gnu, the binary
#
# VERSION is Cargo.toml's. The binary is built for glibc 2.28 (Debian 10,
# Ubuntu 20.04, RHEL 8) with cargo-zigbuild, which links against that glibc's
# symbol versions with zig. Where cargo-zigbuild is not installed it is
# installed from PyPI (with zig, the `ziglang` package) into a virtual
# environment in target/zigbuild; where that fails too, the binary is built
# natively and this says so: it then needs this machine's glibc or newer.
# target/npm/glibc-floor records which ("2.28", or "native 2.36");
# V8INLINE_NPM_ZIGBUILD=0 asks for the native build.
#
#   scripts/npm-pack.sh [PLATFORM...]     (default: linux-x64-gnu)
#
# PLATFORM is a directory of npm/ (the platform package's template) and a row
# of rust_target below; a platform other than this machine's needs its Rust
# standard library (`rustup target add TARGET`). The launcher package's
# optionalDependencies name exactly the platforms packed.
set -euo pipefail
cd "$(dirname "$0")/.."

platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64-gnu)

# The Rust target of each platform package.
rust_target() {
  case "$1" in
    linux-x64-gnu) echo x86_64-unknown-linux-gnu ;;
    linux-arm64-gnu) echo aarch64-unknown-linux-gnu ;;
    linux-x64-musl) echo x86_64-unknown-linux-musl ;;
    linux-arm64-musl) echo aarch64-unknown-linux-musl ;;
    *) echo "npm-pack.sh: unknown platform $1 (known: linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl)" >&2; return 1 ;;
  esac
}

# The oldest glibc the gnu binaries run on.
glibc_floor=2.28

for tool in cargo node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "npm-pack.sh: $tool is required" >&2; exit 1; }
done

version=$(cargo metadata --no-deps --format-version 1 --offline |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s).packages.find(p=>p.name==="v8inline");console.log(p.version)})')
echo "npm-pack.sh: v8inline $version for ${platforms[*]}" >&2

# cargo-zigbuild: the machine's, or one installed into target/zigbuild.
have_zigbuild() { [ "${V8INLINE_NPM_ZIGBUILD:-1}" != 0 ] && cargo-zigbuild --version >/dev/null 2>&1; }
if [ "${V8INLINE_NPM_ZIGBUILD:-1}" != 0 ] && ! have_zigbuild; then
  export PATH="$PWD/target/zigbuild/bin:$PATH"
  if ! have_zigbuild; then
    echo "npm-pack.sh: installing cargo-zigbuild (and zig) from PyPI into target/zigbuild" >&2
    { python3 -m venv target/zigbuild && target/zigbuild/bin/pip install --quiet cargo-zigbuild; } >&2 ||
      echo "npm-pack.sh: cargo-zigbuild could not be installed" >&2
  fi
fi

out=target/npm
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage"
rm -f "$out"/v8inline-*.tgz "$out/glibc-floor"

for platform in "${platforms[@]}"; do
  target=$(rust_target "$platform")
  template=npm/$platform
  [ -f "$template/package.json" ] || { echo "npm-pack.sh: no template $template/package.json" >&2; exit 1; }
  binary=target/$target/release/v8inline
  if [[ "$target" == *-gnu ]] && have_zigbuild; then
    cargo zigbuild --release --locked --bin v8inline --target "$target.$glibc_floor" >&2
    echo "$glibc_floor" >"$out/glibc-floor"
  elif have_zigbuild; then
    # musl: zig's C compiler and linker for the C of zstd-sys, static.
    cargo zigbuild --release --locked --bin v8inline --target "$target" >&2
  elif [[ "$target" == *-gnu ]]; then
    native_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc //')
    echo "npm-pack.sh: WARNING: without cargo-zigbuild the binary is built natively:" \
      "it needs this machine's glibc (${native_glibc:-version unknown}) or newer, not $glibc_floor" >&2
    echo "native ${native_glibc:-unknown}" >"$out/glibc-floor"
    if [ "$target" = "$(rustc -vV | sed -n 's/^host: //p')" ]; then
      # The build of `cargo build --release` (and `cargo test --release`).
      cargo build --release --locked --bin v8inline >&2
      binary=target/release/v8inline
    else
      cargo build --release --locked --bin v8inline --target "$target" >&2
    fi
  else
    cargo build --release --locked --bin v8inline --target "$target" >&2
  fi
  mkdir -p "$stage/$platform/bin"
  cp "$template/package.json" "$template/README.md" "$stage/$platform/"
  install -m 755 "$binary" "$stage/$platform/bin/v8inline"
done

mkdir -p "$stage/v8inline/bin"
cp npm/v8inline/package.json npm/v8inline/README.md "$stage/v8inline/"
install -m 755 npm/v8inline/bin/v8inline.js "$stage/v8inline/bin/v8inline.js"

# The version of Cargo.toml in every package.json, and the launcher's
# optionalDependencies: the platform packages packed, at that version.
node - "$stage" "$version" "${platforms[@]}" <<'JS'
const fs = require("fs");
const path = require("path");
const [stage, version, ...platforms] = process.argv.slice(2);
const write = (file, edit) => {
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
  edit(manifest);
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
};
const names = platforms.map(
  (platform) => write(path.join(stage, platform, "package.json"), (m) => { m.version = version; }).name,
);
write(path.join(stage, "v8inline", "package.json"), (m) => {
  m.version = version;
  m.optionalDependencies = Object.fromEntries(names.map((name) => [name, version]));
});
JS

for package in "${platforms[@]}" v8inline; do
  tarball=$(cd "$stage/$package" && npm pack --silent --pack-destination "$PWD/../.." | tail -1)
  echo "$out/$tarball"
done
