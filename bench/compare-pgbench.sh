#!/usr/bin/env bash
# Side by side, in one sitting: fathom running workloads/pgbench/SCRIPT.toml and the real pgbench
# (Debian's PostgreSQL 15 ships it) running its built-in script of that name, on one PostgreSQL
# started by `fathom serve` and one set of pgbench tables loaded once by fathom. First each tool
# runs the script for a few seconds with the server logging every statement, and the statements
# per transaction are compared by shape (numbers taken out); then at each client count the two
# tools alternate REPEATS times and each figure is the median of its repeats.
#   bench/compare-pgbench.sh                                   # tpcb-like, 1,2,4,8 clients, 15 s
#   bench/compare-pgbench.sh select-only 1,2,4 20
#   SCALE=10 REPEATS=3 bench/compare-pgbench.sh simple-update
# Prints per client count: transactions per second of each tool and fathom/pgbench, then each
# tool's CPU µs per transaction, user and system apart, of its whole process (GNU time: fathom's
# sampler and progress included; pgbench's thread per client), and the ratio of the totals;
# then the server's CPU per transaction under each tool (the postmaster and its backends, live
# and reaped, from /proc) and the transactions the server committed (pg_stat_database) against
# those the tool counted.
set -euo pipefail
script=${1:-tpcb-like}
clients=${2:-1,2,4,8}
secs=${3:-15}
SCALE=${SCALE:-1}
REPEATS=${REPEATS:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers
build_fathom
work=$(mktemp -d /tmp/fathom-vs-pgbench.XXXXXX)
chmod 755 "$work"
echo "compare-pgbench: $script, scale $SCALE, ${secs}s x $REPEATS repeats; files in $work" >&2

serve_engine postgres
server=$pid
host=$(sed -E 's/.*host=([^ &]+).*/\1/' <<<"$url")
db=$(sed -E 's|^postgres(ql)?://[^/]*/([^?]*).*|\2|' <<<"$url")
db=${db:-postgres}
sql() { psql -h "$host" -U postgres -d "$db" -qAtc "$1"; }
pg=(-h "$host" -U postgres -n -b "$script" "$db")

common=(--engine postgres --workload "pgbench/$script" --set "url=$url" --set "pid=$pid"
  --param "scale=$SCALE" --no-calibrate)
"$fathom" run "${common[@]}" --param steps=load --clients 2 --results "$work/load" \
  >/dev/null 2>"$work/load.log"

# The statements each tool sends, by shape: the server logs every statement for a short run of
# each, one client; numbers become N.
log=$(find "$work/data" -name postgres.log | head -1)
shapes() {
  sql "ALTER SYSTEM SET log_statement = 'all'" && sql "SELECT pg_reload_conf()" >/dev/null
  local from; from=$(wc -l <"$log")
  "$@" >/dev/null 2>&1
  sql "ALTER SYSTEM RESET log_statement" && sql "SELECT pg_reload_conf()" >/dev/null
  tail -n +"$((from + 1))" "$log" | grep -o 'statement: .*' | sed -E 's/statement: //; s/-?[0-9]+/N/g' |
    grep -v -e 'pg_reload_conf' -e 'log_statement' | sort | uniq -c | sort -rn
}
shapes "$fathom" run "${common[@]}" --param steps=run --duration 3s --clients 1 \
  --results "$work/shapes-f" >"$work/shapes-f.txt"
shapes pgbench "${pg[@]}" -c 1 -T 3 >"$work/shapes-p.txt"
echo "statements sent in 3 s, by shape (count, statement): fathom, then pgbench"
cat "$work/shapes-f.txt"; echo; cat "$work/shapes-p.txt"; echo
# pgbench's two queries at its start (the partitioning check, the scale) are not the script's.
script_shapes() { awk '$1 > 2 { $1 = ""; print }' "$1" | sort; }
diff <(script_shapes "$work/shapes-f.txt") <(script_shapes "$work/shapes-p.txt") >/dev/null &&
  echo "the same statements (shapes)" ||
  echo "the statements DIFFER (above)"

# The server's CPU µs per transaction over a run (ticks before, after, transactions), and the
# commits it counted over the tool's transactions.
server_per_xact() {
  awk -v a="$1" -v b="$2" -v n="$3" -v u="$tick_us" -v c0="$4" -v c1="$5" \
    'BEGIN { printf "%.1f %.4f\n", (b - a) * u / n, (c1 - c0) / n }'
}
commits() {
  sleep 1.2 # backends publish their statistics within a second of ending
  sql "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
}

per_xact() {
  local user sys
  read -r user sys < <(tail -1 "$1")
  awk -v u="$user" -v s="$sys" -v n="$2" 'BEGIN { printf "%.2f %.2f\n", u * 1e6 / n, s * 1e6 / n }'
}
timed() { /usr/bin/time -f '%U %S' -o "$1" "${@:2}"; }
median_of() { awk -v c="$2" '{ print $c }' "$1" | median; }

printf '%8s %10s %10s %6s %9s %9s %9s %9s %6s\n' clients fathom_tps pgb_tps ratio fa_usr/t pg_usr/t fa_sys/t pg_sys/t ratio
for c in ${clients//,/ }; do
  : >"$work/f.tps" && : >"$work/f.us" && : >"$work/p.tps" && : >"$work/p.us"
  : >"$work/f.server" && : >"$work/p.server"
  for rep in $(seq "$REPEATS"); do
    run_fathom() {
      local f="$work/fathom-c$c-r$rep" t0 c0
      c0=$(commits) t0=$(server_ticks)
      timed "$f.cpu" "$fathom" run "${common[@]}" --param steps=run --duration "${secs}s" \
        --clients "$c" --results "$f" >/dev/null 2>"$f.log"
      local ops; ops=$(grep -ho '"ops": *[0-9]*' "$f"/*/steps/*run.json | head -1 | grep -o '[0-9]*$')
      awk -v n="$ops" -v s="$secs" 'BEGIN { print n / s }' >>"$work/f.tps"
      per_xact "$f.cpu" "$ops" >>"$work/f.us"
      server_per_xact "$t0" "$(server_ticks)" "$ops" "$c0" "$(commits)" >>"$work/f.server"
    }
    run_pgbench() {
      local p="$work/pgbench-c$c-r$rep" t0 c0 n
      c0=$(commits) t0=$(server_ticks)
      timed "$p.cpu" pgbench "${pg[@]}" -c "$c" -j "$c" -T "$secs" >"$p.log" 2>&1
      awk '/^tps = / { print $3 }' "$p.log" >>"$work/p.tps"
      n=$(awk '/processed:/ { split($0, a, ": "); print a[2] }' "$p.log" | cut -d/ -f1)
      per_xact "$p.cpu" "$n" >>"$work/p.us"
      server_per_xact "$t0" "$(server_ticks)" "$n" "$c0" "$(commits)" >>"$work/p.server"
    }
    if ((rep % 2)); then run_fathom; run_pgbench; else run_pgbench; run_fathom; fi
  done
  ft=$(median <"$work/f.tps") pt=$(median <"$work/p.tps")
  fu=$(median_of "$work/f.us" 1) pu=$(median_of "$work/p.us" 1)
  fs=$(median_of "$work/f.us" 2) ps=$(median_of "$work/p.us" 2)
  awk -v c="$c" -v ft="$ft" -v pt="$pt" -v fu="$fu" -v pu="$pu" -v fs="$fs" -v ps="$ps" \
    'BEGIN { printf "%8d %10.0f %10.0f %6.2f %9.1f %9.1f %9.1f %9.1f %6.2f\n", c, ft, pt, ft / pt, fu, pu, fs, ps, (fu + fs) / (pu + ps) }'
  echo "$c $(median_of "$work/f.server" 1) $(median_of "$work/p.server" 1) $(median_of "$work/f.server" 2) $(median_of "$work/p.server" 2)" >>"$work/server"
  paste "$work/f.tps" "$work/p.tps" | awk -v c="$c" '{ printf "  %d clients, repeat %d: fathom/pgbench TPS %.3f\n", c, NR, $1 / $2 }' >>"$work/pairs"
done
cat "$work/pairs"
printf '%8s %14s %14s %16s %16s\n' clients "fa_server µs/t" "pg_server µs/t" "fa_commits/t" "pg_commits/t"
awk '{ printf "%8d %14.1f %14.1f %16.4f %16.4f\n", $1, $2, $3, $4, $5 }' "$work/server"
echo "pgbench $script, scale $SCALE, ${secs}s runs, medians of $REPEATS alternating repeats"
echo "usr/t, sys/t: µs of CPU per transaction of each tool's whole process (GNU time); ratios: fathom / pgbench"
