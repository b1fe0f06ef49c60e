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
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli
  fathom=$CARGO_TARGET_DIR/release/fathom
}
