# Sourced by the benchmarks that count instructions (c-bench.sh
# --instructions, wire-bench.sh): per_statement COUNT A B reads lines
# `name|N|SQL` on stdin and prints, for each, the user-space instructions
# per statement under A and under B and their ratio (B / A). COUNT is a
# function `COUNT VARIANT ITERATIONS SQL` that prints the instructions of a
# whole run (callgrind's "refs"); the figure is (run of 3N - run of N) / 2N,
# so that start-up and connecting cancel out.

callgrind_refs() { # COMMAND... -> the instructions callgrind counted
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,
}

per_statement() { # COUNT A B < statements
  local count=$1 a=$2 b=$3 name n sql v lo hi
  printf '%-28s %14s %14s %8s\n' statement "$a" "$b" ratio
  while IFS='|' read -r name n sql; do
    local per=()
    for v in "$a" "$b"; do
      lo=$("$count" "$v" "$n" "$sql")
      hi=$("$count" "$v" $((3 * n)) "$sql")
      per+=($(( (hi - lo) / (2 * n) )))
    done
    printf '%-28s %14s %14s %8s\n' "$name" "${per[0]}" "${per[1]}" \
      "$(awk "BEGIN { printf \"%.2fx\", ${per[1]} / ${per[0]} }")"
  done
}
