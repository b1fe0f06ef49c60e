# Shared by bench/compare-*.sh (sourced): medians and spreads of repeats, and one step run by
# two tools on copies of one database.

# The median of the numbers on stdin ("-" lines skipped); "-" when there are none.
median() {
  { grep -v '^-$' || true; } | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf "%.10g\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The spread of the numbers on stdin, (max - min) / median in percent ("-" lines skipped): a
# ratio inside both tools' spreads is noise.
spread() {
  { grep -v '^-$' || true; } | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%d%%\n", (m > 0) ? 100 * (v[NR] - v[1]) / m : 0 }'
}

# An empty database for the first step of a repeat: $WORK/chain.
new_chain() { rm -rf "$WORK/chain" "$WORK/copy" && mkdir -p "$WORK/chain"; }

# Step $2 of repeat $1 by two tools, functions called as FN REP STEP DB. Both start on the
# database the previous step left: one tool runs in $WORK/chain, which goes on to the next
# step, the other in a copy of it taken (and written back) before. In odd repeats $3 carries
# the chain and goes first, in even ones $4, so the host's drift over minutes falls on both
# alike. What the first wrote is synced before the second starts, so the kernel's writeback
# of one tool's step does not run during the other's.
on_copies() {
  local rep=$1 s=$2 first=$3 second=$4
  ((rep % 2)) || { first=$4; second=$3; }
  rm -rf "$WORK/copy" && cp -a "$WORK/chain" "$WORK/copy" && sync
  "$first" "$rep" "$s" "$WORK/chain"
  sync
  "$second" "$rep" "$s" "$WORK/copy"
}

# fathom built (release, in the shared target directory outside the clone): its path in $fathom.
build_fathom() {
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
  # The whole workspace, as the tests build it: one feature set, no rebuild between the two.
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" --workspace --features fathom-engines/bundled-rocksdb,fathom-engines/mongodb-driver
  fathom=$CARGO_TARGET_DIR/release/fathom
}

# A MariaDB server of its own in $work, listening on loopback TCP port ${PORT:-3307} (what the
# Java clients' Connector/J 5.1 speaks), with user $1 (password $1) and database $2: its pid in
# $server (stopped on exit), fathom's URL for it in $url.
tcp_mariadb() {
  local user=$1 db=$2
  mkdir -p "$work/data" "$work/tmp"
  cat >"$work/my.cnf" <<EOF
[mysqld]
datadir=$work/data
socket=$work/mysqld.sock
pid-file=$work/mariadbd.pid
log-error=$work/error.log
tmpdir=$work/tmp
port=${PORT:-3307}
bind-address=127.0.0.1
max_connections=1000
innodb_buffer_pool_size=1g
character-set-server=utf8mb4
user=root
EOF
  mariadb-install-db --defaults-file="$work/my.cnf" --auth-root-authentication-method=normal >"$work/install.log"
  mariadbd --defaults-file="$work/my.cnf" >"$work/mariadbd.out" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
  for _ in $(seq 60); do [ -S "$work/mysqld.sock" ] && break; sleep 1; done
  mariadb -S "$work/mysqld.sock" -uroot -e "DELETE FROM mysql.global_priv WHERE User = '';
    CREATE USER $user@'%' IDENTIFIED BY '$user'; GRANT ALL ON *.* TO $user@'%';
    CREATE USER $user@localhost IDENTIFIED BY '$user'; GRANT ALL ON *.* TO $user@localhost;
    FLUSH PRIVILEGES; CREATE DATABASE $db"
  url="mysql://$user:$user@127.0.0.1:${PORT:-3307}/$db"
}

# A PostgreSQL server of its own in $work (Debian's PostgreSQL 15, run as the postgres user),
# listening on loopback TCP port ${PG_PORT:-5433} (what the Java clients' pgjdbc speaks) and on a
# unix socket in $pg_sock, trusting local connections, shared_buffers 1 GB as `fathom serve
# --set cache_size=1g`, with database $1: the postmaster's pid in $server (stopped on exit),
# fathom's URL for it in $url.
tcp_postgres() {
  local db=$1
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  chmod 755 "$work"
  pg_sock=$work/pgsock
  mkdir -p "$work/pgdata" "$pg_sock" && chown postgres: "$work/pgdata" "$pg_sock"
  runuser -u postgres -- "$pg_bin/initdb" -D "$work/pgdata" --auth=trust -U postgres >"$work/initdb.log"
  cat >>"$work/pgdata/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${PG_PORT:-5433}
unix_socket_directories = '$pg_sock'
max_connections = 300
shared_buffers = 1GB
EOF
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$work/pgdata" -l "$work/pgdata/postgres.log" -w start >/dev/null
  server=$(head -1 "$work/pgdata/postmaster.pid")
  trap 'runuser -u postgres -- "$pg_bin/pg_ctl" -D "$work/pgdata" -m fast -w stop >/dev/null 2>&1 || true' EXIT
  psql -h "$pg_sock" -p "${PG_PORT:-5433}" -U postgres -qc "CREATE DATABASE $db"
  url="host=127.0.0.1 port=${PG_PORT:-5433} user=postgres dbname=$db"
}

# The server's CPU so far, in clock ticks, with its child processes' (PostgreSQL's backends
# and workers: those still running, and those ended, which the parent has reaped); one tick
# in µs.
server_ticks() {
  local p
  for p in $server $(ps -o pid= --ppid "$server"); do
    awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null || true
  done | awk '{ s += $1 } END { print s }'
}
tick_us=$((1000000 / $(getconf CLK_TCK)))

# Engine $1 served by `fathom serve` (data in $work/data, stopped on exit): its URL in $url,
# its pids in $pid.
serve_engine() {
  "$fathom" serve --engine "$1" --set cache_size=1g --data-dir "$work/data" \
    --url-file "$work/url" >"$work/serve.log" 2>&1 &
  serve=$!
  trap 'kill -INT $serve 2>/dev/null; wait $serve 2>/dev/null || true' EXIT
  for _ in $(seq 600); do
    [[ -s $work/url ]] && break
    kill -0 $serve 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.2
  done
  url=$(sed -n 1p "$work/url")
  pid=$(sed -n 2p "$work/url")
}

# A YCSB workload's run step by fathom, from its results directory $1: "ops throughput READ
# UPDATE SCAN RMW INSERT".
fathom_counts() {
  python3 - "$1" <<'EOF'
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/steps/*run.json")[0]))
k = lambda n: s["by_op"].get(n, {}).get("ops", 0)
print(s["ops"], s["ops_per_sec"], k("READ"), k("UPDATE"), k("SCAN"), k("READ-MODIFY-WRITE"), k("INSERT"))
EOF
}

# The same from YCSB's output $1. YCSB records a read-modify-write's read and update under READ
# and UPDATE too: they are taken out of those, so each kind counts operations as fathom's do.
ycsb_counts() {
  awk -F', ' '/^\[OVERALL\], Throughput/ { t = $3 }
    /^\[READ\], Operations/ { r = $3 } /^\[UPDATE\], Operations/ { u = $3 }
    /^\[SCAN\], Operations/ { s = $3 } /^\[READ-MODIFY-WRITE\], Operations/ { m = $3 }
    /^\[INSERT\], Operations/ { i = $3 }
    END { printf "%d %s %d %d %d %d %d\n", r + u + s + i - m, t, r - m, u - m, s, m, i }' "$1"
}

# The YCSB workloads $1 run by fathom and by YCSB, alternating REPEATS times (fathom first in
# odd repeats), as bench/compare-ycsb*.sh do: `one_run TOOL REP W` (the script's) runs one and
# prints "ops ops/s READ UPDATE SCAN RMW INSERT COST_US", COST_US the engine's or server's CPU
# over the run; each tool's whole-process CPU comes from $work/TOOL-W-REP.cpu (GNU time). Prints
# a header with $2 as the cost column's name, then per workload each tool's medians. With $3,
# a last column of that name: the process's CPU less the cost, per operation (for an engine in
# the tool's own process, the CPU outside it).
alternate_ycsb() {
  printf '%-3s %-7s %9s %8s %8s %8s %8s %8s %10s %10s' wl tool ops/s READ UPDATE SCAN RMW INSERT "$2" cli_us/op
  [[ -z ${3:-} ]] && echo || printf ' %10s\n' "$3"
  local w rep tool order ops tput r u s m i cost c
  for w in $1; do
    : >"$work/fig-$w"
    for rep in $(seq "$REPEATS"); do
      order="fathom ycsb"
      ((rep % 2)) || order="ycsb fathom"
      for tool in $order; do
        read -r ops tput r u s m i cost < <(one_run "$tool" "$rep" "$w")
        c=$(awk '{ print ($1 + $2) * 1e6 }' "$work/$tool-$w-$rep.cpu" | tail -1)
        awk -v t="$tool" -v o="$ops" -v p="$tput" -v r="$r" -v u="$u" -v s="$s" -v m="$m" -v i="$i" \
          -v cost="$cost" -v c="$c" \
          'BEGIN { printf "%s %s %s %s %s %s %s %.2f %.2f\n", t, p, r, u, s, m, i, cost / o, c / o }' \
          >>"$work/fig-$w"
      done
    done
    for tool in fathom ycsb; do
      row() { awk -v t="$tool" -v c="$1" '$1 == t { print $c }' "$work/fig-$w" | median; }
      printf '%-3s %-7s %9.0f %8.0f %8.0f %8.0f %8.0f %8.0f %10.2f %10.2f' "$w" "$tool" "$(row 2)" \
        "$(row 3)" "$(row 4)" "$(row 5)" "$(row 6)" "$(row 7)" "$(row 8)" "$(row 9)"
      [[ -z ${3:-} ]] && echo ||
        printf ' %10.2f\n' "$(awk -v t="$tool" '$1 == t { print $9 - $8 }' "$work/fig-$w" | median)"
    done
  done
}
