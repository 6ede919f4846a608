# Sourced by the benchmarks: runs kiln_rate and peer_rate (functions the caller defines, each
# printing one rate) alternately RUNS times, and sets KILN_MEDIAN and PEER_MEDIAN.
#   alternate_runs RUNS UNIT WORKDIR

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

alternate_runs() {
  local runs=$1 unit=$2 work=$3
  : > "$work/kiln.rates"; : > "$work/peer.rates"
  for i in $(seq "$runs"); do
    kiln_rate >> "$work/kiln.rates"
    peer_rate >> "$work/peer.rates"
    echo "run $i: ${KILN_LABEL:-kiln} $(tail -n1 "$work/kiln.rates") $unit," \
      "${PEER_LABEL:-pytorch} $(tail -n1 "$work/peer.rates") $unit" >&2
  done
  KILN_MEDIAN=$(median < "$work/kiln.rates")
  PEER_MEDIAN=$(median < "$work/peer.rates")
}
