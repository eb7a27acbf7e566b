#!/bin/bash
# Stands in for mmdb_sample in the tests of check_sample.cmake's CPU-against-GPU rule: prints two
# decisions for each of 8 characters, the same on the CPU and the GPU except where the case
# (first argument) changes the GPU's.
#   same        the same decisions
#   near_tie    character 1's first winner is another frame at the same cost
#   other_cost  character 1's first winner is another frame at a cost 5 % higher
#   many_ties   characters 0, 1 and 2 start at near ties
#   missing     the GPU prints one decision fewer for character 1
set -eu
case_name=$1
gpu=0
for arg in "$@"; do [[ $arg == --gpu ]] && gpu=1; done
for c in 0 1 2 3 4 5 6 7; do
  first="10$c" cost="4.001"
  if ((gpu)); then
    case $case_name in
      near_tie) ((c == 1)) && first=109 ;;
      other_cost) ((c == 1)) && first=109 && cost="4.201" ;;
      many_ties) ((c <= 2)) && first=109 ;;
    esac
  fi
  printf "t=   1.00 s  char  %d  jump to global frame    %s (clip 'walk' local frame   %s)  cost    %s  [0.1 s timer]\n" \
    "$c" "$first" "$first" "$cost"
  [[ $gpu == 1 && $case_name == missing && $c == 1 ]] && continue
  printf "t=   2.00 s  char  %d  jump to global frame    20%d (clip 'walk' local frame   20%d)  cost    5.001  [0.1 s timer]\n" \
    "$c" "$c" "$c"
done
echo "summary: 16 searches (pruned), 1.00 jumps/s"
