#!/bin/sh
# Exits 0 when this process has a cgroup namespace of its own (every line of its cgroup file, by
# default /proc/self/cgroup, names the root `/`), else says why and exits 1. The browser host's
# container entrypoint asks it before it makes cgroupfs writable: in the machine's own namespace
# that mount would reach every cgroup of the machine, not the container's alone.
file="${1:-/proc/self/cgroup}"
outside="$(grep -v ':/$' "$file" | grep -v '^[0-9]*:[^:]*:$' || true)"
if [ -n "$outside" ]; then
  echo "browser host: this container shares the machine's cgroup namespace ($(echo "$outside" | head -1)); give it its own (Compose v2: \`cgroup: private\`; docker run: \`--cgroupns=private\`; the default of Docker 20.10+ on a cgroup v2 machine), so that its browsers' limits can be set (docs/browsers.md, Every browser is bounded)" >&2
  exit 1
fi
