#!/usr/bin/env bash
# Installs what this project needs on a Debian machine that has node and npm,
# skipping whatever is already there. Idempotent; safe to run before every command.
#   provision.sh        bun (version pinned in package.json "packageManager") + packages from the lock file
#   provision.sh test   the above + the Python agent frameworks' venvs (.tools/pyfw) + chromium-headless-shell (the object browser tests, driven by playwright-core) + Node 22, Claude Code and Gemini CLI from npm and the Python SDK mcp 2.x (client matrix), Ceph RGW, nginx (scale-out test), redis-server (limits shared by replicas), prometheus (the metrics test), kubectl and catatonit (the Kubernetes manifests under podman kube play), ruby (formula check), podman + runc (container test) and tmux (Claude Code's interactive session)
#   provision.sh bench  the above minus ruby/podman + rclone and awscli (the bench's reference clients)
#   provision.sh pyfw   bun + packages, and the Python agent frameworks' venvs only
# PROVISION_LATER=pyfw leaves the frameworks' venvs (over a minute of the machine's time) to `provision.sh pyfw`, which
# the test runner then runs beside the first tests (scripts/test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(node -p 'require("./package.json").packageManager.split("@")[1]')

if ! command -v bun >/dev/null || [ "$(bun --version)" != "$want" ]; then
  echo "provision: installing bun $want from npm" >&2
  npm install -g --no-fund --no-audit --allow-scripts=bun "bun@$want" >&2 2>/dev/null \
    || npm install -g --no-fund --no-audit "bun@$want" >&2
fi
bun install --frozen-lockfile >&2

# Both Python sections make venvs: python3-venv first, once, so they do not meet at apt-get's lock.
if { [ "${1:-}" = test ] || [ "${1:-}" = pyfw ]; } && ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >&2
fi

# The sections below do not depend on one another: they run at once, each into a log of its own that is printed when
# it fails (the frameworks' venvs alone take over a minute; the others then cost nothing more).
mkdir -p .tmp
pids=(); names=()
section() { local name=$1; shift; ( "$@" ) >".tmp/provision-$name.log" 2>&1 & pids+=($!); names+=("$name"); }

# Node 22 for the client-matrix tests (the AI SDK, Mastra and others need it), from npm like bun; the machine's node stays as it is.
node22() {
  echo "provision: installing Node 22 from npm into .tools/node22" >&2
  npm install --no-fund --no-audit --prefix .tools/node22 node@22 >&2
}
if [ "${1:-}" = test ] && [ ! -x .tools/node22/node_modules/node/bin/node ]; then section node22 node22; fi

# The agent CLIs of the client tests, from npm, pinned: Claude Code (its native binary comes in a platform package) and Gemini CLI.
agents=("@anthropic-ai/claude-code@2.1.330" "@google/gemini-cli@0.61.0")
agent_clis() {
  echo "provision: installing ${agents[*]} from npm into .tools/agents" >&2
  npm install --no-fund --no-audit --prefix .tools/agents "${agents[@]}" >&2
}
if [ "${1:-}" = test ] && { [ ! -x .tools/agents/node_modules/@anthropic-ai/claude-code-linux-x64/claude ] || [ ! -f .tools/agents/node_modules/@google/gemini-cli/package.json ]; }; then
  section agents agent_clis
fi

# The official Python SDK (mcp 2.x), what Python agent frameworks are built on, in a venv of its own, pinned.
# These machines carry a local package index (no PyPI): use it when it is there, so nothing waits on an unreachable PyPI.
# A venv is judged by whether its package imports, not by its python being there: an install cut half-way (the network
# lost) leaves a python without the package, and is made again here.
py_mcp() {
  echo "provision: creating .tools/py-mcp with the Python SDK mcp 2.3.0" >&2
  rm -rf .tools/py-mcp
  python3 -m venv .tools/py-mcp >&2
  index=(); [ -d /opt/pypi/simple ] && index=(--index-url file:///opt/pypi/simple); [ -d /opt/pypi-more/simple ] && index+=(--extra-index-url file:///opt/pypi-more/simple)
  .tools/py-mcp/bin/pip install -q "${index[@]}" mcp==2.3.0 >&2 2>/dev/null || .tools/py-mcp/bin/pip install -q "${index[@]}" mcp==2.3.0 >&2
}
if [ "${1:-}" = test ] && ! .tools/py-mcp/bin/python -c "import mcp" 2>/dev/null; then section py-mcp py_mcp; fi

# The Python MCP agent frameworks (LangChain, OpenAI Agents, Pydantic AI, smolagents), one venv each, pinned. These machines
# reach no PyPI: ../shared/pyfw/setup.sh builds them offline from the local wheel mirror and the frameworks' source trees.
# A newcomer's clone has no ../shared: there the same versions come from PyPI.
pyfw=.tools/pyfw
imports() { $pyfw/venv-lc/bin/python -c "import langchain_mcp_adapters" && $pyfw/venv-oai/bin/python -c "import agents" && $pyfw/venv-pai/bin/python -c "import pydantic_ai" && $pyfw/venv-smol/bin/python -c "import smolagents"; }
python_frameworks() {
  rm -rf $pyfw
  # pip compiles every installed module to bytecode; the tests import a fraction of them, compiled as they load
  # (PIP_COMPILE=false is pip's --no-compile: ~12 s less of the machine's CPU for the four venvs).
  export PIP_COMPILE=false PIP_DISABLE_PIP_VERSION_CHECK=1
  if [ -f ../shared/pyfw/setup.sh ]; then
    echo "provision: building the Python frameworks' venvs from ../shared/pyfw into $pyfw" >&2
    bash ../shared/pyfw/setup.sh "$PWD/$pyfw" >&2
  else
    echo "provision: installing the Python frameworks from PyPI into $pyfw" >&2
    for v in lc oai pai smol; do [ -x $pyfw/venv-$v/bin/python ] || python3 -m venv $pyfw/venv-$v >&2; done
    $pyfw/venv-lc/bin/pip install -q langchain-mcp-adapters==0.3.2 langchain-openai==1.6.6 langchain==1.4.2 >&2
    $pyfw/venv-oai/bin/pip install -q openai-agents==0.22.0 >&2
    $pyfw/venv-pai/bin/pip install -q "pydantic-ai-slim[mcp,openai,anthropic]==2.33.0" >&2
    $pyfw/venv-smol/bin/pip install -q "smolagents[mcp,openai]==1.26.0" mcpadapt==0.1.20 >&2
  fi
}
if { [ "${1:-}" = pyfw ] || { [ "${1:-}" = test ] && [ "${PROVISION_LATER:-}" != pyfw ]; }; } && ! imports 2>/dev/null; then
  section pyfw python_frameworks
fi

if [ "${1:-}" = test ] || [ "${1:-}" = bench ]; then
  need=()
  for tool in radosgw ceph-mon ceph-osd; do command -v "$tool" >/dev/null || need+=("$tool"); done
  [ "${1:-}" = test ] && { [ -x /usr/sbin/nginx ] || need+=(nginx-light); [ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell); command -v openssl >/dev/null || need+=(openssl); command -v ruby >/dev/null || need+=(ruby); command -v podman >/dev/null || need+=(podman); command -v runc >/dev/null || need+=(runc); command -v buildah >/dev/null || need+=(buildah); [ -x /usr/bin/redis-server ] || need+=(redis-server); command -v tmux >/dev/null || need+=(tmux); [ -x /usr/bin/prometheus ] || need+=(prometheus); command -v catatonit >/dev/null || need+=(catatonit); command -v kubectl >/dev/null || need+=(kubectl); }
  [ "${1:-}" = bench ] && { command -v rclone >/dev/null || need+=(rclone); [ -x /usr/bin/aws ] || need+=(awscli); [ -x /usr/sbin/nginx ] || need+=(nginx-light); [ -x /usr/bin/redis-server ] || need+=(redis-server); }
  debian() {
    echo "provision: installing ${need[*]} with apt-get" >&2
    sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
      "${need[@]}" >&2
  }
  if [ ${#need[@]} -gt 0 ]; then section apt debian; fi
fi

failed=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then grep -h '^provision:' ".tmp/provision-${names[$i]}.log" >&2 || true
  else echo "provision: ${names[$i]} failed; its log (.tmp/provision-${names[$i]}.log):" >&2; cat ".tmp/provision-${names[$i]}.log" >&2; failed=1; fi
done
exit $failed
