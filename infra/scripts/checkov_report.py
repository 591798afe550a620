"""Judge checkov's JSON report for infra/ (run by infra/check.sh).

checkov exits 0 when it cannot parse a file, and silently drops a custom check that fails
to import, so a clean exit code proves little. This script fails (exit 1) when:
  * the report has no Bicep results at all, or any parsing error;
  * any check failed;
  * a required check id did not PASS at least once (it did not run, e.g. because the file
    it applies to was not parsed, or it was skipped);
  * a declared site, plan, storage account, Application Insights component or Service Bus
    namespace has no result at all (its file was not analysed);
  * a skip has no reason, or its check id is not explained in infra/README.md;
  * azure.yaml does not deploy this repository as a Python function app from infra/.

Usage: python checkov_report.py REPORT.json INFRA_DIR REQUIRED_ID...
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

# `resource <name> '<type>@<version>' =` (an `existing` reference has the keyword before `=`).
RESOURCE_DECL = re.compile(r"^\s*resource\s+(\w+)\s+'([^'@]+)@[^']*'\s*=", re.MULTILINE)
# Types the required checks look at: each declaration of one of them must have results.
ANALYSED_TYPES = {
    "Microsoft.Web/sites",
    "Microsoft.Web/serverfarms",
    "Microsoft.Storage/storageAccounts",
    "Microsoft.Insights/components",
    "Microsoft.ServiceBus/namespaces",
}


def load_bicep_report(path: Path) -> dict[str, Any] | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    reports = data if isinstance(data, list) else [data]
    for report in reports:
        if isinstance(report, dict) and report.get("check_type") == "bicep":
            return report
    return None


def describe(record: dict[str, Any]) -> str:
    lines = record.get("file_line_range") or ["?", "?"]
    return (
        f"{record.get('check_id')} {record.get('resource')} "
        f"(infra{record.get('file_path')}:{lines[0]}-{lines[1]}): {record.get('check_name')}"
    )


def check_azure_yaml(path: Path) -> list[str]:
    if not path.is_file():
        return [f"{path.name}: missing"]
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        return [f"{path.name}: not valid YAML: {exc}"]
    problems: list[str] = []
    services = doc.get("services") if isinstance(doc, dict) else None
    functions = [
        (name, svc) for name, svc in (services or {}).items() if isinstance(svc, dict) and svc.get("host") == "function"
    ]
    if not functions:
        problems.append(f"{path.name}: no service with host: function")
    for name, svc in functions:
        if svc.get("language") not in ("python", "py"):
            problems.append(f"{path.name}: service {name!r} must have language: python")
        if str(svc.get("project", "")).rstrip("/") not in (".", "./"):
            problems.append(f"{path.name}: service {name!r} must have project: . (the repository root)")
    infra = doc.get("infra", {}) if isinstance(doc, dict) else {}
    if str(infra.get("path", "infra")).rstrip("/") != "infra" or infra.get("module", "main") != "main":
        problems.append(f"{path.name}: infra must be path: infra, module: main")
    if infra.get("provider", "bicep") != "bicep":
        problems.append(f"{path.name}: infra.provider must be bicep")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    report_path, infra_dir, required = Path(argv[1]), Path(argv[2]).resolve(), argv[3:]
    problems: list[str] = []

    report = load_bicep_report(report_path)
    if report is None:
        print("checkov: FAILED: no Bicep results in the report (were any .bicep files scanned?)")
        return 1
    summary = report.get("summary", {})
    results = report.get("results", {})
    passed = results.get("passed_checks", [])
    failed = results.get("failed_checks", [])
    skipped = results.get("skipped_checks", [])
    parse_errors = results.get("parsing_errors", [])

    if summary.get("parsing_errors", 0) or parse_errors:
        for name in parse_errors or ["(unnamed file)"]:
            problems.append(f"parsing error: checkov could not parse {name}")
    for record in failed:
        problems.append(f"FAILED {describe(record)}")

    passed_ids = {r.get("check_id") for r in passed}
    for check_id in required:
        if check_id not in passed_ids:
            problems.append(f"required check {check_id} did not pass (missing from the passed results)")

    readme = (infra_dir / "README.md").read_text(encoding="utf-8") if (infra_dir / "README.md").is_file() else ""
    for record in skipped:
        comment = str(record.get("check_result", {}).get("suppress_comment") or "").strip()
        if not comment or comment.lower() == "no comment provided":
            problems.append(f"skip without a reason: {describe(record)}")
        if record.get("check_id") not in readme:
            problems.append(f"skip of {record.get('check_id')} is not explained in infra/README.md")

    seen = {(str(r.get("file_path", "")).lstrip("/"), r.get("resource")) for r in passed + failed + skipped}
    for path in sorted(infra_dir.rglob("*.bicep")):
        rel = path.relative_to(infra_dir).as_posix()
        for name, rtype in RESOURCE_DECL.findall(path.read_text(encoding="utf-8")):
            if rtype in ANALYSED_TYPES and (rel, f"{rtype}.{name}") not in seen:
                problems.append(f"no checkov result for {rtype} {name!r} in infra/{rel}: it was not analysed")

    problems.extend(check_azure_yaml(infra_dir.parent / "azure.yaml"))

    for problem in problems:
        print(problem)
    if skipped:
        ids = ", ".join(sorted({str(r.get("check_id")) for r in skipped}))
        print(f"checkov: skipped inline (reasons in infra/README.md): {ids}")
    status = "FAILED" if problems else "OK"
    print(
        f"checkov: {status}: {len(passed)} passed / {len(failed)} failed / {len(skipped)} skipped, "
        f"{summary.get('parsing_errors', len(parse_errors))} parsing errors, "
        f"{len(set(required) & passed_ids)}/{len(set(required))} required checks passed"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
