#!/usr/bin/env bash
# Offline checks of the Bicep templates in infra/ (no Bicep CLI, no Azure access needed).
#
#   1. syntax : every infra/**/*.bicep parses with tree-sitter-bicep (no ERROR/MISSING
#               nodes), module parameters and main.parameters.json match the templates.
#      signals: the alert rules and the availability test watch signals the app emits (metric, span and
#               attribute names from shared/telemetry; heartbeat, /api/health test, per-job silence,
#               "no success since"), and main.bicep deploys them (scripts/bicep_signals.py).
#   2. policy : checkov (--framework bicep) with the built-in and infra/checks/ custom
#               checks: no failures, no parsing errors, and every id in REQUIRED_CHECKS
#               below must PASS (so a file checkov could not parse cannot slip through).
#
# Installs its tools on first use into <repo>/.local/venv-infra (tree-sitter) and
# <repo>/.local/venv-checkov (checkov has its own venv: its pins clash with the app's).
# Idempotent; runs from any directory; exits non-zero on any failure.
# Env: INFRA_PYTHON=/path/to/python3 to choose the interpreter for the venvs.
set -euo pipefail

INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_DIR/.." && pwd)"
LOCAL_DIR="$REPO_ROOT/.local"
TS_VENV="$LOCAL_DIR/venv-infra"
CK_VENV="$LOCAL_DIR/venv-checkov"

TS_REQUIREMENTS=("tree-sitter==0.26.1" "tree-sitter-bicep==1.1.0")
CK_REQUIREMENTS=("checkov==3.3.30")

# Built-in checks that must run and pass (by purpose), plus all custom checks.
REQUIRED_CHECKS=(
  CKV_AZURE_14 CKV_AZURE_70 CKV_AZURE_153  # function app: HTTPS only
  CKV_AZURE_15 CKV_AZURE_145               # function app: minimum TLS 1.2
  CKV_AZURE_78                             # function app: FTP(S) disabled
  CKV_AZURE_72 CKV_AZURE_155               # function app: remote debugging off
  CKV_AZURE_16 CKV_AZURE_71                # function app: managed identity
  CKV_AZURE_57 CKV_AZURE_62                # function app: CORS is not '*'
  CKV_AZURE_18 CKV_AZURE_67                # function app: HTTP/2
  CKV_AZURE_3 CKV_AZURE_44                 # storage: HTTPS only, TLS 1.2
  CKV_AZURE_34                             # storage: container not public
  CKV_SCHED_1                              # custom: storage allowSharedKeyAccess false
  CKV_SCHED_2                              # custom: storage allowBlobPublicAccess false
  CKV_SCHED_3                              # custom: Application Insights DisableLocalAuth
  CKV_SCHED_4                              # custom: no secrets in app settings
  CKV_SCHED_5                              # custom: identity-based host + deployment storage
  CKV_SCHED_6                              # custom: Service Bus local auth off, TLS 1.2
)

started=$SECONDS
log() { printf '%s\n' "$*"; }

pick_python() {
  if [[ -n "${INFRA_PYTHON:-}" ]]; then printf '%s' "$INFRA_PYTHON"; return; fi
  local candidate
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
      printf '%s' "$candidate"; return
    fi
  done
  log "infra/check.sh: no Python >= 3.9 found (set INFRA_PYTHON)" >&2
  exit 1
}

# ensure_venv DIR REQUIREMENT... : create DIR and pip install the pinned requirements,
# unless DIR/.requirements already records exactly these requirements.
ensure_venv() {
  local venv="$1"; shift
  local wanted stamp="$venv/.requirements"
  wanted="$(printf '%s\n' "$@")"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]] && "$venv/bin/python" -c '' >/dev/null 2>&1; then
    return 0
  fi
  log "infra/check.sh: installing $* into ${venv#"$REPO_ROOT"/} ..."
  rm -rf "$venv"
  "$(pick_python)" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >"$venv.pip.log" 2>&1; then
    tail -n 30 "$venv.pip.log" >&2
    rm -rf "$venv"
    log "infra/check.sh: pip install failed (full log: ${venv#"$REPO_ROOT"/}.pip.log)" >&2
    exit 1
  fi
  printf '%s\n' "$wanted" >"$stamp"
}

mkdir -p "$LOCAL_DIR"
# Serialise installs when several runs start at once (e.g. make test and pytest).
exec 9>"$LOCAL_DIR/.infra-check.lock"
flock 9
ensure_venv "$TS_VENV" "${TS_REQUIREMENTS[@]}"
ensure_venv "$CK_VENV" "${CK_REQUIREMENTS[@]}"
flock -u 9

status=0

# 1. Syntax
if ! "$TS_VENV/bin/python" "$INFRA_DIR/scripts/bicep_syntax.py" "$INFRA_DIR"; then
  status=1
fi
if ! "$TS_VENV/bin/python" "$INFRA_DIR/scripts/bicep_signals.py" "$INFRA_DIR"; then
  status=1
fi

# 2. Policy
report="$(mktemp "${TMPDIR:-/tmp}/infra-checkov.XXXXXX.json")"
checkov_log="$(mktemp "${TMPDIR:-/tmp}/infra-checkov.XXXXXX.log")"
trap 'rm -f "$report" "$checkov_log"' EXIT
checkov_rc=0
(
  cd "$INFRA_DIR"
  BC_SKIP_MAPPING=TRUE CKV_SKIP_PACKAGE_UPDATE_CHECK=TRUE \
    "$CK_VENV/bin/checkov" \
      --directory "$INFRA_DIR" \
      --framework bicep \
      --external-checks-dir "$INFRA_DIR/checks" \
      --skip-download \
      --output json \
      >"$report" 2>"$checkov_log"
) || checkov_rc=$?
# checkov: 0 = clean, 1 = failed checks (judged below); anything else is a crash.
if (( checkov_rc > 1 )) || ! [[ -s "$report" ]]; then
  tail -n 30 "$checkov_log" >&2
  log "checkov: FAILED: checkov exited with $checkov_rc and no usable report"
  status=1
elif ! "$CK_VENV/bin/python" "$INFRA_DIR/scripts/checkov_report.py" "$report" "$INFRA_DIR" "${REQUIRED_CHECKS[@]}"; then
  status=1
fi

elapsed=$(( SECONDS - started ))
if (( status == 0 )); then
  log "infra/check.sh: OK (${elapsed}s)"
else
  log "infra/check.sh: FAILED (${elapsed}s)"
fi
exit "$status"
