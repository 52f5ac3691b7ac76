#!/bin/sh
# The browser host container's entrypoint (temporal-compose.yml), run as root: it hands the
# container's own cgroup to the host's user, so the host can give each browser a cgroup of its own
# beneath it (docs/browsers.md, Every browser is bounded), then runs the command as `node` with no
# capability left (none effective, none inheritable, an empty bounding set).
set -eu
cg=/sys/fs/cgroup
# Docker mounts cgroupfs read-only. In the container's own cgroup namespace the mount shows the
# container's cgroup only, so writing it reaches nothing of the machine's: refuse to go on in the
# machine's namespace.
sh "$(dirname "$0")/own-cgroup-namespace.sh"
writable() {
  mount -o remount,rw "$1"
}
if [ -f "$cg/cgroup.controllers" ]; then
  writable "$cg"
  # cgroup v2 lets no cgroup that holds processes hand its controllers down: this process (and the
  # host it becomes) moves into a leaf of the container's cgroup, which then delegates memory,
  # pids and cpu to the browsers' groups the host makes beside that leaf.
  mkdir -p "$cg/browserflow-host"
  echo $$ >"$cg/browserflow-host/cgroup.procs"
  echo '+memory +pids +cpu' >"$cg/cgroup.subtree_control"
  chown node "$cg" "$cg/cgroup.procs" "$cg/cgroup.subtree_control" "$cg/browserflow-host" "$cg/browserflow-host/cgroup.procs"
else
  # cgroup v1: one hierarchy per controller; the host writes beneath the container's group of each.
  for controller in memory pids cpu; do
    writable "$cg/$controller"
    chown node "$cg/$controller" "$cg/$controller/cgroup.procs"
  done
fi
exec setpriv --reuid=node --regid=node --init-groups --inh-caps=-all --bounding-set=-all -- "$@"
