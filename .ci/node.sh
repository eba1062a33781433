# Sourced by .ci/run after `npm ci` (and by developers who want `node` itself to be Node 24 in their shell):
# puts the checkout's node_modules/.bin first on PATH, as npm does for its scripts. There `npm ci` installed
# Node 24 (the optional dependency node-<platform>-<arch>, pinned by the lockfile) where the registry has
# it for this platform; elsewhere `node` stays the system's, which must then be Node 24.
tokend_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$tokend_root/node_modules/.bin:$PATH"
