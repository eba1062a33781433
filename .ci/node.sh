# Sourced by .ci/run (and by developers who want `node` itself to be Node 24 in their shell): puts Node 24
# first on PATH. bin/node24.js decides which Node that is (the running one when it is 24 or newer, else
# Node 24 fetched once from the npm registry into .tools/); package.json's scripts use the same file.
tokend_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tokend_node_bin=$(node "$tokend_root/bin/node24.js" --bin-dir) || return 1
export PATH="$tokend_node_bin:$PATH"
